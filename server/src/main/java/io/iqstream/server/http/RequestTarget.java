package io.iqstream.server.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A request's target ({@code path?query}), every part checked for well-formed percent-encoding before anything
 * routes on it. The raw (undecoded) path is kept for routing by segment, so {@code /v1/runs/a%2Fb/events} names
 * the run {@code a/b} (a bad run id) rather than a deeper path. Immutable.
 *
 * @param rawPath the path as sent, up to {@code ?} or {@code #}
 * @param path the whole path decoded (for fixed paths such as {@code /healthz})
 * @param parameters the query's names and values, decoded ({@code +} is a space)
 */
public record RequestTarget(String rawPath, String path, Map<String, List<String>> parameters) {

    /** Parses {@code uri}; null when any part of it is malformed (the caller answers 400 {@code bad_request}). */
    public static RequestTarget parse(String uri) {
        int end = uri.indexOf('#');
        if (end < 0) {
            end = uri.length();
        }
        int q = uri.indexOf('?');
        int pathEnd = q >= 0 && q < end ? q : end;
        String rawPath = uri.substring(0, pathEnd);
        String path = PercentDecoder.decode(rawPath, false);
        if (path == null) {
            return null;
        }
        Map<String, List<String>> parameters = new HashMap<>();
        int i = pathEnd + 1;
        while (i <= end && pathEnd < end) {
            int amp = uri.indexOf('&', i);
            if (amp < 0 || amp > end) {
                amp = end;
            }
            if (amp > i) {
                int eq = uri.indexOf('=', i);
                int nameEnd = eq >= 0 && eq < amp ? eq : amp;
                String name = PercentDecoder.decode(uri, i, nameEnd, true);
                String value = nameEnd == amp ? "" : PercentDecoder.decode(uri, nameEnd + 1, amp, true);
                if (name == null || value == null) {
                    return null;
                }
                parameters.computeIfAbsent(name, k -> new ArrayList<>(1)).add(value);
            }
            i = amp + 1;
        }
        return new RequestTarget(rawPath, path, parameters);
    }

    /** Every value of query parameter {@code name}, in order, or null when it is absent. */
    public List<String> parameters(String name) {
        return parameters.get(name);
    }

    /** The first value of query parameter {@code name}, or null. */
    public String parameter(String name) {
        List<String> values = parameters.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}

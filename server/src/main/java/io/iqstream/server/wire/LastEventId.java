package io.iqstream.server.wire;

import io.netty.handler.codec.http.HttpRequest;

/**
 * The resume point a subscriber asks for (in package {@code wire}, below {@code http}: the publish path checks a
 * publisher's {@code Last-Event-ID} with it too): the {@code Last-Event-ID} header, else the {@code lastEventId} query
 * parameter, else none (0). A valid id is a non-negative decimal integer no larger than {@link #MAX}; anything
 * else is refused 400 {@code bad_last_event_id}. Computed in {@code long} so no text overflows. Stateless.
 */
public final class LastEventId {
    /** Largest id a run can hold (ids are 1-based {@code int}s in the log). */
    public static final long MAX = Integer.MAX_VALUE;
    /** The query parameter a browser's EventSource can carry it in (it cannot set the header on a first connect). */
    public static final String QUERY_PARAMETER = "lastEventId";
    /** {@link #parse} result for text that is not a valid id. */
    public static final long MALFORMED = -1;

    private LastEventId() {}

    /**
     * The request's resume point, {@code queryValue} being its {@link #QUERY_PARAMETER} (or null); 0 when none is
     * given; {@link #MALFORMED} when it is not a valid id.
     */
    public static long of(HttpRequest request, String queryValue) {
        String text = request.headers().get("Last-Event-ID");
        if (text == null || text.isBlank()) {
            text = queryValue;
        }
        return parse(text);
    }

    /** 0 for null or blank; the id for surrounding-whitespace-trimmed decimal digits up to {@link #MAX}. */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        String t = text.trim();
        if (t.isEmpty()) {
            return MALFORMED; // only control characters: not blank to isBlank(), nothing left to trim() (fuzzer)
        }
        long v = 0;
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if (c < '0' || c > '9') {
                return MALFORMED;
            }
            v = v * 10 + (c - '0');
            if (v > MAX) {
                return MALFORMED;
            }
        }
        return v;
    }
}

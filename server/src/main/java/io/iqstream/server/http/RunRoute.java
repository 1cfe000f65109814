package io.iqstream.server.http;

/**
 * A request path under {@code /v1/runs/}: the run id and whether it addresses the run's event stream
 * ({@code /v1/runs/{id}/events}) or the run itself ({@code /v1/runs/{id}}). Immutable.
 */
public record RunRoute(String runId, boolean events) {
    private static final String PREFIX = "/v1/runs/";
    private static final String EVENTS = "/events";

    /**
     * Parses a raw (still percent-encoded) path by segment, then decodes the id segment, so an encoded slash
     * stays inside the id ({@code a%2Fb} is the id {@code a/b}, refused as a bad id). Null when it is not a run
     * path at all (404) or the id segment is not well-formed. The id is not validated here.
     */
    public static RunRoute parse(String rawPath) {
        if (!rawPath.startsWith(PREFIX)) {
            return null;
        }
        String rest = rawPath.substring(PREFIX.length());
        boolean events = rest.endsWith(EVENTS);
        if (events) {
            rest = rest.substring(0, rest.length() - EVENTS.length());
        } else if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        if (rest.indexOf('/') >= 0) {
            return null;
        }
        String id = PercentDecoder.decode(rest, false);
        return id == null ? null : new RunRoute(id, events);
    }
}

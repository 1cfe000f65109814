package io.iqstream.server.http;

/**
 * A request path under {@code /v1/runs/}: the run id and whether it addresses the run's event stream
 * ({@code /v1/runs/{id}/events}) or the run itself ({@code /v1/runs/{id}}). Immutable.
 */
public record RunRoute(String runId, boolean events) {
    private static final String PREFIX = "/v1/runs/";

    /** Parses a decoded path; null when it is not a run path at all (404). The id is not validated here. */
    public static RunRoute parse(String path) {
        if (!path.startsWith(PREFIX)) {
            return null;
        }
        String rest = path.substring(PREFIX.length());
        if (rest.endsWith("/events")) {
            String id = rest.substring(0, rest.length() - "/events".length());
            return id.indexOf('/') >= 0 ? null : new RunRoute(id, true);
        }
        if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        return rest.indexOf('/') >= 0 ? null : new RunRoute(rest, false);
    }
}

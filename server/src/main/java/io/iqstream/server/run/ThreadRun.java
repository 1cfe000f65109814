package io.iqstream.server.run;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Comparator;

/**
 * One held run of a thread as the thread index saw it at one instant: immutable, so a worker can hand it to the
 * loop that answers {@code GET /v1/threads/{threadId}/runs}.
 *
 * @param runId the run's id
 * @param ended whether the run has ended (RUN_FINISHED, RUN_ERROR, or a server-made end)
 * @param events the run's event count, which is also its last event id
 * @param startedAtMs when its RUN_STARTED arrived, epoch ms
 * @param endedAtMs when it ended, epoch ms; 0 while running
 */
public record ThreadRun(String runId, boolean ended, int events, long startedAtMs, long endedAtMs) {
    /** Listing order, the same on every worker and every node: oldest first, ties by run id. */
    public static final Comparator<ThreadRun> ORDER =
            Comparator.comparingLong(ThreadRun::startedAtMs).thenComparing(ThreadRun::runId);

    /** Where the next page starts: the cursor of the last run of this one. */
    public Cursor cursor() {
        return new Cursor(startedAtMs, runId);
    }

    /**
     * A position in a thread's listing, the {@code after} of the next page: opaque to clients (base64url of
     * {@code <startedAtMs>.<runId>}). Immutable.
     */
    public record Cursor(long startedAtMs, String runId) {
        /** Whether a run started at {@code atMs} with id {@code id} comes after this position. */
        public boolean isBefore(long atMs, String id) {
            return atMs > startedAtMs || atMs == startedAtMs && id.compareTo(runId) > 0;
        }

        public String encode() {
            return Base64.getUrlEncoder().withoutPadding()
                    .encodeToString((startedAtMs + "." + runId).getBytes(StandardCharsets.UTF_8));
        }

        /** The cursor {@code text} encodes, or null when it is not one. */
        public static Cursor decode(String text) {
            if (text == null || text.isEmpty() || text.length() > 2048) {
                return null;
            }
            try {
                String s = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
                int dot = s.indexOf('.');
                if (dot <= 0) {
                    return null;
                }
                return new Cursor(Long.parseLong(s.substring(0, dot)), s.substring(dot + 1));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }
}

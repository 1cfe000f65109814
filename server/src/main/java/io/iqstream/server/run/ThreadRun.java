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
 * @param startedAtMicros when its RUN_STARTED arrived: a {@link StartClock} stamp, epoch microseconds
 * @param endedAtMs when it ended, epoch ms; 0 while running
 */
public record ThreadRun(String runId, boolean ended, int events, long startedAtMicros, long endedAtMs) {
    /**
     * Listing order, the same on every worker and every node: oldest first by start stamp (strictly increasing on
     * a node, so runs started one after the other there keep that order), ties (runs of two nodes in one
     * microsecond) by run id.
     */
    public static final Comparator<ThreadRun> ORDER =
            Comparator.comparingLong(ThreadRun::startedAtMicros).thenComparing(ThreadRun::runId);

    /** When its RUN_STARTED arrived, epoch ms: the listing's {@code startedAt}. */
    public long startedAtMs() {
        return Math.floorDiv(startedAtMicros, 1000);
    }

    /** Where the next page starts: the cursor of the last run of this one. */
    public Cursor cursor() {
        return new Cursor(startedAtMicros, runId);
    }

    /**
     * A position in a thread's listing, the {@code after} of the next page: opaque to clients (base64url of
     * {@code u<startedAtMicros>.<runId>}). Immutable.
     */
    public record Cursor(long startedAtMicros, String runId) {
        /** Whether a run stamped {@code atMicros} with id {@code id} comes after this position. */
        public boolean isBefore(long atMicros, String id) {
            return atMicros > startedAtMicros || atMicros == startedAtMicros && id.compareTo(runId) > 0;
        }

        public String encode() {
            return Base64.getUrlEncoder().withoutPadding()
                    .encodeToString(("u" + startedAtMicros + "." + runId).getBytes(StandardCharsets.UTF_8));
        }

        /**
         * The cursor {@code text} encodes, or null when it is not one. A cursor of a build before microsecond
         * stamps ({@code <startedAtMs>.<runId>}, no {@code u}) is read as the start of its millisecond: a page
         * asked for with it across an upgrade may repeat runs of that millisecond, and loses none.
         */
        public static Cursor decode(String text) {
            if (text == null || text.isEmpty() || text.length() > 2048) {
                return null;
            }
            try {
                String s = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
                boolean micros = s.startsWith("u");
                int dot = s.indexOf('.');
                if (dot <= (micros ? 1 : 0)) {
                    return null;
                }
                long at = Long.parseLong(s.substring(micros ? 1 : 0, dot));
                return new Cursor(micros ? at : Math.multiplyExact(at, 1000L), s.substring(dot + 1));
            } catch (IllegalArgumentException | ArithmeticException e) {
                return null;
            }
        }
    }
}

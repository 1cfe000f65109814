package io.iqstream.server.stream;

/**
 * A Durable Streams request whose answer is not written yet when {@link StreamExchange#serve} returns: a live read
 * ({@link LiveRead}), or a write waiting for its record to be durable. The connection reads no next request until
 * it is done, so answers go out in request order.
 *
 * <p>Confined to the stream's owner worker.
 */
public interface StreamAnswer {
    /** Whether the answer is complete (the connection may carry the next request). */
    boolean isDone();

    /** The connection closed (or failed). */
    void closed();

    /**
     * Whether this is a write's answer waiting for its record to be durable (not a live read): a request pipelined
     * behind it is held until {@link #whenDone}, not refused.
     */
    default boolean awaitsStorage() {
        return false;
    }

    /**
     * Calls {@code then} once the answer is written (at once when it is), with whether the connection is kept
     * alive; only for an answer that {@link #awaitsStorage}.
     */
    default void whenDone(java.util.function.Consumer<Boolean> then) {
        then.accept(false);
    }

    /** A live read is cut when its connection stays unwritable this long; nothing for other answers. */
    default void cutAfterLagMs(long lagMs) {
    }

    /** The connection's writability changed: a live read writes on or stops; nothing for other answers. */
    default void writabilityChanged() {
    }

    /**
     * Runs {@code release} (which gives back the request body's budget charge) once this answer holds the body no
     * more: at once for an answer that never held it, after the load for a request on a cold stream ({@link
     * ColdLoad}), which holds the body while the stream's file is read.
     */
    default void whenBodyReleased(Runnable release) {
        release.run();
    }
}

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

    /** A live read is cut when its connection stays unwritable this long; nothing for other answers. */
    default void cutAfterLagMs(long lagMs) {
    }

    /** The connection's writability changed: a live read writes on or stops; nothing for other answers. */
    default void writabilityChanged() {
    }
}

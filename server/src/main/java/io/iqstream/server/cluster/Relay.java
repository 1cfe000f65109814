package io.iqstream.server.cluster;

import io.netty.handler.codec.http.HttpContent;
import java.util.function.Consumer;

/**
 * What {@code http/HttpRequestHandler} talks to while a run request is served by another node:
 * the body's chunks go in, the other node's answer comes back on its own. Confined to the connection's loop (the
 * run's worker loop).
 */
public interface Relay {
    /** {@link Forwarder#route} result: the decision needs a lookup at peers; the answer comes later. */
    Relay PENDING = new Answered();
    /** {@link Forwarder#route} result: the request was answered in place (a peer's lookup). */
    Relay ANSWERED = new Answered();

    /** A chunk of the client's request body. Takes ownership of {@code content}. */
    void onContent(HttpContent content);

    /** End of one read from the client: flush what went to the peer. */
    void onReadComplete();

    /** The client's connection became writable (or not): the peer's reading follows it. */
    void writabilityChanged();

    /** The client's connection closed. */
    void clientClosed();

    /** True once the answer has been relayed whole (or the relay failed and closed). */
    boolean isDone();

    /**
     * Runs {@code then} on the connection's loop once {@link #isDone} (at once if it is), with whether the client's
     * connection is kept alive after the answer: a request pipelined behind this one waits for it.
     */
    void whenDone(Consumer<Boolean> then);

    /** A relay that has nothing to do. */
    final class Answered implements Relay {
        @Override
        public void onContent(HttpContent content) {
            content.release();
        }

        @Override
        public void onReadComplete() {
        }

        @Override
        public void writabilityChanged() {
        }

        @Override
        public void clientClosed() {
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public void whenDone(Consumer<Boolean> then) {
            then.accept(true);
        }
    }
}

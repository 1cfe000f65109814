package io.iqstream.server.metrics;

/**
 * What one idle reader's connection holds in the server's memory: the estimate behind
 * {@code iqstream_connection_idle_reader_bytes}. It is the sum of the live heap objects such a connection holds
 * (the Netty channel, its socket and addresses, its pipeline with the request path dropped, the router, the
 * connection timers and the reader itself), measured with a heap histogram of a server holding thousands of idle
 * readers ({@code scripts/idle-readers.py --histogram}); the largest of the three kinds (AG-UI SSE, Durable Streams
 * SSE and long-poll) is taken. Kernel socket buffers are not in it (they are the kernel's, not the process's).
 * {@code IdleReadersTest} checks it against the heap a server actually grows by for thousands of readers.
 */
public final class ConnectionFootprint {
    /** Bytes of server memory one idle reader's connection holds (heap; off-heap is below the measurement's noise). */
    public static final long IDLE_READER_BYTES = 2048;

    private ConnectionFootprint() {
    }
}

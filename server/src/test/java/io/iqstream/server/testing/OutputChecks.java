package io.iqstream.server.testing;

import java.util.regex.Pattern;

/**
 * What a spawned server's output must never contain, named once for every test that starts one: an
 * out-of-memory error of either kind (the JVM's {@code java.lang.OutOfMemoryError}, Netty's
 * {@code io.netty.util.internal.OutOfDirectMemoryError}, which does not contain the first name) and a report of
 * Netty's leak detector ({@code LEAK: ByteBuf.release() was not called ...}).
 */
public final class OutputChecks {
    /** Either kind of out-of-memory error. */
    public static final Pattern OUT_OF_MEMORY = Pattern.compile("OutOfMemoryError|OutOfDirectMemoryError");
    /** A leak report of Netty's {@code ResourceLeakDetector}. */
    public static final Pattern LEAK = Pattern.compile("LEAK:");

    private OutputChecks() {}
}

package io.iqstream.server.admission;

import io.iqstream.server.config.ConfigException;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.Quantities;
import io.netty.util.internal.PlatformDependent;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * How memory is split: the JVM's heap (objects, indexes, connections), its direct memory (the pooled buffers that
 * hold event logs and socket writes), headroom for the JVM itself (metaspace, code, threads), and the budget of
 * event logs inside direct memory. The launcher asks for this plan before starting the JVM ({@link #main}); the
 * server applies the budget part. Immutable.
 */
public record MemoryPlan(long limitBytes, String source, long heapBytes, long directBytes, long headroomBytes,
        long budgetBytes) {
    /** The share of direct memory given to event logs; the rest serves socket buffers and pool slack. */
    public static final double LOG_SHARE_OF_DIRECT = 0.75;
    private static final long MIB = 1L << 20;
    private static final long KIB = 1L << 10;
    /**
     * Direct memory one connection may hold outside the budget at its worst: a request head being decoded (8 KiB
     * line + 16 KiB headers, the decoder's limits in {@code http.IqStreamInitializer}) and one 64 KiB read or body
     * chunk. Its pending writes are slices of log memory the budget already counts. A bound: measured, a connection
     * holding a maximal head holds no direct memory at rest ({@code MemoryFootprintTest}).
     */
    public static final long CONNECTION_DIRECT_BYTES = (8 + 16 + 64) * KIB;
    /**
     * Heap one connection may hold at its worst: the decoder's text of a maximal head (Java chars, 2 bytes each,
     * kept for the connection's life) plus about 8 KiB of channel, pipeline, handlers and a subscriber's cursor.
     * A bound: measured, 400 connections with maximal heads hold 35 KiB of heap each ({@code MemoryFootprintTest},
     * which fails when one holds more; docs/OPERATIONS.md has the command and the figures).
     */
    public static final long CONNECTION_HEAP_BYTES = 2 * (8 + 16) * KIB + 8 * KIB;
    /**
     * The collector the launchers start the server with (docs/OPERATIONS.md, "Garbage collector", has the
     * measurements): G1. The heap share above is sized for it; a concurrent collector (ZGC, Shenandoah) needs more
     * room beside the same live set.
     */
    public static final String DEFAULT_COLLECTOR = "-XX:+UseG1GC";
    /** A JVM option that selects a collector ({@code -XX:+UseZGC}, {@code -XX:+UseShenandoahGC}, ...). */
    private static final Pattern COLLECTOR_OPTION = Pattern.compile("(^|\\s)-XX:\\+Use\\w+GC(\\s|$)");

    /** The plan for a memory limit (the container's), or for an explicit budget when {@code budgetBytes > 0}. */
    public static MemoryPlan forLimit(long limitBytes, String source, long budgetBytes) {
        long headroom = 96 * MIB + limitBytes / 20;
        long heap = clamp(limitBytes / 5, 48 * MIB, 4096 * MIB);
        long direct;
        long budget;
        if (budgetBytes > 0) {
            direct = (long) (budgetBytes / LOG_SHARE_OF_DIRECT) + 16 * MIB;
            heap = clamp(budgetBytes / 3, 48 * MIB, 4096 * MIB);
            budget = budgetBytes;
        } else {
            direct = Math.max(32 * MIB, limitBytes - heap - headroom);
            budget = (long) (direct * LOG_SHARE_OF_DIRECT);
        }
        return new MemoryPlan(limitBytes, source, heap, direct, headroom, budget);
    }

    /** The budget the running JVM can honour: the configured one, capped by the direct memory it really has. */
    public static long effectiveBudget(long configuredBudgetBytes) {
        long direct = PlatformDependent.maxDirectMemory();
        long cap = (long) (direct * LOG_SHARE_OF_DIRECT);
        if (configuredBudgetBytes > 0) {
            return Math.min(configuredBudgetBytes, Math.max(cap, 1));
        }
        ContainerMemory c = ContainerMemory.detect();
        return Math.min(cap, forLimit(c.limitBytes(), c.source(), 0).budgetBytes());
    }

    /**
     * How many connections this plan holds at their worst ({@link #CONNECTION_DIRECT_BYTES} each in the direct
     * memory outside the budget, {@link #CONNECTION_HEAP_BYTES} each in half the heap). {@code --max-connections}
     * at or below this keeps every byte a client can make the server hold inside the plan.
     */
    public long connectionsCovered() {
        return connectionsCovered(heapBytes, directBytes, budgetBytes);
    }

    /** {@link #connectionsCovered()} for a running JVM's heap, direct memory and budget. */
    public static long connectionsCovered(long heapBytes, long directBytes, long budgetBytes) {
        long byDirect = Math.max(0, directBytes - budgetBytes) / CONNECTION_DIRECT_BYTES;
        long byHeap = heapBytes / 2 / CONNECTION_HEAP_BYTES;
        return Math.min(byDirect, byHeap);
    }

    private static long clamp(long v, long min, long max) {
        return Math.max(min, Math.min(max, v));
    }

    /** JVM flags that realise this plan. */
    public String jvmFlags() {
        return "-Xmx" + (heapBytes / MIB) + "m -XX:MaxDirectMemorySize="
                + (directBytes / MIB) + "m";
    }

    /**
     * The collector flag to add to {@code jvmOptions} (the operator's {@code IQSTREAM_JVM_OPTS}):
     * {@link #DEFAULT_COLLECTOR}, or nothing when they choose a collector themselves (the JVM refuses two).
     */
    public static String collectorFlag(String jvmOptions) {
        return jvmOptions != null && COLLECTOR_OPTION.matcher(jvmOptions).find() ? "" : DEFAULT_COLLECTOR;
    }

    /**
     * The flag that lets Netty use {@code sun.misc.Unsafe} on the JDK this runs on: JDK 24 and later keep Netty 4.2 off
     * it unless allowed, and then every copy between direct buffers and every socket write allocates a
     * {@code ByteBuffer} view (docs/ARCHITECTURE.md, "The hot path's allocation"); older JDKs do not know the option,
     * so for them nothing.
     */
    public static String unsafeFlag(int javaFeatureVersion) {
        return javaFeatureVersion >= 24 ? "--sun-misc-unsafe-memory-access=allow" : "";
    }

    /**
     * The flag that has the JVM hand freed native memory back to the system every 2 s ({@code malloc_trim}), on JDKs
     * that have it as a product option (22 and later; 21 knows it only as experimental, older ones not at all: for
     * them nothing). Without it the memory the JIT's compiler threads take while they compile the connection and
     * run code (13.4 MiB at once under the bench's load at K = 300, freed after) stays in the process's resident
     * memory: measured with it, 7-12 MiB less at rest after the start-up warm-up, the CPU per event no worse (the
     * peak while the compiler is busy stays; docs/BENCHMARK.md, "What the memory column holds").
     */
    public static String trimFlag(int javaFeatureVersion) {
        return javaFeatureVersion >= 22 ? "-XX:TrimNativeHeapInterval=2000" : "";
    }

    public String describe() {
        return "memory plan: limit " + Quantities.formatBytes(limitBytes / MIB * MIB) + " (" + source + "), heap "
                + heapBytes / MIB + "m, direct " + directBytes / MIB + "m, JVM headroom " + headroomBytes / MIB
                + "m, event-log budget " + budgetBytes / MIB + "m";
    }

    /**
     * Prints the JVM flags for this machine and this JDK on stdout (the collector, unless {@code IQSTREAM_JVM_OPTS}
     * names one, the Unsafe allowance where the JDK needs it, the native-memory trim where the JDK has it, then the
     * sizing) and the plan on stderr:
     * {@code java -cp iqstream-server.jar io.iqstream.server.admission.MemoryPlan [budget]}. A budget the server
     * would refuse ({@code 5zz}, {@code 1k}) prints nothing and exits 0: the launcher then starts the JVM unsized and
     * the server refuses the value with its own one-line message naming the flag.
     */
    public static void main(String[] args) {
        long budget = 0;
        if (args.length > 0 && !args[0].isEmpty()) {
            try {
                budget = ConfigParser.parse(new String[] {"--memory-budget", args[0]}, Map.of()).memoryBudgetBytes();
            } catch (ConfigException refused) {
                return;
            }
        }
        ContainerMemory c = ContainerMemory.detect();
        MemoryPlan plan = forLimit(c.limitBytes(), c.source(), budget);
        System.err.println("iqstream: " + plan.describe() + (budget > 0 ? " (--memory-budget)" : ""));
        StringBuilder flags = new StringBuilder();
        for (String f : new String[] {collectorFlag(System.getenv("IQSTREAM_JVM_OPTS")),
            unsafeFlag(Runtime.version().feature()), trimFlag(Runtime.version().feature())}) {
            if (!f.isEmpty()) {
                flags.append(f).append(' ');
            }
        }
        System.out.println(flags.append(plan.jvmFlags()));
    }
}

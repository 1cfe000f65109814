package io.iqstream.bench.report;

/**
 * One (server, concurrency) measurement, as written to results.json (snake_case names). Nullable
 * boxed fields are left out of the JSON when unknown: {@code lostOnReconnect} and
 * {@code lateOnReconnect} where the load made no browser reconnect; the heap figures for a server
 * without a heap measured apart from its RSS (every server but IQ-Stream's JVM).
 *
 * @param lostOnReconnect events a reconnected browser missed below the highest event it received
 *     after reconnecting (the server went past them)
 * @param lateOnReconnect events a reconnected browser still missed at the end of the drain, above
 *     anything it received after reconnecting (late, or lost: nothing shows which)
 * @param memKibPerRun (growth of the resident memory + growth of the live heap) ÷ K: what the runs in
 *     flight cost, heap included
 * @param heapKibAtRest live heap after a full collection before the load (JVM servers)
 * @param heapKibLoaded live heap after a full collection at the end of the window (JVM servers)
 * @param resumeP999Ms reconnect request to the first replayed event, p99.9
 * @param serverTransport the transport IQ-Stream said it listened with (null for other servers)
 * @param gc IQ-Stream's named collector setting ({@code --gc}), null for the default flags
 * @param warmupS how long the warm-up ran before the window (it goes on until the server's CPU per
 *     event settles, within the bounds of {@code --warmup} and {@code --warmup-max})
 * @param cpuUnsettled the server's CPU per event had not settled when the window began (the last two
 *     warm-up slices differed by more than 5%), or the generator's compiler threads were still busy
 *     (above 2% of its CPUs): the row may still carry a JIT's work
 * @param cpuUsPerEventCold the server's CPU per event in the first warm-up slice (the cold start)
 * @param warmupCpuUsPerEvent the server's CPU per event in each warm-up slice, in order
 * @param windowCpuUsPerEvent the server's CPU per event in each 5 s slice of the window, in order: how
 *     much the figure moved while nothing changed but time (this VM's neighbours)
 * @param loadgenStimeShare the generator's system (kernel) time ÷ its CPU time in the window: the
 *     kernel's share of its work, the TCP receive processing of what it sends over loopback included
 * @param loadgenCpusSoftirqUtil the softirq time on the generator's CPUs (/proc/stat, tick-sampled)
 *     ÷ the window ÷ its CPUs
 * @param loadgenCpusBusyUtil all work on the generator's CPUs (/proc/stat: everything but idle and
 *     iowait) ÷ the window ÷ its CPUs: above its own CPU, the share other processes took
 * @param loadgenCpuByThread the generator's CPU in the window by thread kind (event loops, jit, gc,
 *     other) ÷ the window ÷ its CPUs
 * @param variant the setup measured where the bench tried several and kept the fastest (Nchan's
 *     publisher), with the other's figures; for IQ-Stream, a transport fallback; null otherwise
 */
public record ResultRow(
    String server,
    int cpus,
    int concurrency,
    double windowS,
    long eventsExpected,
    long eventsDelivered,
    double deliveredRatio,
    double eventsPerSec,
    double targetEventsPerSec,
    Double cpuUsPerEvent,
    double serverCpuUtil,
    Double p50Ms,
    Double p99Ms,
    Double p999Ms,
    Double maxMs,
    Long lostOnReconnect,
    Long lateOnReconnect,
    long reconnectingRuns,
    Double resumeP50Ms,
    Double resumeP99Ms,
    Double resumeP999Ms,
    long duplicates,
    long reordered,
    long corrupted,
    Double rssKibPerRun,
    long rssKibAtRest,
    long rssKibLoaded,
    Double memKibPerRun,
    Long heapKibAtRest,
    Long heapKibLoaded,
    boolean loadgenLimited,
    String loadgenLimitReason,
    double loadgenCpuUtil,
    double sendLagP99Ms,
    double sendLagMaxMs,
    double loadgenTickGapP999Ms,
    double loadgenTickGapMaxMs,
    long runsStarted,
    long publishErrors,
    long subscribeErrors,
    long connectFailures,
    long unexpectedDisconnects,
    String transport,
    String serverTransport,
    String gc,
    double warmupS,
    boolean cpuUnsettled,
    Double cpuUsPerEventCold,
    java.util.List<Double> warmupCpuUsPerEvent,
    java.util.List<Double> windowCpuUsPerEvent,
    Double loadgenStimeShare,
    Double loadgenCpusSoftirqUtil,
    Double loadgenCpusBusyUtil,
    java.util.Map<String, Double> loadgenCpuByThread,
    String variant,
    String error) {

  /** A row for a (server, level) that could not be measured. */
  public static ResultRow failed(String server, int cpus, int concurrency, String error) {
    return new ResultRow(server, cpus, concurrency, 0, 0, 0, 0, 0, 0, null, 0, null, null, null,
        null, null, null, 0, null, null, null, 0, 0, 0, null, 0, 0, null, null, null, false, null, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, null, null, null, 0, false, null, null, null, null, null, null,
        null, null, error);
  }

  /** This row with {@code variant} set. */
  public ResultRow withVariant(String variant) {
    return new ResultRow(server, cpus, concurrency, windowS, eventsExpected, eventsDelivered,
        deliveredRatio, eventsPerSec, targetEventsPerSec, cpuUsPerEvent, serverCpuUtil, p50Ms, p99Ms,
        p999Ms, maxMs, lostOnReconnect, lateOnReconnect, reconnectingRuns, resumeP50Ms, resumeP99Ms,
        resumeP999Ms, duplicates, reordered, corrupted, rssKibPerRun, rssKibAtRest, rssKibLoaded, memKibPerRun,
        heapKibAtRest, heapKibLoaded, loadgenLimited, loadgenLimitReason, loadgenCpuUtil,
        sendLagP99Ms, sendLagMaxMs, loadgenTickGapP999Ms, loadgenTickGapMaxMs, runsStarted,
        publishErrors, subscribeErrors, connectFailures, unexpectedDisconnects, transport,
        serverTransport, gc, warmupS, cpuUnsettled, cpuUsPerEventCold, warmupCpuUsPerEvent,
        windowCpuUsPerEvent, loadgenStimeShare, loadgenCpusSoftirqUtil, loadgenCpusBusyUtil, loadgenCpuByThread, variant,
        error);
  }

  /**
   * Whether this row is IQ-Stream's, in any setup ({@code iqstream}, {@code iqstream[zgc]}...) or the
   * baseline build's ({@code iqstream-baseline}).
   */
  public boolean isIqStream() {
    return server.equals("iqstream") || server.startsWith("iqstream[") || server.startsWith("iqstream-baseline");
  }

  /** Whether the server kept up: all events delivered (99.9%+), no corruption, generator not limit. */
  public boolean keptUp() {
    return error == null && deliveredRatio >= 0.999 && corrupted == 0 && !loadgenLimited;
  }
}

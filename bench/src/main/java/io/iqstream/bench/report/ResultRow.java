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
 * @param variant the setup measured where the bench tried several and kept the fastest (Nchan's
 *     publisher), with the other's figures; null otherwise
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
    String variant,
    String error) {

  /** A row for a (server, level) that could not be measured. */
  public static ResultRow failed(String server, int cpus, int concurrency, String error) {
    return new ResultRow(server, cpus, concurrency, 0, 0, 0, 0, 0, 0, null, 0, null, null, null,
        null, null, null, 0, null, null, 0, 0, 0, null, 0, 0, null, null, null, false, null, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, null, null, error);
  }

  /** This row with {@code variant} set. */
  public ResultRow withVariant(String variant) {
    return new ResultRow(server, cpus, concurrency, windowS, eventsExpected, eventsDelivered,
        deliveredRatio, eventsPerSec, targetEventsPerSec, cpuUsPerEvent, serverCpuUtil, p50Ms, p99Ms,
        p999Ms, maxMs, lostOnReconnect, lateOnReconnect, reconnectingRuns, resumeP50Ms, resumeP99Ms,
        duplicates, reordered, corrupted, rssKibPerRun, rssKibAtRest, rssKibLoaded, memKibPerRun,
        heapKibAtRest, heapKibLoaded, loadgenLimited, loadgenLimitReason, loadgenCpuUtil,
        sendLagP99Ms, sendLagMaxMs, loadgenTickGapP999Ms, loadgenTickGapMaxMs, runsStarted,
        publishErrors, subscribeErrors, connectFailures, unexpectedDisconnects, transport, variant,
        error);
  }

  /** Whether the server kept up: all events delivered (99.9%+), no corruption, generator not limit. */
  public boolean keptUp() {
    return error == null && deliveredRatio >= 0.999 && corrupted == 0 && !loadgenLimited;
  }
}

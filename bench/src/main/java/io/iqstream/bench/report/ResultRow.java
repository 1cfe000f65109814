package io.iqstream.bench.report;

/**
 * One (server, concurrency) measurement, as written to results.json (snake_case names). Nullable
 * boxed fields are left out of the JSON when unknown: {@code lostOnReconnect} where delivery was under
 * 90% (the count would mean nothing) or where the load made no browser reconnect.
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
    long reconnectingRuns,
    Double resumeP50Ms,
    Double resumeP99Ms,
    long duplicates,
    long reordered,
    long corrupted,
    Double rssKibPerRun,
    long rssKibAtRest,
    long rssKibLoaded,
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
    String error) {

  /** A row for a (server, level) that could not be measured. */
  public static ResultRow failed(String server, int cpus, int concurrency, String error) {
    return new ResultRow(server, cpus, concurrency, 0, 0, 0, 0, 0, 0, null, 0, null, null, null,
        null, null, 0, null, null, 0, 0, 0, null, 0, 0, false, null, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        null, error);
  }

  /** Whether the server kept up: all events delivered (99.9%+), no corruption, generator not limit. */
  public boolean keptUp() {
    return error == null && deliveredRatio >= 0.999 && corrupted == 0 && !loadgenLimited;
  }
}

package io.iqstream.bench.report;

import io.iqstream.bench.storm.StormOptions;

/**
 * One server's reconnect storm ({@code ./iqstream bench --storm}), as results.json and REPORT.md show it.
 *
 * @param cut readers cut at once
 * @param resumed of those, readers that got every event published before they reconnected
 * @param allResumed every cut reader resumed within the bench's limit (60 s)
 * @param stormMs the cut to the moment the last reader had every event it missed
 * @param resumeP50Ms a reader's request written to the moment it had every event published before it (p50)
 * @param cpuUsPerReconnect the server's CPU over the storm, less what the events received over it (replays
 *     included) cost at the calm interval's CPU per event, ÷ readers cut: what a reconnect costs beyond the
 *     delivery of the same events live
 * @param stormCpuMs the server's CPU over the storm, all of it
 * @param calmCpuUtil the server's CPU in the calm interval ÷ its CPUs
 * @param refused reconnects refused (connect failed), each tried again after the window
 * @param reset connections reset or closed by the server, each tried again after the window
 * @param notOk answers other than 200
 * @param listenOverflows the kernel's ListenOverflows over the storm (machine-wide)
 * @param listenDrops the kernel's ListenDrops over the storm (machine-wide)
 * @param calmP99Ms live latency of the readers of runs never cut, in the calm interval (p99)
 * @param stormP99Ms the same readers' while the storm lasted
 * @param lost events a reader never received below the highest one it received, over every reader (checked by
 *     sequence number): the server went past them
 * @param late events a reader had not received above the highest one it received when the bench stopped waiting
 *     (a reader not back yet)
 * @param duplicates events received twice, over every reader
 * @param retryMs the range of the {@code retry:} values the server sent, where it sends one
 * @param connectLagP99Ms from the moment a reconnect was due to its connection's establishment (p99): the
 *     generator's own lag (one thread for every reader) and the kernel's; seconds of it mean the generator, not
 *     the server, set the storm's pace
 */
public record StormRow(String server, int pass, int readers, int cutRuns, int calmReaders, int eventsPerSec,
    long windowMs, int cut, int resumed, boolean allResumed, Double stormMs, Double resumeP50Ms, Double resumeP99Ms,
    Double resumeMaxMs, Double cpuUsPerReconnect, Double stormCpuMs, Double calmCpuUtil, int refused, int reset,
    int notOk, long listenOverflows, long listenDrops, Double calmP50Ms, Double calmP99Ms, Double stormP50Ms,
    Double stormP99Ms, long expected, long delivered, long lost, long late, long duplicates, int publisherFailures,
    String retryMs, Double connectLagP50Ms, Double connectLagP99Ms, String error) {

  public static StormRow failed(String server, int pass, StormOptions o, String error) {
    return new StormRow(server, pass, o.readers(), o.cutRuns(), o.calmRuns() * o.calmReadersPerRun(),
        o.eventsPerSec(), o.windowMs(), 0, 0, false, null, null, null, null, null, null, null, 0, 0, 0, 0, 0, null,
        null, null, null, 0, 0, 0, 0, 0, 0, null, null, null, error);
  }
}

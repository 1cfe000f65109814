package io.iqstream.bench.storm;

/** One run of the storm: its id, whether its readers are never cut, and its last sequence number written. */
final class StormRun {
  final String runId;
  final boolean calm;
  /** The last event's sequence number written by its publisher (1, 2, …). Written and read on the storm's loop. */
  int published;

  StormRun(String runId, boolean calm) {
    this.runId = runId;
    this.calm = calm;
  }
}

package io.iqstream.bench.storm;

/**
 * The reconnect storm's options ({@code ./iqstream bench --storm}): see {@link Storm}.
 *
 * @param readers readers on the runs that are cut (N)
 * @param cutRuns runs whose readers are all cut at once (K)
 * @param calmRuns runs never cut, whose readers' live latency is compared calm and during the storm
 * @param calmReadersPerRun readers on each calm run
 * @param eventsPerSec events a second each run's backend publishes
 * @param windowMs the reconnects are spread uniformly over this (one retry window); 0: all at once
 * @param calmMs the calm interval measured before the cut
 * @param warmupStorms storms run before the measured one, not counted (the JIT's)
 */
public record StormOptions(int readers, int cutRuns, int calmRuns, int calmReadersPerRun, int eventsPerSec,
    long windowMs, long calmMs, int warmupStorms) {

  /** One process's sockets: RLIMIT_NOFILE 20,000 less the publishers' and a reserve. */
  public static final int MAX_READERS = 19_000;

  public static final StormOptions DEFAULT = new StormOptions(2_000, 20, 10, 5, 20, 1_000, 5_000, 3);

  public StormOptions {
    if (readers < 1 || readers + calmRuns * calmReadersPerRun > MAX_READERS) {
      throw new IllegalArgumentException("--storm-readers: 1 to " + MAX_READERS + " readers in all (one process's"
          + " sockets), not " + readers + " + " + calmRuns * calmReadersPerRun + " calm");
    }
    if (cutRuns < 1 || cutRuns > readers) {
      throw new IllegalArgumentException("--storm-runs: 1 to --storm-readers, not " + cutRuns);
    }
    if (calmRuns < 0 || calmRuns > 1_000 || calmReadersPerRun < 1) {
      throw new IllegalArgumentException("--storm-calm-runs: 0 to 1000, not " + calmRuns);
    }
    if (eventsPerSec < 1 || eventsPerSec > 200) {
      throw new IllegalArgumentException("--storm-rate: 1 to 200 events a second per run, not " + eventsPerSec);
    }
    if (windowMs < 0 || windowMs > 60_000) {
      throw new IllegalArgumentException("--storm-window: 0 to 60s, not " + windowMs + " ms");
    }
    if (warmupStorms < 0 || warmupStorms > 20) {
      throw new IllegalArgumentException("--storm-warmups: 0 to 20, not " + warmupStorms);
    }
    if (calmMs < 1_000 || calmMs > 600_000) {
      throw new IllegalArgumentException("--storm-calm: 1s to 10m, not " + calmMs + " ms");
    }
  }

  public StormOptions with(Integer readers, Integer cutRuns, Integer calmRuns, Integer eventsPerSec, Long windowMs,
      Long calmMs, Integer warmupStorms) {
    return new StormOptions(readers != null ? readers : this.readers, cutRuns != null ? cutRuns : this.cutRuns,
        calmRuns != null ? calmRuns : this.calmRuns, calmReadersPerRun,
        eventsPerSec != null ? eventsPerSec : this.eventsPerSec, windowMs != null ? windowMs : this.windowMs,
        calmMs != null ? calmMs : this.calmMs, warmupStorms != null ? warmupStorms : this.warmupStorms);
  }
}

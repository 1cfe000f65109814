package io.iqstream.bench.load;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * What one generator thread measured. Confined to its event loop until the load ends; then merged
 * with the other threads' stats on the runner's thread.
 */
public final class LoadStats {
  private static final long MAX_NS = TimeUnit.MINUTES.toNanos(30);

  /** Receive time minus scheduled production time, events received live inside the window. */
  public final Histogram latencyNs = new Histogram(MAX_NS, 3);
  /** From a reconnect request to its first replayed event. */
  public final Histogram resumeNs = new Histogram(MAX_NS, 3);
  /** How late the generator wrote each event against its schedule, events written in the window. */
  public final Histogram sendLagNs = new Histogram(MAX_NS, 3);
  /** Gaps between the generator's ticks (1 ms when it runs on time) that overlap the window. */
  public final Histogram tickGapNs = new Histogram(MAX_NS, 3);

  /** New (not duplicate) events received inside the window, live or replayed. */
  public long receivedInWindow;
  public long replayedInWindow;
  public long sentInWindow;

  // runs whose schedule ended inside the window
  public long windowRuns;
  public long expected;
  public long delivered;
  public long reconnectingRuns;
  /** Events a reconnected browser missed below the highest event it got after reconnecting. */
  public long lostOnReconnect;
  /** Events a reconnected browser still missed at the end, above anything it got after reconnecting. */
  public long lateOnReconnect;
  public long duplicates;
  public long reordered;
  public long corrupted;

  // health
  public long runsStarted;
  public long runsCompleted;
  public long reconnects;
  public long unexpectedDisconnects;
  public long publishErrors;
  public long subscribeErrors;
  public long connectFailures;

  public void add(LoadStats o) {
    latencyNs.add(o.latencyNs);
    resumeNs.add(o.resumeNs);
    sendLagNs.add(o.sendLagNs);
    tickGapNs.add(o.tickGapNs);
    receivedInWindow += o.receivedInWindow;
    replayedInWindow += o.replayedInWindow;
    sentInWindow += o.sentInWindow;
    windowRuns += o.windowRuns;
    expected += o.expected;
    delivered += o.delivered;
    reconnectingRuns += o.reconnectingRuns;
    lostOnReconnect += o.lostOnReconnect;
    lateOnReconnect += o.lateOnReconnect;
    duplicates += o.duplicates;
    reordered += o.reordered;
    corrupted += o.corrupted;
    runsStarted += o.runsStarted;
    runsCompleted += o.runsCompleted;
    reconnects += o.reconnects;
    unexpectedDisconnects += o.unexpectedDisconnects;
    publishErrors += o.publishErrors;
    subscribeErrors += o.subscribeErrors;
    connectFailures += o.connectFailures;
  }
}

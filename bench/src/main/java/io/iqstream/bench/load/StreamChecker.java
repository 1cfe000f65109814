package io.iqstream.bench.load;

import io.iqstream.bench.workload.AgUiRun;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.BitSet;

/**
 * Checks one subscriber's stream (over all its connections) against what the run published: which
 * events arrived, duplicates, reordering, and corrupted payloads. An event is identified by its stream
 * id where the server's ids are the event's position (IQ-Stream, the floor), otherwise by matching its
 * payload against the run's events, looking first at the next expected one.
 *
 * <p>Loss on reconnect: after {@link #reconnected()}, an event still missing is <em>lost</em> only when
 * the browser received a later event after reconnecting (the server moved past it: it will never come);
 * one missing above the highest event received after reconnecting is <em>late</em> (not there when
 * the drain ended; nothing shows it was skipped).
 *
 * <p>Confined to the event loop that owns the run.
 */
public final class StreamChecker {
  /** Returned by {@link #accept} for a payload that matches no event of the run. */
  public static final int CORRUPTED = -1;
  /** Returned by {@link #accept} for an event received before. */
  public static final int DUPLICATE = -2;

  private final AgUiRun run;
  private final BitSet received;
  private int unique;
  private int highest = -1;
  private boolean reconnected;
  /** Highest index received on a connection made after a reconnect, -1 when none. */
  private int highestAfterReconnect = -1;
  private int duplicates;
  private int reordered;
  private int corrupted;

  public StreamChecker(AgUiRun run) {
    this.run = run;
    this.received = new BitSet(run.eventCount());
  }

  /**
   * Records one received event.
   *
   * @param streamId the server's id for it, or -1 when ids are not positions
   * @param scratch reusable scratch space, returned grown if needed
   * @return the event's index (0-based) when new, else {@link #CORRUPTED} or {@link #DUPLICATE}
   */
  public int accept(long streamId, ByteBuf data, byte[][] scratch) {
    int n = data.readableBytes();
    if (scratch[0].length < n) {
      scratch[0] = new byte[Math.max(n, scratch[0].length * 2)];
    }
    byte[] bytes = scratch[0];
    data.getBytes(data.readerIndex(), bytes, 0, n);
    int index;
    if (streamId >= 0) {
      index = streamId >= 1 && streamId <= run.eventCount() ? (int) streamId - 1 : -1;
      if (index < 0 || !same(bytes, n, run.event(index))) {
        corrupted++;
        return CORRUPTED;
      }
    } else {
      index = find(bytes, n);
      if (index < 0) {
        corrupted++;
        return CORRUPTED;
      }
    }
    if (received.get(index)) {
      duplicates++;
      return DUPLICATE;
    }
    received.set(index);
    unique++;
    if (reconnected && index > highestAfterReconnect) {
      highestAfterReconnect = index;
    }
    if (index < highest) {
      reordered++;
    } else {
      highest = index;
    }
    return index;
  }

  private int find(byte[] bytes, int n) {
    int count = run.eventCount();
    for (int i = highest + 1; i < count; i++) {
      if (same(bytes, n, run.event(i))) {
        return i;
      }
    }
    for (int i = Math.min(highest, count - 1); i >= 0; i--) {
      if (same(bytes, n, run.event(i))) {
        return i;
      }
    }
    return -1;
  }

  private static boolean same(byte[] bytes, int n, byte[] expected) {
    return n == expected.length && Arrays.equals(bytes, 0, n, expected, 0, n);
  }

  /** The browser reconnected: events received from now on are "after reconnecting". */
  public void reconnected() {
    reconnected = true;
  }

  /** Whether {@link #reconnected()} was called. */
  public boolean isReconnected() {
    return reconnected;
  }

  /** Highest index received after reconnecting, -1 when none (or no reconnect). */
  public int highestAfterReconnect() {
    return highestAfterReconnect;
  }

  /**
   * Events missing below the highest one received after reconnecting: the server went past them, so
   * they are lost. 0 without a reconnect.
   */
  public int lostOnReconnect() {
    if (highestAfterReconnect < 0) {
      return 0;
    }
    return highestAfterReconnect - received.get(0, highestAfterReconnect).cardinality();
  }

  /** Events missing that are not {@link #lostOnReconnect() lost}: none received after them. */
  public int lateOnReconnect() {
    return missing() - lostOnReconnect();
  }

  /**
   * Adds this stream to {@code stats} (a run whose schedule ended inside the window): delivered,
   * duplicates, reordered, corrupted; and, where its browser dropped and reconnected, lost and late.
   */
  public void tallyInto(LoadStats stats, boolean dropped) {
    stats.windowRuns++;
    stats.expected += run.eventCount();
    stats.delivered += unique;
    stats.duplicates += duplicates;
    stats.reordered += reordered;
    stats.corrupted += corrupted;
    if (dropped) {
      stats.reconnectingRuns++;
      stats.lostOnReconnect += lostOnReconnect();
      stats.lateOnReconnect += lateOnReconnect();
    }
  }

  public boolean has(int index) {
    return received.get(index);
  }

  public int unique() {
    return unique;
  }

  public int missing() {
    return run.eventCount() - unique;
  }

  /** Highest index received so far, -1 when none. */
  public int highest() {
    return highest;
  }

  public int duplicates() {
    return duplicates;
  }

  public int reordered() {
    return reordered;
  }

  public int corrupted() {
    return corrupted;
  }
}

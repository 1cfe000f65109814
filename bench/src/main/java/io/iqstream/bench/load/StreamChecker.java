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

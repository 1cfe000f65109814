package io.iqstream.bench.load;

import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.concurrent.TimeUnit;

/**
 * One run in flight: its schedule, its publisher, its subscriber (over reconnects) and the checker of
 * what the subscriber received. Confined to the owning shard's event loop.
 *
 * <p>A run is complete when its publisher has finished and its subscriber has the terminal event (or
 * gave up); then it is tallied, if its schedule ended inside the measured window, and dropped.
 */
public final class Run {
  private static final int MAX_UNEXPECTED_RECONNECTS = 5;
  private static final long DEFAULT_RETRY_MS = 1000;
  private static final boolean DEBUG = System.getenv("IQSTREAM_BENCH_DEBUG") != null;

  final Shard shard;
  final long number;
  final AgUiRun data;
  final long startNs;
  /** Whether its schedule ends inside the window (set again when the window moves: its shard's loop). */
  boolean windowRun;
  final StreamChecker checker;
  /** Index at or after which the browser drops, -1 when this browser does not drop. */
  private final int dropAtIndex;
  private final Object credential;

  Publisher publisher;
  private boolean publisherReady;
  private boolean publisherDone;
  int nextToSend;
  long nextDueNs;

  private Channel subscriber;
  private boolean subscriberDone;
  private boolean dropped;
  /** Inside a batch of events that share one resume id ({@link #batchStart}): a drop waits for its end. */
  private boolean inBatch;
  private boolean dropAtBatchEnd;
  private String lastEventId;
  private long retryMs = DEFAULT_RETRY_MS;
  private long reconnectRequestNs;
  private boolean firstAfterReconnect;
  private int unexpectedReconnects;
  private boolean completed;

  Run(Shard shard, long number, AgUiRun data, long startNs, boolean windowRun, int dropAtIndex) {
    this.shard = shard;
    this.number = number;
    this.data = data;
    this.startNs = startNs;
    this.windowRun = windowRun;
    this.dropAtIndex = dropAtIndex;
    this.checker = new StreamChecker(data);
    this.credential = shard.driver().subscriberCredential(this);
  }

  public AgUiRun data() {
    return data;
  }

  public Shard shard() {
    return shard;
  }

  /** The driver's per-run subscriber credential (a JWT, a signed link...). */
  public Object credential() {
    return credential;
  }

  /** The id to resume from, null on the first connection. */
  public String lastEventId() {
    return lastEventId;
  }

  public boolean isReconnect() {
    return reconnectRequestNs != 0;
  }

  long scheduledNs(int index) {
    return startNs + shard.script().offsetNs(index);
  }

  // ---- publisher side

  /** The publisher may write now. */
  public void publisherReady() {
    if (publisherReady || publisherDone) {
      return;
    }
    publisherReady = true;
    if (nextToSend < RunScript.EVENTS) {
      nextDueNs = scheduledNs(nextToSend);
      shard.schedule(this);
    }
  }

  /** Sends every event due by {@code nowNs}; returns true when more remain. */
  boolean sendDue(long nowNs) {
    if (!publisherReady || publisherDone) {
      return false;
    }
    while (nextToSend < RunScript.EVENTS) {
      long due = scheduledNs(nextToSend);
      if (due > nowNs) {
        nextDueNs = due;
        return true;
      }
      publisher.writeEvent(nextToSend);
      if (publisher.writesAtOnce()) {
        shard.recordSend(nowNs, due);
      }
      nextToSend++;
    }
    publisher.finish();
    return false;
  }

  /**
   * A queueing publisher ({@link Publisher#writesAtOnce()} false) wrote event {@code index} at
   * {@code nowNs}: its send lag is counted from the schedule to this write.
   */
  public void eventWritten(int index, long nowNs) {
    shard.recordSend(nowNs, scheduledNs(index));
  }

  /** The publisher's connection ended; {@code ok} when its publish completed as expected. */
  public void publisherClosed(boolean ok) {
    if (publisherDone) {
      return;
    }
    publisherDone = true;
    if (!ok && !shard.stopping()) {
      shard.stats().publishErrors++;
    }
    maybeComplete();
  }

  // ---- subscriber side

  /** A subscriber connection was opened for this run. */
  public void subscriberOpened(Channel channel) {
    this.subscriber = channel;
  }

  /** The subscriber's request went out (reconnects: the start of time to resume). */
  public void subscriberRequestSent(long nowNs) {
    if (dropped || unexpectedReconnects > 0) {
      reconnectRequestNs = nowNs;
      firstAfterReconnect = true;
      checker.reconnected();
    }
  }

  public void onRetry(long retryMs) {
    this.retryMs = retryMs;
  }

  /** One event frame received by the subscriber at {@code recvNs}. */
  public void onEvent(Channel channel, String id, ByteBuf payload, long recvNs) {
    if (channel != subscriber || subscriberDone) {
      return;
    }
    long streamId = -1;
    if (shard.driver().idIsIndex()) {
      streamId = parseId(id);
    }
    int index = checker.accept(streamId, payload, shard.scratch());
    if (id != null) {
      lastEventId = id;
    }
    if (index < 0) {
      return;
    }
    long scheduled = scheduledNs(index);
    boolean replayed = reconnectRequestNs != 0 && scheduled < reconnectRequestNs
        && shard.driver().replays();
    if (firstAfterReconnect) {
      firstAfterReconnect = false;
      if (replayed) {
        shard.stats().resumeNs.recordValue(Math.max(0, recvNs - reconnectRequestNs));
      }
    }
    shard.recordReceive(recvNs, scheduled, replayed);
    if (index == RunScript.EVENTS - 1) {
      subscriberDone = true;
      channel.close();
      maybeComplete();
    } else if (dropAtIndex >= 0 && !dropped && index >= dropAtIndex) {
      if (inBatch) {
        dropAtBatchEnd = true;
      } else {
        drop(channel);
      }
    }
  }

  private void drop(Channel channel) {
    dropped = true;
    channel.close();
    shard.stats().reconnects++;
    scheduleReconnect();
  }

  /**
   * The events up to {@link #batchEnd} arrive as one batch whose resume id is known only as a whole (Durable
   * Streams: a data frame's messages, then the control frame's offset, which each of them is handed with): a
   * browser takes the whole batch, so one that is to drop inside it drops at its end, and resumes after it.
   */
  public void batchStart() {
    inBatch = true;
  }

  /** The end of the batch begun by {@link #batchStart}: the browser drops now if it was to inside the batch. */
  public void batchEnd(Channel channel) {
    inBatch = false;
    if (dropAtBatchEnd) {
      dropAtBatchEnd = false;
      if (channel == subscriber && !subscriberDone && !dropped) {
        drop(channel);
      }
    }
  }

  /** The server says the stream has nothing more (204) or refused it. */
  public void subscriberEnded(Channel channel, boolean ok) {
    if (channel != subscriber || subscriberDone) {
      return;
    }
    if (!ok && !shard.stopping()) {
      shard.stats().subscribeErrors++;
    }
    subscriberDone = true;
    channel.close();
    maybeComplete();
  }

  /** A subscriber connection closed. */
  public void onSubscriberClosed(Channel channel) {
    if (channel != subscriber || subscriberDone || shard.stopping()) {
      return;
    }
    subscriber = null;
    if (dropped && reconnectRequestNs == 0) {
      return; // the planned drop; its reconnect is scheduled
    }
    shard.stats().unexpectedDisconnects++;
    if (++unexpectedReconnects > MAX_UNEXPECTED_RECONNECTS) {
      subscriberDone = true;
      maybeComplete();
      return;
    }
    scheduleReconnect();
  }

  private void scheduleReconnect() {
    subscriber = null;
    shard.loop().schedule(() -> {
      if (!subscriberDone && !shard.stopping()) {
        shard.driver().openSubscriber(shard, this);
      }
    }, retryMs, TimeUnit.MILLISECONDS);
  }

  private void maybeComplete() {
    if (completed || !publisherDone || !subscriberDone) {
      return;
    }
    completed = true;
    shard.completed(this);
  }

  /** Tallies this run into the stats (once), closing what is still open. */
  void tally(LoadStats stats) {
    if (DEBUG && checker.missing() > 0) {
      StringBuilder gaps = new StringBuilder();
      for (int i = 0; i < RunScript.EVENTS; i++) {
        if (!checker.has(i)) {
          int j = i;
          while (j + 1 < RunScript.EVENTS && !checker.has(j + 1)) {
            j++;
          }
          gaps.append(i).append(i == j ? "" : "-" + j).append(' ');
          i = j;
        }
      }
      System.err.printf("[bench debug] run %d %s: missing %d [%s] dropAt %d dropped %s sent %d"
              + " pubDone %s subDone %s unexpected %d lastId %s highestAfterReconnect %d%n", number,
          data.runId(), checker.missing(), gaps.toString().trim(), dropAtIndex, dropped, nextToSend,
          publisherDone, subscriberDone, unexpectedReconnects, lastEventId,
          checker.highestAfterReconnect());
    }
    if (windowRun) {
      checker.tallyInto(stats, dropped);
    }
  }

  void closeAll() {
    if (publisher != null) {
      publisher.close();
    }
    if (subscriber != null && subscriber.isRegistered()) {
      subscriber.close(); // an unregistered one never had a socket (see Publisher#flush)
    }
  }

  private static long parseId(String id) {
    if (id == null || id.isEmpty() || id.length() > 18) {
      return 0;
    }
    long v = 0;
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c < '0' || c > '9') {
        return 0;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}

package io.iqstream.bench.load;

import io.netty.channel.Channel;

/**
 * The backend side of one run: a connection that sends the run's events in the server's protocol.
 * Confined to the run's event loop. Writes do not flush; the generator flushes once per loop turn.
 */
public abstract class Publisher {
  protected final Run run;
  protected Channel channel;

  protected Publisher(Run run) {
    this.run = run;
  }

  /** Writes event {@code index} of the run (no flush). Called only after {@link Run#publisherReady}. */
  public abstract void writeEvent(int index);

  /**
   * Whether {@link #writeEvent} writes the event at once (the generator then records its send lag at
   * that call). A publisher that queues events (one request in flight at a time) returns false and
   * reports each event when it is actually written, with {@link Run#eventWritten}, so the time it
   * waited in the queue shows as send lag, not only as the server's latency.
   */
  public boolean writesAtOnce() {
    return true;
  }

  /** Called once after the last event has been written; ends the publish (and flushes). */
  public abstract void finish();

  /**
   * Flushes what {@link #writeEvent} wrote. A channel that was never registered (its connect failed
   * before it had a socket, e.g. the generator out of file descriptors: Netty hands back a stand-in
   * whose pipeline throws) has nothing to flush: its failure is counted by {@link Shard#connect}.
   */
  public void flush() {
    if (channel != null && channel.isRegistered()) {
      channel.flush();
    }
  }

  public void close() {
    if (channel != null && channel.isRegistered()) {
      channel.close();
    }
  }
}

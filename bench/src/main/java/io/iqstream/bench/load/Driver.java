package io.iqstream.bench.load;

/**
 * How the generator talks to one kind of server: its publish path and its subscriber protocol. One
 * instance per load; its methods are called on the event loop that owns the run.
 */
public interface Driver {
  /** Whether the stream ids the subscriber sees are the event positions 1..429. */
  boolean idIsIndex();

  /** Whether a subscriber can resume with Last-Event-ID (else no browser is made to drop). */
  boolean resumes();

  /**
   * Whether a reconnecting subscriber is sent what it missed (so events it gets that were produced
   * before it reconnected are replays, timed as time to resume, not as latency).
   */
  default boolean replays() {
    return resumes();
  }

  /** Per-run credentials etc., made on the owning loop when the run starts. */
  default Object subscriberCredential(Run run) {
    return null;
  }

  /** Opens the run's publisher connection; it calls {@link Run#publisherReady()} when it may write. */
  Publisher openPublisher(Shard shard, Run run);

  /**
   * Opens a subscriber connection for the run (resuming from {@link Run#lastEventId()} when not null).
   * It feeds events to {@link Run#onEvent} and reports its end with {@link Run#onSubscriberClosed}.
   */
  void openSubscriber(Shard shard, Run run);

  /** Released after the load. */
  default void close() {}
}

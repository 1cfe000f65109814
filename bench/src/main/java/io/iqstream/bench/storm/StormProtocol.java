package io.iqstream.bench.storm;

import java.net.InetSocketAddress;

/**
 * What the reconnect storm ({@link Storm}) needs of a server's protocol: where it listens, a reader's credential,
 * the SSE request that opens or resumes a read, and how a run's backend publishes on one connection. Implemented
 * by the drivers of the servers that resume with Last-Event-ID (IQ-Stream, Nchan). Any thread.
 */
public interface StormProtocol {
  InetSocketAddress address();

  /** A reader's credential for {@code runId} (each reader its own where the server checks one per reader). */
  String readerCredential(String runId, String reader);

  /** The HTTP request that opens an SSE read of {@code runId}, resuming after {@code lastEventId} when not null. */
  String subscribeRequest(String runId, String credential, String lastEventId);

  /** What opens the run's publishing connection; empty where each event is a request of its own. */
  byte[] publishOpening(String runId);

  /** One event (a JSON object) written on that connection. */
  byte[] publishEvent(String runId, byte[] event);
}

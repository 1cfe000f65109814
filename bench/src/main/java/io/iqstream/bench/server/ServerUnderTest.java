package io.iqstream.bench.server;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A server the bench runs: started pinned to its CPUs, driven in its own protocol, stopped. Used from
 * the runner's thread.
 */
public interface ServerUnderTest extends AutoCloseable {
  /** Name in results, e.g. {@code iqstream}, {@code nchan}, {@code haproxy-floor}. */
  String name();

  /** Installs what it needs (idempotent); throws with the reason when it cannot. */
  default void install() throws Exception {}

  /**
   * Starts the server with its placement (CPUs, priority) and returns the driver that talks to it.
   * {@code generator} is there for servers that connect back to it.
   */
  Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception;

  /** The pid whose process tree is the server. */
  long pid();

  /**
   * Its live heap (after a full collection), KiB, for a server with a managed heap that the bench sizes
   * and pre-touches apart from the rest of its memory (IQ-Stream's JVM); -1 for the others, whose heap
   * grows inside their resident memory (Soketi's V8 heap, nginx's pools) and so is in the RSS figures.
   */
  default long heapUsedKib() {
    return -1;
  }

  /**
   * The server's own account of what it holds, in words for the log (IQ-Stream: runs held, in flight or kept for
   * retention, the budget's charge, the buffer pool), read at the loaded moment; null for servers that keep none.
   */
  default String memoryCounters() {
    return null;
  }

  /**
   * The server's own histograms of a resume (its part, and the wait before it: {@link ResumeHistograms}), read now
   * in one request; null for servers that keep none.
   */
  default ResumeHistograms resumeHistograms() {
    return null;
  }

  /** The tail of the server's output. */
  String output();

  /** Writes the server's whole output to {@code target} (kept beside the results). */
  void saveOutput(Path target) throws IOException;

  /** Whether the server process is still running. */
  boolean isAlive();

  /** Version and setup in words, for the report. */
  String description();

  @Override
  void close();
}

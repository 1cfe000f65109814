package io.iqstream.bench.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A server under test that is one process tree started by the bench: keeps the process and answers the
 * lifecycle questions (pid, output, alive, close) the same way for every server. Used from the runner's
 * thread.
 */
abstract class ProcessServer implements ServerUnderTest {
  /** The running server, or null before start and after close. */
  protected ServerProcess process;

  @Override
  public String output() {
    return process == null ? "" : process.output();
  }

  @Override
  public void saveOutput(Path target) throws IOException {
    if (process == null) {
      Files.writeString(target, "");
    } else {
      process.saveOutput(target);
    }
  }

  @Override
  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  @Override
  public long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    if (process != null) {
      process.close();
      process = null;
    }
  }
}

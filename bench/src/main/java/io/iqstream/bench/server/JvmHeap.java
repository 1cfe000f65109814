package io.iqstream.bench.server;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The live heap of a JVM server, from the JVM's own counters: attaches to it once (the attach API
 * starts its local JMX agent), then each reading asks its {@link MemoryMXBean} for a full collection
 * and reads the heap used after it, so what is counted is live. Runner's thread; each reading takes
 * the target through one full collection, so it is only taken outside the measured window's CPU and
 * latency readings (at rest, and once the window's CPU time has been read).
 */
public final class JvmHeap implements AutoCloseable {
  private final JMXConnector connector;
  private final MemoryMXBean memory;

  private JvmHeap(JMXConnector connector, MemoryMXBean memory) {
    this.connector = connector;
    this.memory = memory;
  }

  /** Attaches to the JVM {@code pid} (same user, attach mechanism on: the JDK's defaults). */
  public static JvmHeap attach(long pid) throws Exception {
    VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
    String url;
    try {
      url = vm.startLocalManagementAgent();
    } finally {
      vm.detach();
    }
    JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(url));
    try {
      MemoryMXBean memory = ManagementFactory.newPlatformMXBeanProxy(
          connector.getMBeanServerConnection(), ManagementFactory.MEMORY_MXBEAN_NAME,
          MemoryMXBean.class);
      return new JvmHeap(connector, memory);
    } catch (IOException | RuntimeException e) {
      connector.close();
      throw e;
    }
  }

  /** Heap used after a full collection, KiB. */
  public long usedAfterFullGcKib() {
    memory.gc();
    return memory.getHeapMemoryUsage().getUsed() / 1024;
  }

  @Override
  public void close() {
    try {
      connector.close();
    } catch (IOException e) {
      // the server is gone: nothing to release
    }
  }
}

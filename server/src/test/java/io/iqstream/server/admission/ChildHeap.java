package io.iqstream.server.admission;

import com.sun.tools.attach.VirtualMachine;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The live heap of a server JVM the test started, from that JVM's own counters: attaches once (the attach API
 * starts its local JMX agent), then each reading asks its {@link MemoryMXBean} for a full collection and reads
 * the heap used after it, so what is counted is live. (The bench's {@code JvmHeap} does the same for the peers;
 * the server's tests cannot depend on the bench.) The test's thread.
 */
final class ChildHeap implements AutoCloseable {
    private final JMXConnector connector;
    private final MemoryMXBean memory;

    private ChildHeap(JMXConnector connector, MemoryMXBean memory) {
        this.connector = connector;
        this.memory = memory;
    }

    static ChildHeap attach(long pid) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        String url;
        try {
            url = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(url));
        return new ChildHeap(connector, ManagementFactory.newPlatformMXBeanProxy(connector.getMBeanServerConnection(),
                ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class));
    }

    /** Heap used after a full collection, bytes (the smallest of three readings: a collection can leave floating garbage). */
    long liveBytes() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            memory.gc();
            least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    @Override
    public void close() throws Exception {
        connector.close();
    }
}

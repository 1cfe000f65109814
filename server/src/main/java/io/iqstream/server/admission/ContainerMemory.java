package io.iqstream.server.admission;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The memory this process may use: the container's limit from cgroup v2 ({@code memory.max}), else cgroup v1
 * ({@code memory.limit_in_bytes}), else the machine's physical memory ({@code MemTotal} of /proc/meminfo).
 * Reads files once; any thread. The roots are parameters so tests can point them at fixture folders.
 */
public record ContainerMemory(long limitBytes, String source) {
    /** cgroup v1 reports "no limit" as a huge number (a page-rounded 2^63-1); anything above this is none. */
    private static final long V1_UNLIMITED_ABOVE = 1L << 60;

    /** Reads this machine's limit. */
    public static ContainerMemory detect() {
        return detect(Path.of("/sys/fs/cgroup"), Path.of("/proc/self/cgroup"), Path.of("/proc/meminfo"));
    }

    public static ContainerMemory detect(Path cgroupRoot, Path selfCgroup, Path meminfo) {
        Long v2 = readV2(cgroupRoot, selfCgroup);
        if (v2 != null) {
            return new ContainerMemory(v2, "cgroup v2 memory.max");
        }
        Long v1 = readV1(cgroupRoot);
        if (v1 != null) {
            return new ContainerMemory(v1, "cgroup v1 memory.limit_in_bytes");
        }
        Long total = readMemTotal(meminfo);
        if (total != null) {
            return new ContainerMemory(total, "physical memory (/proc/meminfo)");
        }
        long fallback = Runtime.getRuntime().maxMemory() * 4;
        return new ContainerMemory(fallback, "unknown: 4 x the JVM's max heap");
    }

    private static Long readV2(Path root, Path selfCgroup) {
        // the process's own cgroup first (a nested path), then the root of the namespace
        String own = null;
        try {
            for (String line : Files.readAllLines(selfCgroup)) {
                if (line.startsWith("0::")) {
                    own = line.substring(3).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            own = null;
        }
        if (own != null && !own.isEmpty() && !own.equals("/")) {
            Long v = parseV2(root.resolve(own.substring(1)).resolve("memory.max"));
            if (v != null) {
                return v;
            }
        }
        return parseV2(root.resolve("memory.max"));
    }

    private static Long parseV2(Path file) {
        String text = read(file);
        if (text == null || text.equals("max")) {
            return null;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Long readV1(Path root) {
        String text = read(root.resolve("memory").resolve("memory.limit_in_bytes"));
        if (text == null) {
            return null;
        }
        try {
            long v = Long.parseLong(text);
            return v <= 0 || v >= V1_UNLIMITED_ABOVE ? null : v;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Long readMemTotal(Path meminfo) {
        try {
            List<String> lines = Files.readAllLines(meminfo);
            for (String line : lines) {
                if (line.startsWith("MemTotal:")) {
                    String[] parts = line.substring(9).trim().split("\\s+");
                    long kib = Long.parseLong(parts[0]);
                    return kib * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    private static String read(Path file) {
        try {
            return Files.isRegularFile(file) ? Files.readString(file).trim() : null;
        } catch (IOException e) {
            return null;
        }
    }
}

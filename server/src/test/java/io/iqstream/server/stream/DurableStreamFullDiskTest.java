package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.readAll;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.LaunchedServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A data directory on a full file system: a 1 MiB tmpfs mounted for the test (the test runs as root, as CI does;
 * mounting is the machine fact it needs), with a {@code --disk-budget} larger than it, so that the kernel's ENOSPC
 * is what stops the writes (the default budget would refuse them first, 507 too, tested in DurableStreamDiskTest). Appends fill it until the kernel says ENOSPC: that write is {@code 507}
 * and not stored, everything acknowledged before is read back whole, the stream takes no more writes, the process
 * goes on serving; deleting the stream gives the space back, and after a SIGKILL every acknowledged byte is there.
 */
class DurableStreamFullDiskTest {
    private static final String TEXT = "text/plain";
    private Path mount;

    @BeforeEach
    void mountASmallFileSystem() throws Exception {
        mount = Files.createTempDirectory("iqstream-full-disk");
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0,
                "mounting a 1 MiB tmpfs needs root (CI runs as root): " + out);
    }

    @AfterEach
    void unmount() throws Exception {
        new ProcessBuilder("umount", mount.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        Files.deleteIfExists(mount);
    }


    @Test
    void aFullDiskIs507AndLosesNothingAcknowledged() throws Exception {
        Path data = mount.resolve("data");
        LaunchedServer server = LaunchedServer.start("--durability", "disk", "--data-dir", data.toString(),
                "--durable-streams-open", "true", "--disk-budget", "64m");
        String base = server.base() + "/v1/stream/full/";
        StringBuilder acked = new StringBuilder();
        HttpResponse<String> r;
        try {
            assertEquals(201, send("PUT", base + "a", null, "Content-Type", TEXT).statusCode());
            int i = 0;
            while (true) {
                String chunk = Character.toString('a' + i % 26).repeat(64 * 1024);
                r = send("POST", base + "a", chunk, "Content-Type", TEXT);
                if (r.statusCode() != 204) {
                    break;
                }
                acked.append(chunk);
                assertTrue(++i < 64, "a 1 MiB file system took 4 MiB");
            }
            assertEquals(507, r.statusCode(), r.body());
            assertTrue(r.body().contains("the disk is full"), r.body());
            assertTrue(acked.length() > 0, "some appends fitted");
            assertEquals(acked.toString(), readAll(base + "a"), "every acknowledged append, and not the refused one");
            assertEquals(507, send("POST", base + "a", "x", "Content-Type", TEXT).statusCode(),
                    "the stream takes no more writes");
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_durable_storage_failures_total 1\n"), metrics);
            assertTrue(server.isAlive());
            // the space comes back with the stream's DELETE
            assertEquals(204, send("DELETE", base + "a", null).statusCode());
            assertEquals(201, send("PUT", base + "b", "kept", "Content-Type", TEXT).statusCode());
            assertEquals(204, send("POST", base + "b", "x".repeat(64 * 1024), "Content-Type", TEXT).statusCode());
            server.sigkill();
            server = LaunchedServer.start("--durability", "disk", "--data-dir", data.toString(),
                    "--durable-streams-open", "true", "--disk-budget", "64m");
            base = server.base() + "/v1/stream/full/";
            assertEquals("kept" + "x".repeat(64 * 1024), readAll(base + "b"));
            assertEquals(404, send("GET", base + "a?offset=-1", null).statusCode());
        } finally {
            if (server.isAlive()) {
                server.close();
            }
        }
    }
}

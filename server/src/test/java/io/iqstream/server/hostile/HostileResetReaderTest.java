package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A reader that stops reading, lets the server queue its writes, then resets the connection: closing it fails
 * every write still queued (with the void promises the SSE path writes with, each failure goes through the
 * pipeline to the router), and each of those once logged a line and closed the connection again — a regular
 * expression and a walk of the pipeline per queued write, thousands per reset, all on the worker that serves every
 * other run on it. Here the server runs at {@code --log-level debug}: after the reset the connection's failure is
 * one line, not one per queued write, and an honest run on the same server streams whole.
 */
class HostileResetReaderTest {
    private static final int EVENTS = 20_000;

    @Test
    void aResetReaderWithThousandsOfQueuedWritesCostsOneFailure() throws Exception {
        try (HostileServer server = HostileServer.start("--log-level", "debug", "--workers", "1")) {
            String token = Tokens.admin();
            HonestRun honest = HonestRun.start(server, "honest-reset");
            try (Socket publisher = RawHttp.connect(server.port()); Socket reader = new Socket()) {
                RawHttp.write(publisher, RawHttp.publishHead("stalled", "application/x-ndjson", token));
                RawHttp.write(publisher, RawHttp.chunk("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":"
                        + "\"stalled\"}\n"));
                reader.setReceiveBufferSize(4096);
                reader.connect(new InetSocketAddress("127.0.0.1", server.port()));
                RawHttp.write(reader, "GET /v1/runs/stalled/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Authorization: Bearer " + token + "\r\n\r\n");
                Conditions.await("the stalled reader subscribed", 10_000,
                        () -> server.metricNow("iqstream_subscribers_active") >= 2);
                // small events, one chunk each as a backend streams them: the reader reads none of them
                ByteArrayOutputStream batch = new ByteArrayOutputStream();
                for (int i = 0; i < EVENTS; i++) {
                    batch.writeBytes(RawHttp.chunk("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"t"
                            + i + "\"}\n"));
                    if (batch.size() > 16_000) {
                        RawHttp.write(publisher, batch.toByteArray());
                        batch.reset();
                    }
                }
                RawHttp.write(publisher, batch.toByteArray());
                Conditions.await("every event appended", 20_000,
                        () -> server.metricNow("iqstream_events_in_total") >= EVENTS);
                Thread.sleep(500); // the reader's writes queue up to its socket's and Netty's marks
                reader.setSoLinger(true, 0);
                reader.close(); // RST
                Conditions.await("the reset reader gone", 10_000,
                        () -> server.metricNow("iqstream_subscribers_active") <= 1);
                Thread.sleep(500); // its failure lines, if any, still coming in from the process's output
            }
            honest.assertWhole();
            List<String> failures = List.of(server.output().split("\n")).stream()
                    .filter(l -> l.contains("connection ") && l.contains(" failed: ")).toList();
            assertTrue(!failures.isEmpty(), "the reset was logged at debug\n" + server.output());
            assertEquals(1, failures.size(), "failure lines for one reset connection (first: " + failures.get(0)
                    + ")");
            server.assertSound();
        }
    }
}

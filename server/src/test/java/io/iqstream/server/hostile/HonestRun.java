package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Tokens;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An honest backend and an honest browser going about their business while an attack runs: a standard AG-UI run
 * of {@value #EVENTS} events (RUN_STARTED, a message streamed token by token, RUN_FINISHED) published as chunked
 * NDJSON one event every ~5 ms, and a subscriber reading it over SSE from the first event. {@link #assertWhole}
 * says the attack cost them nothing: every event delivered once, in order, byte for byte, the publish answered
 * 200, and the stream ended by its terminal chunk rather than cut. Each side runs on its own thread.
 */
final class HonestRun {
    static final int EVENTS = 400;
    private static final long PACE_MS = 5;

    private final String runId;
    private final List<String> sent = new ArrayList<>();
    private final AtomicReference<Throwable> publishFailure = new AtomicReference<>();
    private final AtomicReference<Throwable> readFailure = new AtomicReference<>();
    private final AtomicReference<RawHttp.Response> publishReply = new AtomicReference<>();
    private final AtomicReference<RawHttp.Response> stream = new AtomicReference<>();
    private final Thread publisher;
    private final Thread subscriber;

    private HonestRun(int port, String runId) {
        this.runId = runId;
        String token = Tokens.admin();
        sent.add("{\"type\":\"RUN_STARTED\",\"threadId\":\"honest\",\"runId\":\"" + runId + "\"}");
        sent.add("{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}");
        for (int i = 3; i < EVENTS - 1; i++) {
            sent.add("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"token-" + i + " \"}");
        }
        sent.add("{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}");
        sent.add("{\"type\":\"RUN_FINISHED\",\"threadId\":\"honest\",\"runId\":\"" + runId + "\"}");
        this.subscriber = new Thread(() -> {
            try (Socket s = RawHttp.connect(port)) {
                RawHttp.write(s, "GET /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Accept: text/event-stream\r\nAuthorization: Bearer " + token + "\r\n\r\n");
                stream.set(RawHttp.read(s, 120_000));
            } catch (Throwable t) {
                readFailure.set(t);
            }
        }, "honest-subscriber-" + runId);
        this.publisher = new Thread(() -> {
            try (Socket s = RawHttp.connect(port)) {
                RawHttp.write(s, RawHttp.publishHead(runId, "application/x-ndjson", token));
                for (String event : sent) {
                    RawHttp.write(s, RawHttp.chunk(event + "\n"));
                    Thread.sleep(PACE_MS);
                }
                RawHttp.write(s, "0\r\n\r\n");
                publishReply.set(RawHttp.read(s, 30_000));
            } catch (Throwable t) {
                publishFailure.set(t);
            }
        }, "honest-publisher-" + runId);
        subscriber.setDaemon(true);
        publisher.setDaemon(true);
    }

    /** Starts both sides and returns once the run exists on the server (its first event appended). */
    static HonestRun start(HostileServer server, String runId) throws Exception {
        HonestRun run = new HonestRun(server.port(), runId);
        run.subscriber.start();
        run.publisher.start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline && run.publishFailure.get() == null) {
            RawHttp.Response r = RawHttp.get(server.port(), "/v1/runs/" + runId, "Authorization: Bearer "
                    + Tokens.admin());
            if (r.status() == 200) {
                return run;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the honest run " + runId + " did not start: " + run.publishFailure.get());
    }

    /** Waits for both sides, then asserts the run was delivered whole. */
    void assertWhole() throws InterruptedException {
        publisher.join(120_000);
        subscriber.join(120_000);
        assertFalse(publisher.isAlive(), "the honest publisher of " + runId + " is stuck");
        assertFalse(subscriber.isAlive(), "the honest subscriber of " + runId + " is stuck");
        assertEquals(null, publishFailure.get(), "the honest publish of " + runId + " failed");
        assertEquals(null, readFailure.get(), "the honest subscriber of " + runId + " failed");
        RawHttp.Response reply = publishReply.get();
        assertEquals(200, reply.status(), "honest publish answered " + reply);
        assertTrue(reply.text().contains("\"lastEventId\":" + EVENTS) && reply.text().contains("\"ended\":true"),
                reply.text());
        RawHttp.Response sse = stream.get();
        assertNotNull(sse);
        assertEquals(200, sse.status(), "honest subscribe answered " + sse);
        List<String[]> frames = frames(sse.text());
        assertEquals(EVENTS, frames.size(), "events delivered to the honest subscriber of " + runId);
        for (int i = 0; i < EVENTS; i++) {
            assertEquals(String.valueOf(i + 1), frames.get(i)[0], "event id at " + i);
            assertEquals(sent.get(i), frames.get(i)[1], "event " + (i + 1) + " of " + runId);
        }
        assertTrue(sse.terminalChunk() && !sse.truncated(), "the honest stream of " + runId
                + " was cut instead of ended");
    }

    /** (id, data) of each SSE frame that carries data. */
    private static List<String[]> frames(String text) {
        List<String[]> out = new ArrayList<>();
        for (String frame : text.split("\n\n")) {
            String id = null;
            StringBuilder data = null;
            for (String line : frame.split("\n")) {
                if (line.startsWith("id: ")) {
                    id = line.substring(4);
                } else if (line.startsWith("data: ")) {
                    data = data == null ? new StringBuilder(line.substring(6)) : data.append('\n').append(line.substring(6));
                }
            }
            if (data != null) {
                out.add(new String[] {id, data.toString()});
            }
        }
        return out;
    }
}

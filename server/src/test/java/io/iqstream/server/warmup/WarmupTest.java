package io.iqstream.server.warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The start-up's JIT warm-up: real requests on a private port, every answer checked, nothing left behind. */
class WarmupTest {

    @Test
    void warmsUpThroughThePipelineAndChecksEveryAnswer() throws Exception {
        // 2 workers: runs and connections land on both loops, so the hand-off between them is exercised too
        try (TestServer server = TestServer.start("--warmup", "450")) {
            WarmupReport r = server.server().warmup();
            assertNull(r.failure(), "the warm-up got a wrong answer or failed: " + r.failure());
            assertTrue(r.requests() >= 450, "requests: " + r.requests());
            // per run: a publish, a live reader, its resumes, a reader of the ended run, its status and a read of it
            // ?ifRunning=true (every other run an AI SDK run)
            assertEquals(r.runs() * 5 + r.resumes(), r.requests(), r.toString());
            assertTrue(r.runs() >= 4 && r.resumes() >= 400, r.toString());
            // a Durable Stream after every other run: made, followed, appended, resumed, read whole, deleted
            assertEquals(r.runs() / WarmupTraffic.STREAM_EVERY_RUNS, r.streams(), r.toString());
            assertEquals(r.streams() * (WarmupTraffic.STREAM_APPENDS + WarmupTraffic.STREAM_RESUMES + 4),
                    r.streamRequests(), r.toString());
        }
    }

    @Test
    void leavesNothingOnTheServersOwnCountersOrPort() throws Exception {
        try (TestServer server = TestServer.start("--warmup", "150")) {
            assertTrue(server.server().warmup().completed(), server.server().warmup().toString());
            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.base()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertEquals(0, gauge(metrics, "iqstream_runs_active"));
            assertEquals(0, gauge(metrics, "iqstream_events_in_total"));
            assertEquals(0, gauge(metrics, "iqstream_events_out_total"));
            assertEquals(0, gauge(metrics, "iqstream_resume_seconds_count"));
            assertEquals(0, gauge(metrics, "iqstream_resume_accept_seconds_count"));
            // the warm-up's runs were its own: the server's port does not know them
            HttpResponse<String> gone = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    server.base() + "/v1/runs/warmup-run-0/events?access_token=" + Tokens.subscriber("*")))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(gone.statusCode() == 404 || gone.statusCode() == 204, gone.statusCode() + " " + gone.body());
            // so were its streams, and its budget: nothing of them is held, or known on the server's port
            assertTrue(server.server().warmup().streams() > 0, server.server().warmup().toString());
            assertEquals(0, gauge(metrics, "iqstream_durable_streams_active"));
            assertEquals(0, gauge(metrics, "iqstream_durable_appends_total"));
            assertEquals(0, gauge(metrics, "iqstream_durable_bytes_held"));
            HttpResponse<String> noStream = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    server.base() + "/v1/stream/warmup/stream-0?offset=-1")).header("Authorization", "Bearer "
                    + Tokens.subscriber("*")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, noStream.statusCode(), noStream.body());
        }
    }

    @Test
    void portsAreBoundFirstAndTheMainPortAcceptsAfterTheWarmup() throws Exception {
        int admin = Ports.free();
        AtomicReference<TestServer> started = new AtomicReference<>();
        Thread starter = new Thread(() -> started.set(TestServer.start("--warmup", "2000", "--admin-port",
                String.valueOf(admin))));
        starter.start();
        try {
            // the admin port answers during the warm-up, and says why the server is not ready
            String readyz = awaitAnswer(admin, "/readyz");
            assertTrue(readyz.startsWith("HTTP/1.1 503") && readyz.contains("warming up"), readyz);
            starter.join(60_000);
            TestServer server = started.get();
            assertTrue(server != null && server.server().warmup().completed(), "not started, or warm-up failed");
            assertTrue(awaitAnswer(admin, "/readyz").startsWith("HTTP/1.1 200"));
            assertTrue(awaitAnswer(server.port(), "/healthz").startsWith("HTTP/1.1 200"));
        } finally {
            starter.join(60_000);
            if (started.get() != null) {
                started.get().close();
            }
        }
    }

    @Test
    void zeroTurnsItOff() {
        try (TestServer server = TestServer.start("--warmup", "0")) {
            assertSame(WarmupReport.OFF, server.server().warmup());
        }
    }


    /** The response head and body to {@code GET path} on {@code port}, retrying until the port is bound (10 s). */
    private static String awaitAnswer(int port, String path) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                s.setSoTimeout(30_000);
                s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            } catch (ConnectException notYet) {
                if (System.nanoTime() - deadline > 0) {
                    throw notYet;
                }
                Thread.sleep(10);
            }
        }
    }

    private static long gauge(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? ([0-9.eE+]+)$").matcher(metrics);
        long sum = 0;
        boolean found = false;
        while (m.find()) {
            sum += (long) Double.parseDouble(m.group(1));
            found = true;
        }
        assertTrue(found, name + " not in /metrics");
        return sum;
    }
}

package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code --demo} attacked as issue 23 did: {@code POST /demo/api/runs} needs no token, so a stranger looping it
 * must meet the demo's own quota and rate limit (429, counted in {@code iqstream_demo_refusals_total}, not logged)
 * while honest publishes keep succeeding and {@code /readyz} stays 200; a 201 means the run exists; and a server
 * started with {@code --demo} never answers {@code /demo} with 404.
 */
class HostileDemoTest {
    private static final Pattern DEMO_REFUSALS = Pattern.compile(
            "(?m)^iqstream_demo_refusals_total\\{reason=\"([a-z_]+)\"} (\\d+)$");

    private static String demoStart(String query) {
        return "POST /demo/api/runs" + query + " HTTP/1.1\r\nHost: " + RawHttp.HOST
                + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    }

    private static byte[] honestRun(String runId) {
        String body = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + runId + "\"}\n"
                + "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n"
                + "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"fine\"}\n"
                + "{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n"
                + "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"" + runId + "\"}\n";
        return RawHttp.publish(runId, "application/x-ndjson", Tokens.publisher("honest-*"),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, Long> demoRefusals(HostileServer server) throws IOException {
        Map<String, Long> counts = new ConcurrentHashMap<>();
        Matcher m = DEMO_REFUSALS.matcher(RawHttp.get(server.healthPort(), "/metrics").text());
        while (m.find()) {
            counts.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return counts;
    }

    private static long demoWarnings(HostileServer server) {
        return server.output().lines().filter(l -> l.contains("WARN") && l.toLowerCase().contains("demo")).count();
    }

    @Test
    void aBurstOfDemoStartsMeetsTheDemoQuotaWhileHonestPublishesAndReadyzHold() throws Exception {
        // a small budget, so the attack of issue 23 (a budget filled by demo runs) fits in the attack's 8 s
        try (HostileServer server = HostileServer.start("--demo", "--memory-budget", "2m")) {
            Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
            List<String> honestFailures = new CopyOnWriteArrayList<>();
            List<String> notReady = new CopyOnWriteArrayList<>();
            AtomicInteger honestPublishes = new AtomicInteger();
            AtomicBoolean attacking = new AtomicBoolean(true);
            long attackMs = 8_000;
            long[] attackedNanos = new long[2]; // from the attackers' start to the end of their last request
            try (AttackWindow window = AttackWindow.open(server)) {
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    threads.add(new Thread(() -> {
                        while (attacking.get()) {
                            try {
                                RawHttp.Response r = RawHttp.exchange(server.port(), demoStart("?speed=1000"), 10_000);
                                statuses.computeIfAbsent(r.status(), s -> new AtomicInteger()).incrementAndGet();
                            } catch (IOException | AssertionError e) {
                                statuses.computeIfAbsent(-1, s -> new AtomicInteger()).incrementAndGet();
                            }
                        }
                    }, "demo-attacker-" + i));
                }
                threads.add(new Thread(() -> {
                    int n = 0;
                    while (attacking.get()) {
                        String runId = "honest-" + (++n) + "-" + Long.toHexString(System.nanoTime());
                        try {
                            RawHttp.Response r = RawHttp.exchange(server.port(), honestRun(runId), 10_000);
                            honestPublishes.incrementAndGet();
                            if (r.status() != 200) {
                                honestFailures.add(runId + ": " + r);
                            }
                            Thread.sleep(400);
                        } catch (Exception | AssertionError e) {
                            honestFailures.add(runId + ": " + e);
                        }
                    }
                }, "honest-publisher"));
                threads.add(new Thread(() -> {
                    while (attacking.get()) {
                        try {
                            RawHttp.Response r = RawHttp.get(server.port(), "/readyz");
                            if (r.status() != 200) {
                                notReady.add(r.toString());
                            }
                            Thread.sleep(100);
                        } catch (Exception | AssertionError e) {
                            notReady.add(e.toString());
                        }
                    }
                }, "readyz-watch"));
                attackedNanos[0] = System.nanoTime();
                threads.forEach(Thread::start);
                Thread.sleep(attackMs);
                attacking.set(false);
                for (Thread t : threads) {
                    t.join(30_000);
                }
                attackedNanos[1] = System.nanoTime();
                window.assertSurvived();
            }
            System.out.println("demo burst for " + (attackedNanos[1] - attackedNanos[0]) / 1_000_000 + " ms: statuses "
                    + statuses + ", honest publishes "
                    + honestPublishes.get() + " (" + honestFailures.size() + " failed), /readyz not 200: "
                    + notReady.size() + ", memory used " + server.metric("iqstream_memory_used_bytes") + " of "
                    + server.metric("iqstream_memory_budget_bytes") + ", demo refusals " + demoRefusals(server));
            int created = statuses.getOrDefault(201, new AtomicInteger()).get();
            int limited = statuses.getOrDefault(429, new AtomicInteger()).get();
            String seen = statuses + " " + server.describe();
            assertTrue(honestPublishes.get() >= 5, "honest publishes made: " + honestPublishes.get());
            assertEquals(List.of(), honestFailures, "every honest publish succeeds beside the demo burst " + seen);
            assertEquals(List.of(), notReady, "/readyz stays 200 through the demo burst " + seen);
            // at most the default rate over the time the attack really lasted (a burst of 10, then 60 a minute: one
            // more a second), plus the one a started second may add; no other slack
            long attackedMs = (attackedNanos[1] - attackedNanos[0]) / 1_000_000;
            long allowed = 10 + attackedMs / 1_000 + 1;
            assertTrue(created >= 1 && created <= allowed, "demo runs created: " + created + ", at most " + allowed
                    + " " + seen);
            assertTrue(limited > 0, "the burst is answered 429 " + seen);
            Map<String, Long> refusals = demoRefusals(server);
            long counted = refusals.values().stream().mapToLong(Long::longValue).sum();
            long refusedSeen = statuses.entrySet().stream().filter(e -> e.getKey() == 429 || e.getKey() == 503)
                    .mapToLong(e -> e.getValue().get()).sum();
            assertEquals(refusedSeen, counted, "every refusal is counted in iqstream_demo_refusals_total "
                    + refusals + " " + seen);
            assertEquals(limited, refusals.get("rate_limited") + refusals.get("memory_share") + refusals.get("max_runs"),
                    "each 429 is one of the demo's own limits " + refusals);
            assertEquals(0, demoWarnings(server), "no WARN line per demo refusal:\n" + server.output());
        }
    }

    @Test
    void aDemoStartIs201OnlyOnceTheRunExistsAndItsRunsAreDeletedAfterTheirRetention() throws Exception {
        try (HostileServer server = HostileServer.start("--demo", "--demo-max-runs", "3", "--demo-rate", "100000",
                "--demo-retention", "3s")) {
            String admin = "Authorization: Bearer " + Tokens.admin();
            List<String> runIds = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RawHttp.Response r = RawHttp.exchange(server.port(), demoStart("?speed=1000"), 10_000);
                assertEquals(201, r.status(), r.toString());
                Matcher m = Pattern.compile("\"runId\":\"([^\"]+)\"").matcher(r.text());
                assertTrue(m.find(), r.text());
                runIds.add(m.group(1));
                assertEquals(200, RawHttp.get(server.port(), "/v1/runs/" + m.group(1), admin).status(),
                        "the run of a 201 exists when the 201 arrives");
            }
            long relayBytes = 0;
            for (String runId : runIds) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                RawHttp.Response status;
                while (!(status = RawHttp.get(server.port(), "/v1/runs/" + runId, admin)).text().contains("\"ended\":true")) {
                    assertTrue(System.nanoTime() < deadline, "the demo run ends: " + status);
                    Thread.sleep(20);
                }
                Matcher bytes = Pattern.compile("\"bytes\":(\\d+)").matcher(status.text());
                assertTrue(bytes.find(), status.text());
                relayBytes += Long.parseLong(bytes.group(1));
            }
            long reserved = server.metric("iqstream_demo_reserved_bytes");
            System.out.println("3 demo runs: the relay holds " + relayBytes + " bytes, the demo reserved " + reserved);
            assertTrue(relayBytes <= reserved, "the demo's reservation covers what its runs hold: " + relayBytes
                    + " held, " + reserved + " reserved");
            RawHttp.Response full = RawHttp.exchange(server.port(), demoStart("?speed=1000"), 10_000);
            assertEquals(429, full.status(), "a fourth demo run beyond --demo-max-runs 3: " + full);
            assertEquals("demo_quota", full.error(), full.toString());
            assertNotNull(full.header("Retry-After"), full.toString());

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (server.metric("iqstream_demo_runs") != 0) {
                assertTrue(System.nanoTime() < deadline, "demo runs deleted after --demo-retention 3s: "
                        + server.metric("iqstream_demo_runs") + " held");
                Thread.sleep(100);
            }
            for (String runId : runIds) {
                assertEquals(410, RawHttp.get(server.port(), "/v1/runs/" + runId, admin).status(),
                        "deleted by the demo after its retention: " + runId);
            }
            assertEquals(201, RawHttp.exchange(server.port(), demoStart(""), 10_000).status(),
                    "the quota is given back once the runs are deleted");
            assertEquals(1L, demoRefusals(server).get("max_runs"), demoRefusals(server).toString());
        }
    }

    @Test
    void aDemoRunWhoseFirstEventTheRelayRefusesIsNever201() throws Exception {
        // the demo's first event (RUN_STARTED with two ids and a timestamp) is over 64 bytes: the relay says 413
        try (HostileServer server = HostileServer.start("--demo", "--max-event-bytes", "64")) {
            RawHttp.Response r = RawHttp.exchange(server.port(), demoStart("?speed=1000"), 10_000);
            assertEquals(503, r.status(), "no 201 for a run the relay did not create: " + r);
            assertEquals("publish_failed", r.error(), r.toString());
            assertEquals(0, server.metric("iqstream_demo_runs"), "nothing held for it");
            assertEquals(1L, demoRefusals(server).get("publish_failed"), demoRefusals(server).toString());
            assertEquals(0, demoWarnings(server), server.output());
        }
    }

    @Test
    void aServerStartedWithDemoNeverAnswersDemo404() throws Exception {
        int port = Ports.free();
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "io.iqstream.server.Main", "serve", "--host", "127.0.0.1", "--port", String.valueOf(port),
                "--workers", "2", "--jwt-secret", TestServer.SECRET, "--warmup", "0", "--demo");
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        List<Integer> answers = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // from the process's start: every answer to GET /demo, as soon as the port takes a connection
            while (answers.size() < 20) {
                assertTrue(System.nanoTime() < deadline && p.isAlive(), "the server did not answer: " + answers);
                try {
                    answers.add(RawHttp.get(port, "/demo").status());
                } catch (ConnectException e) {
                    Thread.onSpinWait(); // not bound yet
                } catch (IOException | AssertionError e) {
                    answers.add(-1);
                }
            }
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        assertFalse(answers.contains(404), "GET /demo answered 404 (demo not installed yet) just after start: "
                + answers);
        assertTrue(answers.stream().allMatch(s -> s == 200), answers.toString());
    }
}

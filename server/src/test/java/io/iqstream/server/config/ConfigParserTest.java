package io.iqstream.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigParserTest {
    @Test
    void defaultsMatchTheContract() {
        ServerConfig c = ConfigParser.parse(new String[0], Map.of());
        assertEquals("0.0.0.0", c.host());
        assertEquals(8080, c.port());
        assertEquals(Runtime.getRuntime().availableProcessors(), c.workers());
        assertEquals(60_000, c.retentionMs());
        assertEquals(10_000, c.awaitRunMs());
        assertEquals(30_000, c.publisherTimeoutMs());
        assertEquals(300_000, c.runIdleTimeoutMs());
        assertEquals(1 << 20, c.maxEventBytes());
        assertEquals(32 << 20, c.maxRunBytes());
        assertEquals(15_000, c.heartbeatMs());
        assertEquals(1_000, c.retryMs());
        assertEquals(60_000, c.drainTimeoutMs());
        assertTrue(c.authEnabled());
        assertTrue(c.devMode());
        assertEquals(List.of(), c.corsOrigins());
        assertEquals(6_000, c.warmupRequests());
        assertEquals(1_000, c.storm().retryJitterMs());
        assertEquals(4096, c.storm().listenBacklog());
    }

    @Test
    void stormSettingsAreBounded() {
        ServerConfig c = ConfigParser.parse(new String[] {"--retry-jitter", "5s", "--listen-backlog", "16384"},
                Map.of());
        assertEquals(5_000, c.storm().retryJitterMs());
        assertEquals(16384, c.storm().listenBacklog());
        assertEquals(0, ConfigParser.parse(new String[] {"--retry-jitter", "0"}, Map.of()).storm().retryJitterMs());
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--retry-jitter", "2m"}, Map.of()));
        assertTrue(e.getMessage().contains("--retry-jitter"), e.getMessage());
        e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--listen-backlog", "100000"}, Map.of()));
        assertTrue(e.getMessage().contains("--listen-backlog"), e.getMessage());
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--listen-backlog", "0"}, Map.of()));
    }

    @Test
    void flagsBeatEnvironmentTwins() {
        ServerConfig c = ConfigParser.parse(new String[] {"--port", "9000", "--retention=5m"},
                Map.of("IQSTREAM_PORT", "7000", "IQSTREAM_HEARTBEAT", "2s", "IQSTREAM_JWT_SECRET", "s".repeat(32),
                        "IQSTREAM_CORS_ORIGIN", "https://a.example, https://b.example"));
        assertEquals(9000, c.port());
        assertEquals(300_000, c.retentionMs());
        assertEquals(2_000, c.heartbeatMs());
        assertFalse(c.devMode());
        assertEquals(List.of("https://a.example", "https://b.example"), c.corsOrigins());
    }

    @Test
    void sizesAndDurationsTakeTheirUnits() {
        assertEquals(512 * 1024, Quantities.parseBytes("512k"));
        assertEquals(2L << 30, Quantities.parseBytes("2g"));
        assertEquals(3 << 20, Quantities.parseBytes("3MiB"));
        assertEquals(250, Quantities.parseDurationMs("250ms"));
        assertEquals(90_000, Quantities.parseDurationMs("90s"));
        assertEquals(300_000, Quantities.parseDurationMs("5m"));
    }

    @Test
    void badValuesNameTheFlagAndItsVariable() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--retention", "soon"}, Map.of()));
        assertTrue(e.getMessage().contains("--retention") && e.getMessage().contains("IQSTREAM_RETENTION"),
                e.getMessage());
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--port", "70000"}, Map.of()));
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--bogus", "1"}, Map.of()));
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--auth", "maybe"}, Map.of()));
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--workers", "0"}, Map.of()));
        assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--max-event-bytes", "2m", "--max-run-bytes", "1m"}, Map.of()));
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--port"}, Map.of()));
        e = assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--warmup", "-1"}, Map.of()));
        assertTrue(e.getMessage().contains("--warmup"), e.getMessage());
        assertEquals(0, ConfigParser.parse(new String[0], Map.of("IQSTREAM_WARMUP", "0")).warmupRequests());
    }

    @Test
    void limitsOutOfRangeAreRefusedAtStart() {
        // --max-event-bytes 4g used to be accepted and then cast to int, making every event a 413
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--max-event-bytes", "4g", "--max-run-bytes", "8g"}, Map.of()));
        assertTrue(e.getMessage().contains("--max-event-bytes"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--max-run-bytes", "2g"},
                Map.of()));
        assertTrue(e.getMessage().contains("--max-run-bytes"), e.getMessage());
        e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--memory-budget", "99999999999g"}, Map.of()));
        assertTrue(e.getMessage().contains("--memory-budget"), e.getMessage());
        e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--retention", "999999999999999m"}, Map.of()));
        assertTrue(e.getMessage().contains("--retention"), e.getMessage());
        e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--port", "9000", "--admin-port", "9000"}, Map.of()));
        assertTrue(e.getMessage().contains("--admin-port"), e.getMessage());
        assertEquals(64L << 20, ConfigParser.parse(new String[] {"--max-event-bytes", "64m", "--max-run-bytes", "64m"}, Map.of())
                .maxEventBytes());
    }

    @Test
    void connectionLimitsHaveSafeDefaults() {
        ServerConfig c = ConfigParser.parse(new String[0], Map.of());
        assertEquals(10_000, c.headerTimeoutMs());
        assertEquals(60_000, c.idleTimeoutMs());
        assertEquals(0, c.maxConnections());
        assertEquals(ServerConfig.NO_ADMIN_PORT, c.adminPort());
        assertFalse(c.allowTokensWithoutExp());
        c = ConfigParser.parse(new String[] {"--admin-port", "9091", "--allow-tokens-without-exp",
            "--max-connections", "500", "--header-timeout", "2s"}, Map.of());
        assertEquals(9091, c.adminPort());
        assertTrue(c.allowTokensWithoutExp());
        assertEquals(500, c.maxConnections());
        assertEquals(2_000, c.headerTimeoutMs());
    }

    @Test
    void bodyTimeoutDefaultsTo30sAndIsValidated() {
        assertEquals(30_000, ConfigParser.parse(new String[0], Map.of()).bodyTimeoutMs());
        assertEquals(1_500, ConfigParser.parse(new String[] {"--body-timeout", "1500ms"}, Map.of()).bodyTimeoutMs());
        assertEquals(5_000, ConfigParser.parse(new String[0], Map.of("IQSTREAM_BODY_TIMEOUT", "5s")).bodyTimeoutMs());
        for (String bad : new String[] {"0", "50ms", "soon", "8d"}) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> ConfigParser.parse(new String[] {"--body-timeout", bad}, Map.of()), bad);
            assertTrue(e.getMessage().contains("--body-timeout"), e.getMessage());
        }
    }

    @Test
    void helpListsEveryFlagWithItsVariableAndDefault() {
        String help = ConfigParser.help();
        for (Flag f : Flag.values()) {
            assertTrue(help.contains(f.flag()), f.flag());
            assertTrue(help.contains(f.env()), f.env());
            if (!f.defaultValue().isEmpty()) {
                assertTrue(help.contains("(default " + f.defaultValue() + ")"), f.flag());
            }
        }
    }

    @Test
    void durableStreamsOpenNeedsALoopbackHost() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigParser.parse(new String[] {"--durable-streams-open"}, Map.of()));
        assertTrue(e.getMessage().contains("loopback"), e.getMessage());
        assertThrows(ConfigException.class, () -> ConfigParser.parse(
                new String[] {"--durable-streams-open", "--host", "10.0.0.5"}, Map.of()));
        for (String host : new String[] {"127.0.0.1", "::1", "localhost"}) {
            assertTrue(ConfigParser.parse(new String[] {"--durable-streams-open", "--host", host}, Map.of())
                    .durableStreamsOpen(), host);
        }
        assertFalse(ConfigParser.parse(new String[0], Map.of()).durableStreamsOpen());
        assertEquals(20_000, ConfigParser.parse(new String[0], Map.of()).durableStreamsLongPollMs());
        assertEquals(500, ConfigParser.parse(new String[] {"--durable-streams-long-poll", "500ms"}, Map.of())
                .durableStreamsLongPollMs());
        assertEquals(0, ConfigParser.parse(new String[0], Map.of()).sseLifetimeMs(), "no end of its own by default");
        assertEquals(60_000, ConfigParser.parse(new String[] {"--sse-lifetime", "60s"}, Map.of()).sseLifetimeMs());
        assertEquals(2_000, ConfigParser.parse(new String[0], Map.of("IQSTREAM_SSE_LIFETIME", "2s")).sseLifetimeMs());
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--sse-lifetime", "500ms"},
                Map.of()));
        assertThrows(ConfigException.class, () -> ConfigParser.parse(new String[] {"--sse-lifetime", "-1s"},
                Map.of()));
    }
}

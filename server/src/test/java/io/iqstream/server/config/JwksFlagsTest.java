package io.iqstream.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --jwks as a file or a URL, and the refresh flags, validated at start. */
class JwksFlagsTest {
    @TempDir
    Path dir;

    private static ServerConfig parse(String... args) {
        return ConfigParser.parse(args, Map.of());
    }

    private static String refusal(String... args) {
        return assertThrows(ConfigException.class, () -> parse(args)).getMessage();
    }

    @Test
    void jwksTakesAnHttpsUrlOrLoopbackHttpAndItIsNotDevMode() {
        ServerConfig c = parse("--jwks", "https://id.example.com/.well-known/jwks.json");
        assertEquals(URI.create("https://id.example.com/.well-known/jwks.json"), c.jwksUrl());
        assertNull(c.jwks());
        assertFalse(c.devMode(), "a JWKS URL is a key source");
        assertEquals(10_000, c.jwksTimeoutMs());
        assertEquals(15_000, c.jwksRefreshMinMs());
        assertEquals(600_000, c.jwksRefreshMaxMs());
        assertEquals(24 * 3_600_000L, c.jwksMaxAgeMs());
        for (String loopback : new String[] {"http://127.0.0.1:8081/jwks", "http://localhost/jwks", "http://[::1]:9/k"}) {
            assertEquals(URI.create(loopback), parse("--jwks", loopback).jwksUrl(), loopback);
        }
        assertTrue(refusal("--jwks", "http://id.example.com/jwks.json").contains("https://"));
        assertTrue(refusal("--jwks", "ftp://id.example.com/jwks.json").contains("--jwks"));
        assertTrue(refusal("--jwks", "https://x.example", "--jwt-secret", "s".repeat(40)).contains("not several"));
    }

    @Test
    void jwksFileMustBeReadable() throws Exception {
        Path file = Files.writeString(dir.resolve("jwks.json"), "{\"keys\":[]}");
        ServerConfig c = parse("--jwks", file.toString());
        assertEquals(file, c.jwks());
        assertNull(c.jwksUrl());
        assertTrue(refusal("--jwks", dir.resolve("missing.json").toString()).contains("a readable file"));
    }

    @Test
    void refreshBoundsAndMaxAgeAreValidated() throws Exception {
        String url = "https://id.example.com/jwks";
        ServerConfig c = parse("--jwks", url, "--jwks-timeout", "2s", "--jwks-refresh-min", "5s",
                "--jwks-refresh-max", "1m", "--jwks-max-age", "2h");
        assertEquals(2_000, c.jwksTimeoutMs());
        assertEquals(5_000, c.jwksRefreshMinMs());
        assertEquals(60_000, c.jwksRefreshMaxMs());
        assertEquals(7_200_000, c.jwksMaxAgeMs());
        assertTrue(refusal("--jwks", url, "--jwks-refresh-min", "5m", "--jwks-refresh-max", "1m")
                .contains("--jwks-refresh-max"));
        assertTrue(refusal("--jwks", url, "--jwks-max-age", "5m").contains("--jwks-max-age"));
        assertTrue(refusal("--jwks", url, "--jwks-refresh-min", "10ms").contains("at least 1000ms"));
        assertTrue(refusal("--jwks", url, "--jwks-timeout", "200h").contains("at most 7d"));
    }

    @Test
    void caIsOnlyForAnHttpsUrl() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
        assertEquals(ca, parse("--jwks", "https://id.example.com/jwks", "--jwks-ca", ca.toString()).jwksCa());
        assertTrue(refusal("--jwks", "http://127.0.0.1/jwks", "--jwks-ca", ca.toString()).contains("--jwks-ca"));
        assertTrue(refusal("--jwks-ca", ca.toString(), "--jwt-secret", "s".repeat(40)).contains("--jwks-ca"));
        assertTrue(refusal("--jwks", "https://id.example.com/jwks", "--jwks-ca", dir.resolve("none.pem").toString())
                .contains("a readable file"));
    }
}

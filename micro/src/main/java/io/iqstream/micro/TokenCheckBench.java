package io.iqstream.micro;

import io.iqstream.server.auth.AuthDecision;
import io.iqstream.server.auth.AuthSettings;
import io.iqstream.server.auth.Authorizer;
import io.iqstream.server.auth.Right;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Keys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What checking a reader's token costs a reconnect: {@link Authorizer#authorize} of a subscribe token, for each
 * signing algorithm the server takes, with the verified-token cache off (every reconnect verifies the signature:
 * the first connection of a token) and on (a reconnect with a token already verified: the storm's case).
 * The keys are made at setup (RSA 2048, P-256, Ed25519) and given to the server as {@code --jwt-secret} or a
 * {@code --jwt-public-key} PEM file.
 */
@State(Scope.Thread)
public class TokenCheckBench extends HotPathBench {
    @Param({"HS256", "RS256", "ES256", "EdDSA"})
    public String alg;

    @Param({"verify", "cached"})
    public String path;

    private Authorizer authorizer;
    private String token;
    private Path pem;

    @Setup
    public void setUp() throws Exception {
        Map<String, List<String>> rights = Map.of("subscribe", List.of("run-1"));
        Date exp = new Date(System.currentTimeMillis() + 24 * 3600_000L);
        AuthSettings settings;
        if (alg.equals("HS256")) {
            String secret = "s".repeat(32) + "-micro-bench-secret";
            settings = AuthSettings.hmac(secret);
            token = Jwts.builder().claim("iqstream", rights).expiration(exp)
                    .signWith(Keys.hmacShaKeyFor(secret.getBytes(StandardCharsets.UTF_8)), Jwts.SIG.HS256).compact();
        } else {
            KeyPair pair = switch (alg) {
                case "RS256" -> generate("RSA", 2048);
                case "ES256" -> ec();
                default -> generate("Ed25519", 0);
            };
            pem = Files.createTempFile("iqstream-micro-key", ".pem");
            Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(pair.getPublic().getEncoded())
                    + "\n-----END PUBLIC KEY-----\n");
            settings = AuthSettings.publicKeyPem(pem);
            PrivateKey key = pair.getPrivate();
            var builder = Jwts.builder().claim("iqstream", rights).expiration(exp);
            token = switch (alg) {
                case "RS256" -> builder.signWith(key, Jwts.SIG.RS256).compact();
                case "ES256" -> builder.signWith(key, Jwts.SIG.ES256).compact();
                default -> builder.signWith(key, Jwts.SIG.EdDSA).compact();
            };
        }
        int cacheSize = path.equals("cached") ? AuthSettings.DEFAULT_CACHE_SIZE : 0;
        authorizer = Authorizer.create(settings.withLimits(AuthSettings.DEFAULT_CLOCK_SKEW, cacheSize));
        AuthDecision first = authorizer.authorize(token, "run-1", Right.SUBSCRIBE);
        if (first != AuthDecision.ALLOWED) {
            throw new IllegalStateException(alg + " token refused: " + first);
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        authorizer.close();
        if (pem != null) {
            Files.deleteIfExists(pem);
        }
    }

    @Benchmark
    public AuthDecision authorize() {
        return authorizer.authorize(token, "run-1", Right.SUBSCRIBE);
    }

    private static KeyPair generate(String algorithm, int bits) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
        if (bits > 0) {
            g.initialize(bits);
        }
        return g.generateKeyPair();
    }

    private static KeyPair ec() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }
}

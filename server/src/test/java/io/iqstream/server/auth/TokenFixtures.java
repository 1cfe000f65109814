package io.iqstream.server.auth;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jsonwebtoken.JwtBuilder;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwk;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.PublicJwk;
import io.jsonwebtoken.security.SecureDigestAlgorithm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Keys, key files and tokens made by the tests. */
final class TokenFixtures {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String SECRET_32 = "0123456789abcdef0123456789abcdef";
    static final String SECRET_64 = SECRET_32 + SECRET_32;

    private TokenFixtures() {
    }

    /** RSA key generation is slow; 2048-bit pairs come round from a small pool, distinct for four calls in a row. */
    private static final KeyPair[] RSA_2048 = new KeyPair[4];
    private static final AtomicInteger RSA_CALLS = new AtomicInteger();

    static KeyPair rsa(int bits) {
        if (bits != 2048) {
            return generate("RSA", bits, null);
        }
        int i = RSA_CALLS.getAndIncrement() % RSA_2048.length;
        synchronized (RSA_2048) {
            if (RSA_2048[i] == null) {
                RSA_2048[i] = generate("RSA", bits, null);
            }
            return RSA_2048[i];
        }
    }

    static KeyPair ec(String curve) {
        return generate("EC", 0, curve);
    }

    static KeyPair ed25519() {
        return generate("Ed25519", 0, null);
    }

    static KeyPair ed448() {
        return generate("Ed448", 0, null);
    }

    private static KeyPair generate(String algorithm, int bits, String curve) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance(algorithm);
            if (bits > 0) {
                g.initialize(bits);
            } else if (curve != null) {
                g.initialize(new ECGenParameterSpec(curve));
            }
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {"publish": publish, "subscribe": subscribe} for the iqstream claim. */
    static Map<String, Object> rights(List<String> publish, List<String> subscribe) {
        Map<String, Object> rights = new LinkedHashMap<>();
        rights.put("publish", publish);
        rights.put("subscribe", subscribe);
        return rights;
    }

    /** A builder with the iqstream claim and exp one hour after {@code now}. */
    static JwtBuilder builder(Instant now, Object iqstreamClaim) {
        JwtBuilder b = Jwts.builder().issuedAt(Date.from(now)).expiration(Date.from(now.plusSeconds(3600)));
        if (iqstreamClaim != null) {
            b.claim("iqstream", iqstreamClaim);
        }
        return b;
    }

    static String sign(Key key, SecureDigestAlgorithm<?, ?> alg, String kid, Instant now, Object iqstreamClaim) {
        JwtBuilder b = builder(now, iqstreamClaim);
        if (kid != null) {
            b.header().keyId(kid);
        }
        return signWith(b, key, alg);
    }

    @SuppressWarnings("unchecked")
    static String signWith(JwtBuilder b, Key key, SecureDigestAlgorithm<?, ?> alg) {
        // The builder's signWith is typed per key kind; tests pick the pair themselves.
        return b.signWith(key, (SecureDigestAlgorithm<Key, ?>) alg).compact();
    }

    static String hmacToken(String secret, Instant now, Object iqstreamClaim) {
        return sign(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"), Jwts.SIG.HS256, null,
                now, iqstreamClaim);
    }

    /** A compact JWS with the given header and payload JSON, HMAC-signed with raw key bytes. */
    static String rawHmac(byte[] keyBytes, String jcaMac, Map<String, ?> header, Map<String, ?> payload) {
        String signingInput = b64(json(header)) + "." + b64(json(payload));
        try {
            Mac mac = Mac.getInstance(jcaMac);
            mac.init(new SecretKeySpec(keyBytes, jcaMac));
            return signingInput + "." + b64(mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A compact JWS with the given header and payload JSON and the given signature part. */
    static String raw(Map<String, ?> header, Map<String, ?> payload, String signaturePart) {
        return b64(json(header)) + "." + b64(json(payload)) + "." + signaturePart;
    }

    static Map<String, Object> payload(Instant now, Object iqstreamClaim) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("iat", now.getEpochSecond());
        p.put("exp", now.getEpochSecond() + 3600);
        p.put("iqstream", iqstreamClaim);
        return p;
    }

    static byte[] json(Object value) {
        try {
            return JSON.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String pem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
    }

    static Path writePem(Path dir, String name, PublicKey key) {
        return write(dir.resolve(name), pem(key));
    }

    static PublicJwk<?> jwk(PublicKey key, String kid) {
        return Jwks.builder().key(key).id(kid).build();
    }

    /** A JWKS file holding the given public keys as JWKs, in order. */
    static Path writeJwks(Path dir, String name, List<? extends Jwk<?>> keys) {
        List<String> parts = new ArrayList<>();
        for (Jwk<?> k : keys) {
            parts.add(k instanceof PublicJwk<?> p ? Jwks.json(p) : Jwks.UNSAFE_JSON(k));
        }
        return write(dir.resolve(name), "{\"keys\":[" + String.join(",", parts) + "]}");
    }

    static Path write(Path file, String text) {
        try {
            return Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package io.iqstream.server.auth;

import io.jsonwebtoken.JwtException;
import io.jsonwebtoken.jackson.io.JacksonDeserializer;
import io.jsonwebtoken.security.Jwk;
import io.jsonwebtoken.security.JwkSet;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.PrivateJwk;
import io.jsonwebtoken.security.PublicJwk;
import io.jsonwebtoken.security.SecretJwk;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the signature-verification keys of a JWKS file ({@code --jwks}, RFC 7517
 * {@code {"keys": [...]}}), parsed by jjwt.
 *
 * <p>Keys marked {@code "use": "enc"} are skipped. Refused, with a message naming the file: a
 * file that is not a JWK Set, a damaged or unsupported key, a symmetric ({@code "oct"}) key
 * (HMAC secrets go in {@code --jwt-secret}), a key with private material, a duplicate
 * {@code kid}, and a key without {@code kid} in a set of several (it could never be selected).
 *
 * <p>{@link #parseLenient} reads a set fetched from a URL (or a file re-read after a change), where
 * one bad key must not cost the others: each key that would be refused above is skipped instead,
 * with a line saying why, and only a set with no usable key at all is refused.
 *
 * <p>Stateless; any thread.
 */
final class JwksFile {

    private JwksFile() {
    }

    /** Keys read from a set, and one line for each key skipped. */
    record Lenient(List<VerificationKey> keys, List<String> skipped) {
    }

    /**
     * The usable verification keys of JWK Set text, skipping (with a reason in {@link Lenient#skipped})
     * each key that is damaged, unsupported, symmetric, private, for encryption, of an {@code alg}
     * its type cannot verify, a repeated {@code kid}, or without {@code kid} among several keys.
     *
     * @param where the set's origin, for messages
     * @throws IllegalArgumentException when the text is not a JSON object with a {@code keys} array
     */
    @SuppressWarnings("unchecked")
    static Lenient parseLenient(String text, String where) {
        Map<String, ?> document;
        try {
            document = new JacksonDeserializer<Map<String, ?>>().deserialize(new StringReader(text));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(where + " is not JSON: " + e.getMessage(), e);
        }
        if (document == null || !(document.get("keys") instanceof List<?> list)) {
            throw new IllegalArgumentException(where + " is not a JWK Set: no \"keys\" array");
        }
        List<VerificationKey> keys = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        Set<String> kids = new HashSet<>();
        int position = 0;
        for (Object item : list) {
            position++;
            String label = "key #" + position;
            if (!(item instanceof Map<?, ?> map)) {
                skipped.add(label + ": not a JSON object");
                continue;
            }
            Object kidValue = map.get("kid");
            if (kidValue instanceof String kidText) {
                label += " (kid " + kidText + ")";
            }
            Jwk<?> jwk;
            try {
                jwk = Jwks.builder().add((Map<String, ?>) map).build();
            } catch (JwtException | IllegalArgumentException | ClassCastException e) {
                skipped.add(label + ": " + e.getMessage());
                continue;
            }
            if (jwk instanceof SecretJwk) {
                skipped.add(label + ": a symmetric 'oct' key");
            } else if (jwk instanceof PrivateJwk<?, ?, ?>) {
                skipped.add(label + ": holds private key material");
            } else if (!(jwk instanceof PublicJwk<?> publicJwk)) {
                skipped.add(label + ": unsupported key type " + jwk.getType());
            } else if ("enc".equals(publicJwk.getPublicKeyUse())) {
                skipped.add(label + ": marked for encryption (use enc)");
            } else if (jwk.getId() != null && !kids.add(jwk.getId())) {
                skipped.add(label + ": repeats kid " + jwk.getId());
            } else {
                try {
                    keys.add(VerificationKey.publicKey(jwk.getId(), publicJwk.toKey(), jwk.getAlgorithm()));
                } catch (IllegalArgumentException e) {
                    skipped.add(label + ": " + e.getMessage());
                }
            }
        }
        if (keys.size() > 1) {
            List<VerificationKey> withKid = new ArrayList<>();
            for (VerificationKey key : keys) {
                if (key.kid() == null) {
                    skipped.add("a key without kid among several: " + key.description());
                } else {
                    withKid.add(key);
                }
            }
            keys = withKid;
        }
        return new Lenient(List.copyOf(keys), List.copyOf(skipped));
    }

    /** Reads the file's verification keys: at least one. */
    static List<VerificationKey> read(Path file) {
        String text = PemKeyFile.readText(file, "JWKS");
        JwkSet set;
        try {
            set = Jwks.setParser()
                    .json(new JacksonDeserializer<>())
                    .ignoreUnsupported(false)
                    .build()
                    .parse(text);
        } catch (JwtException | IllegalArgumentException e) {
            throw new IllegalArgumentException("JWKS file " + file + " is not a valid JWK Set: " + e.getMessage(), e);
        }
        List<VerificationKey> keys = new ArrayList<>();
        Set<String> kids = new HashSet<>();
        int position = 0;
        for (Jwk<?> jwk : set.getKeys()) {
            position++;
            String where = "JWKS file " + file + " key #" + position + (jwk.getId() == null ? "" : " (kid " + jwk.getId() + ")");
            if (jwk instanceof SecretJwk) {
                throw new IllegalArgumentException(where + " is a symmetric 'oct' key;"
                        + " give an HMAC secret with --jwt-secret instead");
            }
            if (jwk instanceof PrivateJwk<?, ?, ?>) {
                throw new IllegalArgumentException(where + " holds private key material;"
                        + " the server needs only the public keys: remove 'd' (and 'p', 'q', ...) from it");
            }
            if (!(jwk instanceof PublicJwk<?> publicJwk)) {
                throw new IllegalArgumentException(where + " has unsupported key type " + jwk.getType());
            }
            if ("enc".equals(publicJwk.getPublicKeyUse())) {
                continue;
            }
            if (jwk.getId() != null && !kids.add(jwk.getId())) {
                throw new IllegalArgumentException("JWKS file " + file + " has two keys with kid " + jwk.getId());
            }
            try {
                keys.add(VerificationKey.publicKey(jwk.getId(), publicJwk.toKey(), jwk.getAlgorithm()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("JWKS file " + file + ": " + e.getMessage(), e);
            }
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("JWKS file " + file + " has no signature-verification key");
        }
        if (keys.size() > 1) {
            for (VerificationKey key : keys) {
                if (key.kid() == null) {
                    throw new IllegalArgumentException("JWKS file " + file + " holds " + keys.size()
                            + " keys and one without 'kid'; every key needs a kid when there are several");
                }
            }
        }
        return keys;
    }
}

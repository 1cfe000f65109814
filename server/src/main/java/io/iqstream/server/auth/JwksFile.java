package io.iqstream.server.auth;

import io.jsonwebtoken.JwtException;
import io.jsonwebtoken.jackson.io.JacksonDeserializer;
import io.jsonwebtoken.security.Jwk;
import io.jsonwebtoken.security.JwkSet;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.PrivateJwk;
import io.jsonwebtoken.security.PublicJwk;
import io.jsonwebtoken.security.SecretJwk;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
 * <p>Stateless; any thread. Used once at startup.
 */
final class JwksFile {

    private JwksFile() {
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

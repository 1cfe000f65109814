package io.iqstream.server.auth;

import io.jsonwebtoken.JwsHeader;
import io.jsonwebtoken.LocatorAdapter;
import io.jsonwebtoken.UnsupportedJwtException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.Key;
import java.util.List;
import javax.crypto.spec.SecretKeySpec;

/**
 * The configured verification keys, and jjwt's key locator over them: for each token it picks
 * the key and refuses an algorithm that key may not verify.
 *
 * <p>Selection: a single key (a secret, a PEM key, a one-key JWKS) is used whatever the token's
 * {@code kid}, except that a one-key JWKS whose key has a kid refuses a token naming another.
 * In a set of several, the token's {@code kid} picks the key; a token without one, or naming an
 * unknown kid, is refused. The token's {@code alg} must then be one the key permits (see
 * {@link VerificationKey}); {@code alg: none} never reaches here, jjwt's parser refuses it first.
 *
 * <p>A {@code kid} that names no key of the ring is refused with {@link UnknownKidException}, so
 * that a refreshed key set ({@link JwksRefresher}) can be asked for early.
 *
 * <p>Immutable after construction; any thread.
 */
final class KeyRing extends LocatorAdapter<Key> {

    private final List<VerificationKey> keys;
    private final String description;

    private KeyRing(List<VerificationKey> keys, String description) {
        this.keys = List.copyOf(keys);
        this.description = description;
    }

    /** HMAC with the UTF-8 bytes of {@code secret}, which must be at least 32 bytes. */
    static KeyRing fromSecret(String secret) {
        byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < VerificationKey.MIN_HMAC_SECRET_BYTES) {
            throw new IllegalArgumentException("the JWT secret is " + bytes.length + " bytes (UTF-8); it must be at least "
                    + VerificationKey.MIN_HMAC_SECRET_BYTES + " bytes for HS256 (RFC 7518 section 3.2)");
        }
        VerificationKey key = VerificationKey.hmac(new SecretKeySpec(bytes, "HmacSHA256"), bytes.length);
        return new KeyRing(List.of(key), key.description());
    }

    /** The one public key of a PEM file. */
    static KeyRing fromPem(Path file) {
        VerificationKey key;
        try {
            key = VerificationKey.publicKey(null, PemKeyFile.read(file), null);
        } catch (IllegalArgumentException e) {
            throw e.getMessage().contains(file.toString()) ? e
                    : new IllegalArgumentException("public key file " + file + ": " + e.getMessage(), e);
        }
        return new KeyRing(List.of(key), key.description() + " public key from " + file);
    }

    /** The verification keys of a JWKS file. */
    static KeyRing fromJwks(Path file) {
        return fromJwksKeys(JwksFile.read(file), file.toString());
    }

    /** A ring of keys read from a JWK Set at {@code source} (a file or URL, for the log). */
    static KeyRing fromJwksKeys(List<VerificationKey> keys, String source) {
        StringBuilder text = new StringBuilder("JWKS ").append(source).append(": ").append(keys.size())
                .append(keys.size() == 1 ? " key [" : " keys [");
        for (int i = 0; i < keys.size(); i++) {
            text.append(i == 0 ? "" : "; ").append(keys.get(i).description());
        }
        return new KeyRing(keys, text.append(']').toString());
    }

    /** The keys, in set order. */
    List<VerificationKey> keys() {
        return keys;
    }

    /** The key a token with this {@code kid} (null: none) is verified with; as jjwt's locator chooses. */
    VerificationKey keyFor(String kid) {
        return select(kid);
    }

    @Override
    protected Key locate(JwsHeader header) {
        VerificationKey key = select(header.getKeyId());
        String alg = header.getAlgorithm();
        if (alg == null || !key.permits(alg)) {
            throw new UnsupportedJwtException("token algorithm " + alg + " is not permitted for key "
                    + key.description());
        }
        return key.key();
    }

    private VerificationKey select(String kid) {
        if (keys.size() == 1) {
            VerificationKey only = keys.get(0);
            if (kid == null || only.kid() == null || only.kid().equals(kid)) {
                return only;
            }
            throw new UnknownKidException("token kid " + kid + " is not the configured key's");
        }
        if (kid == null) {
            throw new UnsupportedJwtException("token has no kid and " + keys.size() + " keys are configured");
        }
        for (VerificationKey key : keys) {
            if (kid.equals(key.kid())) {
                return key;
            }
        }
        throw new UnknownKidException("token kid " + kid + " is not among the configured keys");
    }

    /** For the startup log. */
    String description() {
        return description;
    }

    /** A token names a {@code kid} that no key of the ring has. */
    static final class UnknownKidException extends UnsupportedJwtException {
        private static final long serialVersionUID = 1L;

        UnknownKidException(String message) {
            super(message);
        }
    }
}

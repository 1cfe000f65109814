package io.iqstream.server.auth;

import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.util.List;
import javax.crypto.SecretKey;

/**
 * One key a token may be verified with: its {@code kid} (null when it has none), the JWS
 * algorithms it may verify, and the key itself.
 *
 * <p>The algorithms follow from the key's type, so a token can never pick an algorithm family
 * that does not belong to the key (algorithm confusion): an HMAC secret verifies HS256/384/512
 * only, as far as its length allows (RFC 7518 §3.2); an RSA key RS256/384/512 and
 * PS256/384/512; an EC key the one ES algorithm of its curve; an Edwards-curve key EdDSA. A JWK
 * that names its {@code alg} is held to that one algorithm. jjwt checks the key against the
 * algorithm again when it verifies.
 *
 * <p>Immutable but for one flag: {@link #retire()} marks a key that has left the refreshed key
 * set, so that tokens cached as verified with it stop being accepted. Any thread.
 */
final class VerificationKey {

    /** Shortest HMAC secret accepted, in bytes: the output size of SHA-256. */
    static final int MIN_HMAC_SECRET_BYTES = 32;
    /** Smallest RSA modulus accepted, in bits (RFC 7518 §3.3). */
    static final int MIN_RSA_BITS = 2048;

    private static final String[] EC_CURVE_NAMES = {"P-256", "P-384", "P-521"};
    private static final String[] EC_ALGORITHMS = {"ES256", "ES384", "ES512"};
    private static final ECParameterSpec[] EC_CURVES = {
        namedCurve("secp256r1"), namedCurve("secp384r1"), namedCurve("secp521r1")};
    private static final List<String> RSA_ALGORITHMS = List.of("RS256", "RS384", "RS512", "PS256", "PS384", "PS512");

    private final String kid;
    private final Key key;
    private final List<String> algorithms;
    private final String description;
    private volatile boolean retired;

    private VerificationKey(String kid, Key key, List<String> algorithms, String description) {
        this.kid = kid;
        this.key = key;
        this.algorithms = algorithms;
        this.description = description;
    }

    /** An HMAC secret of {@code secretBytes} bytes (already checked to be at least 32). */
    static VerificationKey hmac(SecretKey secret, int secretBytes) {
        List<String> algorithms = secretBytes >= 64 ? List.of("HS256", "HS384", "HS512")
                : secretBytes >= 48 ? List.of("HS256", "HS384")
                : List.of("HS256");
        String description = switch (algorithms.size()) {
            case 3 -> "HS256/384/512 shared secret (" + secretBytes + " bytes)";
            case 2 -> "HS256/384 shared secret (" + secretBytes + " bytes; HS512 needs >= 64)";
            default -> "HS256 shared secret (" + secretBytes + " bytes; HS384 needs >= 48, HS512 >= 64)";
        };
        return new VerificationKey(null, secret, algorithms, description);
    }

    /**
     * A public key (RSA, EC on P-256/384/521, Ed25519/Ed448).
     *
     * @param kid the key id, or null
     * @param jwkAlg the {@code alg} its JWK names, or null
     * @throws IllegalArgumentException for another key type, an RSA key under 2048 bits, or a
     *     {@code jwkAlg} the key cannot verify
     */
    static VerificationKey publicKey(String kid, PublicKey key, String jwkAlg) {
        List<String> algorithms;
        String type;
        if (key instanceof RSAPublicKey rsa) {
            int bits = rsa.getModulus().bitLength();
            if (bits < MIN_RSA_BITS) {
                throw new IllegalArgumentException("RSA key" + idText(kid) + " has " + bits
                        + " bits; RS256/PS256 need at least " + MIN_RSA_BITS);
            }
            algorithms = RSA_ALGORITHMS;
            type = "RSA " + bits + "-bit";
        } else if (key instanceof ECPublicKey ec) {
            int curve = jwsCurveIndex(ec.getParams());
            if (curve < 0) {
                throw new IllegalArgumentException("EC key" + idText(kid) + " is not on P-256, P-384 or P-521,"
                        + " the curves of ES256/384/512");
            }
            algorithms = List.of(EC_ALGORITHMS[curve]);
            type = "EC " + EC_CURVE_NAMES[curve];
        } else if (key instanceof EdECPublicKey ed) {
            algorithms = List.of("EdDSA");
            type = ed.getParams().getName();
        } else {
            throw new IllegalArgumentException("unsupported key type " + key.getAlgorithm() + idText(kid)
                    + "; expected RSA, EC or Ed25519/Ed448");
        }
        if (jwkAlg != null) {
            if (!algorithms.contains(jwkAlg)) {
                throw new IllegalArgumentException("key" + idText(kid) + " (" + type + ") names alg " + jwkAlg
                        + ", which it cannot verify; it can verify " + String.join("/", algorithms));
            }
            algorithms = List.of(jwkAlg);
        }
        return new VerificationKey(kid, key, algorithms,
                (kid == null ? "" : "kid " + kid + ": ") + type + " (" + String.join("/", algorithms) + ")");
    }

    /** The index in {@link #EC_CURVE_NAMES} of the curve {@code params} describe, or -1. */
    private static int jwsCurveIndex(ECParameterSpec params) {
        for (int i = 0; i < EC_CURVES.length; i++) {
            ECParameterSpec named = EC_CURVES[i];
            if (named.getCurve().equals(params.getCurve()) && named.getOrder().equals(params.getOrder())
                    && named.getGenerator().equals(params.getGenerator()) && named.getCofactor() == params.getCofactor()) {
                return i;
            }
        }
        return -1;
    }

    private static ECParameterSpec namedCurve(String name) {
        try {
            AlgorithmParameters parameters = AlgorithmParameters.getInstance("EC");
            parameters.init(new ECGenParameterSpec(name));
            return parameters.getParameterSpec(ECParameterSpec.class);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK lacks the EC curve " + name, e);
        }
    }

    private static String idText(String kid) {
        return kid == null ? "" : " (kid " + kid + ")";
    }

    /** The key id, or null. */
    String kid() {
        return kid;
    }

    /** The JCA key to verify with. */
    Key key() {
        return key;
    }

    /** Whether a token signed with JWS algorithm {@code alg} may be verified with this key. */
    boolean permits(String alg) {
        return algorithms.contains(alg);
    }

    /** Whether {@code other} is the same key: same kid, same key material, same algorithms. */
    boolean sameAs(VerificationKey other) {
        return java.util.Objects.equals(kid, other.kid) && key.equals(other.key) && algorithms.equals(other.algorithms);
    }

    /** Marks this key as gone from the key set: tokens verified with it are no longer accepted from the cache. */
    void retire() {
        retired = true;
    }

    /** Whether the key has left the key set. */
    boolean isRetired() {
        return retired;
    }

    /** For the startup log, e.g. {@code "kid a: EC P-256 (ES256)"}. */
    String description() {
        return description;
    }
}

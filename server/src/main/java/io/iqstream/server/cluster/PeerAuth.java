package io.iqstream.server.cluster;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The header that marks a request as forwarded by a peer: {@code X-IQStream-Peer: <unix ms>.<hex HMAC-SHA256>}
 * over the timestamp, the method and the request target, keyed with {@code --cluster-secret}. A request with a
 * valid header is served where it lands and never forwarded again; a missing, forged, or stale (more than
 * {@link #MAX_SKEW_MS} off this node's clock) header makes it an ordinary client request. Its tokens are still
 * checked by the receiving node: the header only says "do not forward", it grants no right.
 *
 * <p>Any thread (a {@link Mac} per thread).
 */
public final class PeerAuth {
    /** The header name. */
    public static final String HEADER = "X-IQStream-Peer";
    /** How far a peer's timestamp may be from this node's clock. */
    static final long MAX_SKEW_MS = 30_000;

    private final SecretKeySpec key;
    private final ThreadLocal<Mac> macs;

    public PeerAuth(String secret) {
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        this.macs = ThreadLocal.withInitial(this::newMac);
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** The header value for a request forwarded now. */
    public String sign(String method, String uri, long nowMs) {
        return nowMs + "." + HexFormat.of().formatHex(mac(nowMs, method, uri));
    }

    /** True when {@code value} is a valid, fresh signature of this request. */
    public boolean verify(String value, String method, String uri, long nowMs) {
        if (value == null) {
            return false;
        }
        int dot = value.indexOf('.');
        if (dot <= 0 || dot > 19) {
            return false;
        }
        long ts;
        byte[] given;
        try {
            ts = Long.parseLong(value.substring(0, dot));
            given = HexFormat.of().parseHex(value, dot + 1, value.length());
        } catch (IllegalArgumentException e) {
            return false;
        }
        if (Math.abs(nowMs - ts) > MAX_SKEW_MS) {
            return false;
        }
        return MessageDigest.isEqual(given, mac(ts, method, uri));
    }

    private byte[] mac(long ts, String method, String uri) {
        Mac mac = macs.get();
        mac.update((ts + "\n" + method + "\n" + uri).getBytes(StandardCharsets.UTF_8));
        return mac.doFinal();
    }
}

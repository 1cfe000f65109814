package io.iqstream.server.cluster;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Proof of {@code --cluster-secret}, both ways, on every request between nodes.
 *
 * <p>A request from node A to node B carries {@code X-IQStream-Peer: 1;<A>;<unix ms>;<nonce>;<hex HMAC-SHA256>}:
 * the hop count (always 1), the sender, the time, a nonce, and an HMAC keyed with the secret over all of them plus
 * the receiver B, the method and the request target. B accepts it only when the HMAC holds for B itself (a header
 * made for another node does not verify here), the time is within {@link #MAX_SKEW_MS} of B's clock, the hop count
 * is 1, and the nonce was not seen before ({@link ReplayWindow}: each header is good once). B's answer carries
 * {@code X-IQStream-Peer-Proof: <hex HMAC>} over the nonce, B, A and the answer's status, which A checks before it
 * believes the answer: a probe's 200, a lookup's "held", a relayed response. A server without the secret can
 * therefore neither become a member nor pass for one, and a request relayed once is never relayed again.
 *
 * <p>A verified request is served where it lands; the header grants no right (the client's token is checked as
 * for any request). Any thread (a {@link Mac} per thread; the replay windows are thread-safe).
 */
public final class PeerAuth {
    /** The request header. */
    public static final String HEADER = "X-IQStream-Peer";
    /** The answer header. */
    public static final String PROOF = "X-IQStream-Peer-Proof";
    /** How far a peer's timestamp may be from this node's clock. */
    static final long MAX_SKEW_MS = 30_000;
    private static final String HOPS = "1";

    private final Member self;
    private final SecretKeySpec key;
    private final ThreadLocal<Mac> macs;
    /** This process's nonces: a random epoch and a counter, so a restart never reuses one. */
    private final String epoch;
    private final AtomicLong sequence = new AtomicLong();
    private final ReplayWindow.Senders seen = new ReplayWindow.Senders();

    /** A request as sent: its header value, and what its answer's proof must match. */
    public record Signed(String header, Member to, String nonce) {}

    /** A request as verified here: who sent it, and the nonce its answer's proof is bound to. */
    public record Incoming(String from, String nonce) {}

    public PeerAuth(String secret, Member self) {
        this.self = self;
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        this.macs = ThreadLocal.withInitial(this::newMac);
        byte[] e = new byte[8];
        new SecureRandom().nextBytes(e);
        this.epoch = HexFormat.of().formatHex(e);
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

    public Member self() {
        return self;
    }

    /** Signs a request to {@code to} made now. */
    public Signed sign(Member to, String method, String target, long nowMs) {
        String nonce = epoch + "-" + sequence.incrementAndGet();
        String from = self.key();
        String mac = hex(mac("req", HOPS, from, to.key(), Long.toString(nowMs), nonce, method, target));
        return new Signed(HOPS + ";" + from + ";" + nowMs + ";" + nonce + ";" + mac, to, nonce);
    }

    /**
     * The verified request, or null when {@code value} is absent, malformed, made for another node, stale, of
     * another hop count, signed with another secret, or a replay (each nonce is taken once).
     */
    public Incoming verify(String value, String method, String target, long nowMs) {
        if (value == null || value.length() > 512) {
            return null;
        }
        String[] f = value.split(";", -1);
        if (f.length != 5 || !f[0].equals(HOPS) || f[1].isEmpty() || f[3].isEmpty()) {
            return null;
        }
        long ts;
        byte[] given;
        try {
            ts = Long.parseLong(f[2]);
            given = HexFormat.of().parseHex(f[4]);
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (Math.abs(nowMs - ts) > MAX_SKEW_MS) {
            return null;
        }
        if (!MessageDigest.isEqual(given, mac("req", HOPS, f[1], self.key(), f[2], f[3], method, target))) {
            return null;
        }
        // only a header that verified reaches the replay check: a stranger cannot fill the windows
        return seen.firstUse(f[1], f[3]) ? new Incoming(f[1], f[3]) : null;
    }

    /** The proof header value for this node's answer, with {@code status}, to the verified request {@code in}. */
    public String prove(Incoming in, int status) {
        return hex(mac("reply", in.nonce(), self.key(), in.from(), Integer.toString(status)));
    }

    /** True when {@code proof} shows that {@code sent}'s receiver, holding the secret, answered {@code status}. */
    public boolean proves(Signed sent, int status, String proof) {
        if (proof == null) {
            return false;
        }
        byte[] given;
        try {
            given = HexFormat.of().parseHex(proof);
        } catch (IllegalArgumentException e) {
            return false;
        }
        return MessageDigest.isEqual(given,
                mac("reply", sent.nonce(), sent.to().key(), self.key(), Integer.toString(status)));
    }

    private byte[] mac(String... parts) {
        Mac mac = macs.get();
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                mac.update((byte) '\n');
            }
            mac.update(parts[i].getBytes(StandardCharsets.UTF_8));
        }
        return mac.doFinal();
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}

import com.durablestreams.ChunkIterator;
import com.durablestreams.DurableStream;
import com.durablestreams.exception.DurableStreamException;
import com.durablestreams.exception.StreamClosedException;
import com.durablestreams.model.Chunk;
import com.durablestreams.model.CloseResult;
import com.durablestreams.model.LiveMode;
import com.durablestreams.model.Metadata;
import com.durablestreams.model.Offset;
import com.durablestreams.model.ReadOptions;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The protocol's Java client (third_party/durable-streams/packages/client-java, compiled from the vendored source)
 * against IQ-Stream's /v1/stream/ with JWTs in its client's {@code header("Authorization", ...)}: create, append, a
 * catch-up read from the start and from a saved offset, a live read (long-poll and SSE) resumed from a saved offset
 * that gets each later append once, the writer's closure, and the tokens' refusals. One IQ-Stream node, started by
 * ../run-tests.sh with --jwt-secret: IQSTREAM_URL and IQSTREAM_JWT_SECRET name it. Exits 1 at the first check that
 * fails.
 *
 * <p>The client's reads do not report a closure (its chunks carry no Stream-Closed; its conformance adapter asks
 * HEAD), and an SSE read can lose the chunks still queued when the server ends the response at the closure (as the
 * protocol asks, on the reference server as here: the iterator checks its reader's end before its queue). So the live
 * read is checked to get each later append once; the writer's closure then, its last message read from the live
 * read's offset, the closure by HEAD.
 * Its {@code append} reads the protocol's {@code 204} answer to a plain append as a duplicate and returns no offset
 * (the reference server answers the same): offsets to resume from come from HEAD and from reads.
 */
public final class JavaClientCheck {
    private static final Pattern ITEM = Pattern.compile("\\{\"n\":(\\d+)\\}");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static String base;
    private static String secret;
    private static int checks;

    public static void main(String[] args) throws Exception {
        base = System.getenv("IQSTREAM_URL");
        secret = System.getenv("IQSTREAM_JWT_SECRET");
        if (base == null || secret == null) {
            throw new IllegalStateException("IQSTREAM_URL and IQSTREAM_JWT_SECRET must name an IQ-Stream node with JWT auth");
        }
        createAppendAndCatchUp();
        liveReadResumedFromSavedOffset(LiveMode.LONG_POLL);
        liveReadResumedFromSavedOffset(LiveMode.SSE);
        tokensAreChecked();
        System.out.println("java client with JWTs: create, catch-up, live reads (long-poll, sse) from a saved offset, closure, tokens: " + checks + " checks passed");
        System.exit(0); // the client's SSE reader threads are not daemons
    }

    static void createAppendAndCatchUp() {
        String path = uniquePath("catchup");
        String url = base + "/v1/stream/" + path;
        DurableStream pub = client(path, "publish");
        DurableStream sub = client(path, "subscribe");
        pub.create(url, "application/json");
        appendN(pub, url, 0, 3);
        Offset saved = sub.head(url).getNextOffset(); // its append() has no offset to give (see above): HEAD has it
        appendN(pub, url, 3, 5);
        Offset tail = sub.head(url).getNextOffset();
        check(tail.compareTo(saved) > 0, "offsets grow: " + saved + ", then " + tail);
        CatchUp all = catchUp(sub, url, Offset.BEGINNING);
        check(all.items.equals(range(0, 5)), "catch-up from the start: " + all.items + ", want n 0..4");
        check(all.offset.equals(tail), "catch-up ends at the tail " + tail + ": " + all.offset);
        CatchUp rest = catchUp(sub, url, saved);
        check(rest.items.equals(range(3, 5)), "catch-up from the offset after n=2: " + rest.items + ", want n 3..4");
        Metadata meta = sub.head(url);
        check(meta.getNextOffset().equals(tail), "head: the tail " + meta.getNextOffset());
        check(!meta.isStreamClosed(), "head: not closed");
    }

    static void liveReadResumedFromSavedOffset(LiveMode mode) throws Exception {
        String path = uniquePath("live-" + mode.name().toLowerCase());
        String url = base + "/v1/stream/" + path;
        DurableStream pub = client(path, "publish");
        DurableStream sub = client(path, "subscribe");
        pub.create(url, "application/json");
        appendN(pub, url, 0, 3);
        CatchUp seen = catchUp(sub, url, Offset.BEGINNING); // a reader that saved where it was
        check(seen.items.equals(range(0, 3)), mode + " catch-up: " + seen.items);

        LinkedBlockingQueue<Object> got = new LinkedBlockingQueue<>();
        ChunkIterator it = sub.read(url, ReadOptions.from(seen.offset).live(mode));
        Thread reader = new Thread(() -> {
            try {
                while (it.hasNext()) {
                    Chunk chunk = it.next();
                    for (int n : items(chunk.getDataAsString())) got.add(n);
                    if (chunk.getNextOffset() != null) got.add(chunk.getNextOffset());
                }
            } catch (RuntimeException e) {
                got.add(e);
            }
        }, "live-reader");
        reader.setDaemon(true);
        reader.start();
        appendN(pub, url, 3, 6);
        List<Integer> items = new ArrayList<>();
        Offset last = seen.offset;
        Object next = null;
        while (items.size() < 3 || !(next instanceof Offset)) { // each later append once, in order, and its offset
            next = got.poll(60, TimeUnit.SECONDS);
            check(next != null, mode + " live read: nothing more after " + items + " at " + last);
            if (next instanceof RuntimeException) throw (RuntimeException) next;
            if (next instanceof Integer) items.add((Integer) next);
            else last = (Offset) next;
        }
        check(items.equals(range(3, 6)), mode + " live read from the saved offset: " + items + ", want n 3..5, each once");
        // the closure, with a last message: read from where the live reader is, as it resumes after its read ends
        CloseResult closed = pub.close(url, "{\"n\":6}".getBytes(StandardCharsets.UTF_8), "application/json");
        check(sub.head(url).isStreamClosed(), mode + " head: closed");
        CatchUp after = catchUp(sub, url, last);
        check(after.items.equals(range(6, 7)), mode + " after the live read's offset: " + after.items + ", want n 6");
        check(after.offset.equals(closed.getFinalOffset()), mode + " the closing offset " + closed.getFinalOffset()
                + " is the tail: " + after.offset);
        it.close();
        for (Object o : got) check(!(o instanceof Integer) || (Integer) o == 6, mode + " the live read had " + o + " twice");
        try {
            pub.append(url, "{\"n\":7}".getBytes(StandardCharsets.UTF_8));
            check(false, mode + " append after the closure succeeded");
        } catch (StreamClosedException e) {
            checks++;
        }
    }

    static void tokensAreChecked() {
        String path = uniquePath("auth");
        String url = base + "/v1/stream/" + path;
        expectStatus(401, "create without a token", () -> DurableStream.create().create(url, "text/plain"));
        client(path, "publish").create(url, "text/plain");
        expectStatus(403, "append with a subscribe-only token",
                () -> client(path, "subscribe").append(url, "x".getBytes(StandardCharsets.UTF_8)));
        expectStatus(403, "head with another stream's token", () -> client(path + "-other", "subscribe", "publish").head(url));
    }

    // --- support

    record CatchUp(List<Integer> items, Offset offset) { }

    static CatchUp catchUp(DurableStream client, String url, Offset from) {
        List<Integer> items = new ArrayList<>();
        Offset offset = from;
        try (ChunkIterator it = client.read(url, ReadOptions.from(from))) {
            while (it.hasNext()) {
                Chunk chunk = it.next();
                items.addAll(items(chunk.getDataAsString()));
                if (chunk.getNextOffset() != null) offset = chunk.getNextOffset();
            }
        }
        return new CatchUp(items, offset);
    }

    static void appendN(DurableStream client, String url, int from, int to) {
        for (int i = from; i < to; i++) {
            client.append(url, ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
        }
    }

    static List<Integer> items(String json) {
        List<Integer> out = new ArrayList<>();
        Matcher m = ITEM.matcher(json);
        while (m.find()) out.add(Integer.parseInt(m.group(1)));
        return out;
    }

    static List<Integer> range(int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i < to; i++) out.add(i);
        return out;
    }

    static void expectStatus(int status, String what, Runnable call) {
        try {
            call.run();
            check(false, what + ": succeeded, want " + status);
        } catch (DurableStreamException e) {
            check(e.getStatusCode().orElse(-1) == status, what + ": " + e.getStatusCode() + " (" + e + "), want " + status);
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("java client with JWTs: FAILED: " + what);
            System.exit(1);
        }
        checks++;
    }

    static String uniquePath(String name) {
        byte[] b = new byte[4];
        RANDOM.nextBytes(b);
        return "java/" + name + "-" + HexFormat.of().formatHex(b);
    }

    /** A client whose every request carries an HS256 JWT granting {@code rights} on {@code path}. */
    static DurableStream client(String path, String... rights) {
        return DurableStream.builder().header("Authorization", "Bearer " + token(path, rights)).build();
    }

    static String token(String path, String... rights) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        StringBuilder claim = new StringBuilder("{");
        for (int i = 0; i < rights.length; i++) {
            claim.append(i > 0 ? "," : "").append('"').append(rights[i]).append("\":[\"").append(path).append("\"]");
        }
        claim.append('}');
        long exp = System.currentTimeMillis() / 1000 + 600;
        String head = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(("{\"sub\":\"java-client\",\"exp\":" + exp + ",\"iqstream\":" + claim + "}")
                        .getBytes(StandardCharsets.UTF_8));
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return head + "." + b64.encodeToString(mac.doFinal(head.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

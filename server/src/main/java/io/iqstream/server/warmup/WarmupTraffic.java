package io.iqstream.server.warmup;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.stream.DurableStreamProtocol;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The warm-up's client: plain blocking sockets on the starting thread, doing what the server's clients do, run
 * after run, until its request count or its deadline: a publisher streams a run as a chunked POST, a reader
 * follows it live, {@link #RESUMES_PER_RUN} readers reconnect with {@code Last-Event-ID} and read their first
 * replayed event, the run ends, one more reader reads the ended run whole, and the run's status is asked and a
 * read of it {@code ?ifRunning=true} refused (409). Every other run is an AI SDK run, as
 * {@code @iqstream/resumable-stream} makes them (SSE frames with {@code x-vercel-ai-ui-message-stream: v1} and a
 * publisher lease, ended by {@code [DONE]}; its resumes {@code ?ifRunning=true}), the others AG-UI NDJSON, so that
 * an AI SDK app's first requests find their path compiled too. After every {@link #STREAM_EVERY_RUNS} runs, one
 * Durable Stream is made, followed, appended, resumed, read whole and deleted ({@link #oneStream}), so that the
 * {@code /v1/stream/} path's code is compiled and its classes loaded before the first client too. (It does not end
 * the JIT's work: C2 still compiles and recompiles under an app's first minute of traffic, whose shapes differ from
 * these: about 200 compilations, 80 of them C2, between 20 and 52 s after start in bench/aisdk at K = 20, with and
 * without the AI SDK runs here.)
 * Every answer is checked (status,
 * the first replayed id, the end of each stream): a wrong one stops the warm-up with a {@link WarmupFailure}.
 */
final class WarmupTraffic {
    static final int RESUMES_PER_RUN = 100;
    /** A Durable Stream after every this many runs. */
    static final int STREAM_EVERY_RUNS = 2;
    /** Appends to each warm-up stream, the last one closing it; then this many readers resume it. */
    static final int STREAM_APPENDS = 150;
    static final int STREAM_RESUMES = 20;
    private static final int READ_TIMEOUT_MS = 5_000;
    private static final byte[] END_OF_CHUNKS = "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SSE_DATA = "data: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SSE_DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

    private final InetSocketAddress server;
    private final TokenMinter minter;
    private final String publisherToken;
    private final int requestLimit;
    private final long deadlineNs;
    private final SplittableRandom random = new SplittableRandom(42);
    private int requests;
    private int runs;
    private int resumes;
    private int streams;
    private int streamRequests;

    WarmupTraffic(InetSocketAddress server, TokenMinter minter, String publisherToken, int requestLimit,
            long deadlineNs) {
        this.server = server;
        this.minter = minter;
        this.publisherToken = publisherToken;
        this.requestLimit = requestLimit;
        this.deadlineNs = deadlineNs;
    }

    /** Runs until the request count or the deadline; throws on the first wrong answer or I/O failure. */
    void run() throws IOException {
        while (requests < requestLimit && System.nanoTime() - deadlineNs < 0) {
            oneRun("warmup-run-" + runs);
            runs++;
            if (runs % STREAM_EVERY_RUNS == 0 && System.nanoTime() - deadlineNs < 0) {
                oneStream("warmup/stream-" + streams);
                streams++;
            }
        }
    }

    /** Durable streams made, written, read and deleted. */
    int streams() {
        return streams;
    }

    /** The requests those streams took (not counted in {@link #requests()}, which bounds the runs). */
    int streamRequests() {
        return streamRequests;
    }

    int requests() {
        return requests;
    }

    int runs() {
        return runs;
    }

    int resumes() {
        return resumes;
    }

    private void oneRun(String runId) throws IOException {
        byte[][] events = WarmupRunScript.events(runId, runs);
        int last = events.length; // ids are 1-based: the last event's id
        // a reader's token of its own per run, as a backend mints them: the first use is a JWT check, then cached
        String readerToken = minter.mint(List.of(), List.of(runId), Duration.ofMinutes(5));
        boolean ui = runs % 2 == 1;
        String resumeQuery = ui ? "?ifRunning=true" : "";
        try (Socket publisher = open(); Socket live = open()) {
            OutputStream body = publisher.getOutputStream();
            write(body, "POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: warmup\r\nAuthorization: Bearer "
                    + publisherToken + "\r\n" + (ui ? "Content-Type: text/event-stream\r\n"
                    + "x-vercel-ai-ui-message-stream: v1\r\nX-IQStream-Publisher-Lease: 2000ms\r\n"
                    : "Content-Type: application/x-ndjson\r\n") + "Transfer-Encoding: chunked\r\n\r\n");
            int half = events.length / 2;
            for (int i = 0; i < half; i++) {
                chunk(body, events[i], ui);
            }
            write(live.getOutputStream(), get(runId, readerToken, -1, ""));
            for (int i = half; i < events.length - 1; i++) {
                chunk(body, events[i], ui);
            }
            Response liveStream = new Response(live.getInputStream());
            liveStream.expectStatus(200, "live reader");
            liveStream.await(("\nid: " + (last - 1) + "\n").getBytes(StandardCharsets.US_ASCII), "live reader");
            for (int i = 0; i < RESUMES_PER_RUN && requests < requestLimit; i++) {
                resume(runId, readerToken, random.nextInt(last - 1), resumeQuery);
            }
            chunk(body, events[events.length - 1], ui);
            if (ui) {
                chunk(body, SSE_DONE, true);
            }
            write(body, "0\r\n\r\n");
            Response published = new Response(publisher.getInputStream());
            published.expectStatus(200, "publisher");
            published.await(("\"lastEventId\":" + last).getBytes(StandardCharsets.US_ASCII), "publisher");
            liveStream.await(END_OF_CHUNKS, "live reader at the run's end");
        }
        requests += 2;
        try (Socket ended = open()) {
            write(ended.getOutputStream(), get(runId, readerToken, 0, ""));
            Response whole = new Response(ended.getInputStream());
            whole.expectStatus(200, "reader of the ended run");
            whole.await(("\nid: " + last + "\n").getBytes(StandardCharsets.US_ASCII), "reader of the ended run");
            whole.await(END_OF_CHUNKS, "reader of the ended run");
        }
        requests++;
        // what a resume or a done check asks of an ended run: its status, and a read of it while it runs (409)
        try (Socket asked = open()) {
            write(asked.getOutputStream(), "GET /v1/runs/" + runId + " HTTP/1.1\r\nHost: warmup\r\n"
                    + "Authorization: Bearer " + readerToken + "\r\nConnection: close\r\n\r\n");
            Response status = new Response(asked.getInputStream());
            status.expectStatus(200, "status of the ended run");
            status.await("\"ended\":true".getBytes(StandardCharsets.US_ASCII), "status of the ended run");
        }
        try (Socket asked = open()) {
            write(asked.getOutputStream(), get(runId, readerToken, -1, "?ifRunning=true"));
            new Response(asked.getInputStream()).expectStatus(409, "read ?ifRunning=true of the ended run");
        }
        requests += 2;
    }

    /**
     * One Durable Stream as the AI SDK's and TanStack AI's transports use one: a JSON stream is created, a reader
     * follows it live over SSE from its start, a producer appends {@link #STREAM_APPENDS} messages (pipelined on one
     * connection, {@code Producer-Id}/{@code -Epoch}/{@code -Seq} on each; the last closes the stream), readers
     * resume it over SSE from offsets inside it, one catch-up reads it whole, and the stream is deleted.
     */
    private void oneStream(String path) throws IOException {
        String token = minter.mint(List.of(path), List.of(path), Duration.ofMinutes(5));
        String target = "/v1/stream/" + path;
        long[] ends = new long[STREAM_APPENDS];
        try (Socket writer = open(); Socket live = open()) {
            OutputStream out = writer.getOutputStream();
            write(out, "PUT " + target + " HTTP/1.1\r\nHost: warmup\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n");
            Response answers = new Response(writer.getInputStream());
            answers.await("HTTP/1.1 201 ".getBytes(StandardCharsets.US_ASCII), "stream creation");
            write(live.getOutputStream(), streamRead(target, token, -1, true));
            Response follower = new Response(live.getInputStream());
            follower.expectStatus(200, "live stream reader");
            StringBuilder appends = new StringBuilder();
            long position = 0;
            for (int i = 0; i < STREAM_APPENDS; i++) {
                String body = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"" + path + "\",\"delta\":\""
                        + "x".repeat(1 + random.nextInt(40)) + "\",\"n\":" + i + "}";
                position += body.length();
                ends[i] = position;
                appends.append("POST ").append(target).append(" HTTP/1.1\r\nHost: warmup\r\nAuthorization: Bearer ")
                        .append(token).append("\r\nContent-Type: application/json\r\nProducer-Id: warmup\r\n"
                        + "Producer-Epoch: 0\r\nProducer-Seq: ").append(i).append("\r\n")
                        .append(i == STREAM_APPENDS - 1 ? "Stream-Closed: true\r\n" : "")
                        .append("Content-Length: ").append(body.length()).append("\r\n\r\n").append(body);
            }
            write(out, appends.toString());
            for (int i = 0; i < STREAM_APPENDS; i++) {
                answers.await("HTTP/1.1 200 ".getBytes(StandardCharsets.US_ASCII), "append " + i);
            }
            follower.await(("{\"streamNextOffset\":\"" + DurableStreamProtocol.offset(position)
                    + "\",\"streamClosed\":true}").getBytes(StandardCharsets.US_ASCII),
                    "live stream reader at the stream's close");
            follower.await(END_OF_CHUNKS, "live stream reader at the stream's close");
        }
        streamRequests += 2 + STREAM_APPENDS;
        for (int i = 0; i < STREAM_RESUMES; i++) {
            long from = ends[random.nextInt(STREAM_APPENDS - 1)];
            try (Socket s = open()) {
                write(s.getOutputStream(), streamRead(target, token, from, true));
                Response r = new Response(s.getInputStream());
                r.expectStatus(200, "stream resume");
                r.await("\"streamClosed\":true}".getBytes(StandardCharsets.US_ASCII), "stream resume");
            }
        }
        try (Socket s = open()) {
            write(s.getOutputStream(), streamRead(target, token, -1, false));
            Response whole = new Response(s.getInputStream());
            whole.expectStatus(200, "stream catch-up");
            whole.await(("\"n\":" + (STREAM_APPENDS - 1) + "}]").getBytes(StandardCharsets.US_ASCII),
                    "stream catch-up");
        }
        try (Socket s = open()) {
            write(s.getOutputStream(), "DELETE " + target + " HTTP/1.1\r\nHost: warmup\r\nAuthorization: Bearer "
                    + token + "\r\nConnection: close\r\n\r\n");
            new Response(s.getInputStream()).expectStatus(204, "stream deletion");
        }
        streamRequests += STREAM_RESUMES + 2;
    }

    /** A read of a stream after byte {@code from} (-1: its start), live over SSE or a catch-up. */
    private static String streamRead(String target, String token, long from, boolean sse) {
        return "GET " + target + "?offset=" + (from < 0 ? "-1" : DurableStreamProtocol.offset(from))
                + (sse ? "&live=sse" : "")
                + " HTTP/1.1\r\nHost: warmup\r\nAuthorization: Bearer " + token + "\r\n"
                + (sse ? "Accept: text/event-stream\r\n" : "") + "Connection: close\r\n\r\n";
    }

    /** One reconnect after {@code lastEventId}: its first replayed event must be the next one. */
    private void resume(String runId, String token, int lastEventId, String query) throws IOException {
        try (Socket s = open()) {
            write(s.getOutputStream(), get(runId, token, lastEventId, query));
            Response r = new Response(s.getInputStream());
            r.expectStatus(200, "resume");
            long first = r.firstId();
            if (first != lastEventId + 1) {
                throw new WarmupFailure("a resume after id " + lastEventId + " of " + runId + " began at id " + first);
            }
        }
        requests++;
        resumes++;
    }

    private static String get(String runId, String token, int lastEventId, String query) {
        return "GET /v1/runs/" + runId + "/events" + query + " HTTP/1.1\r\nHost: warmup\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer " + token + "\r\n"
                + (lastEventId >= 0 ? "Last-Event-ID: " + lastEventId + "\r\n" : "") + "\r\n";
    }

    private Socket open() throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.setSoTimeout(READ_TIMEOUT_MS);
        s.connect(server, READ_TIMEOUT_MS);
        return s;
    }

    /** One event as one HTTP chunk: an NDJSON line, or for an AI SDK run ({@code sse}) a frame {@code data: ...\n\n}. */
    private static void chunk(OutputStream out, byte[] event, boolean sse) throws IOException {
        int prefix = sse ? SSE_DATA.length : 0;
        int ends = sse ? 2 : 1;
        int size = prefix + event.length + ends;
        byte[] head = (Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] frame = new byte[head.length + size + 2];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(SSE_DATA, 0, frame, head.length, prefix);
        System.arraycopy(event, 0, frame, head.length + prefix, event.length);
        int at = head.length + prefix + event.length;
        for (int i = 0; i < ends; i++) {
            frame[at++] = '\n';
        }
        frame[at++] = '\r';
        frame[at] = '\n';
        out.write(frame);
    }

    private static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.US_ASCII));
    }

    /** The bytes of one HTTP response as they arrive, searched as they grow. */
    private static final class Response {
        private final InputStream in;
        private byte[] buf = new byte[16 * 1024];
        private int length;
        private int searchedTo;

        Response(InputStream in) {
            this.in = in;
        }

        void expectStatus(int status, String who) throws IOException {
            int end = awaitAt("\r\n".getBytes(StandardCharsets.US_ASCII), 0, who);
            String line = new String(buf, 0, end, StandardCharsets.US_ASCII);
            if (!line.startsWith("HTTP/1.1 " + status + " ")) {
                throw new WarmupFailure(who + " was answered " + line);
            }
        }

        /** The id of the first event frame. */
        long firstId() throws IOException {
            byte[] marker = "\nid: ".getBytes(StandardCharsets.US_ASCII);
            int at = awaitAt(marker, 0, "resume") + marker.length;
            int end = awaitAt(new byte[] {'\n'}, at, "resume");
            return Long.parseLong(new String(buf, at, end - at, StandardCharsets.US_ASCII));
        }

        /** Reads until {@code marker} has arrived (after what earlier calls found). */
        void await(byte[] marker, String who) throws IOException {
            searchedTo = awaitAt(marker, searchedTo, who) + marker.length;
        }

        private int awaitAt(byte[] marker, int from, String who) throws IOException {
            int scanFrom = from;
            while (true) {
                int at = indexOf(marker, scanFrom);
                if (at >= 0) {
                    return at;
                }
                // what was scanned holds no match: after the next read, only a marker that straddles it can begin
                scanFrom = Math.max(scanFrom, length - marker.length + 1);
                if (length == buf.length) {
                    buf = Arrays.copyOf(buf, buf.length * 2);
                }
                int n = in.read(buf, length, buf.length - length);
                if (n < 0) {
                    throw new WarmupFailure(who + ": the connection ended before \""
                            + new String(marker, StandardCharsets.US_ASCII).strip() + "\"");
                }
                length += n;
            }
        }

        private int indexOf(byte[] marker, int from) {
            outer:
            for (int i = from; i <= length - marker.length; i++) {
                for (int j = 0; j < marker.length; j++) {
                    if (buf[i + j] != marker[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}

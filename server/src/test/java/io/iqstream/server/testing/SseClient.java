package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A minimal SSE reader over a raw socket (HTTP/1.1, chunked), parsing frames as a browser's EventSource does.
 * A background thread reads; events, comments and the retry field are collected for assertions.
 *
 * <p>How the response ended is told apart: {@link End#CLEAN} only when the server sent the terminal chunk
 * ({@code 0\r\n\r\n}) or the whole Content-Length body; {@link End#CUT} when the connection closed or reset
 * before that (a chunk left short, no terminal chunk). {@link #awaitEnd} asserts the clean one.
 */
public final class SseClient implements AutoCloseable {
    /** One dispatched event. */
    public record Event(String id, String data) {}

    /** How the response ended so far. */
    public enum End {
        /** Still open. */
        OPEN,
        /** The server ended the body properly: the terminal chunk (or the full Content-Length) arrived. */
        CLEAN,
        /** The connection closed, reset or timed out before the body was complete. */
        CUT
    }

    private final Socket socket;
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final List<String> comments = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Map<String, String> headers = new LinkedHashMap<>();
    private volatile String retry;
    private volatile End end = End.OPEN;
    private volatile String cutReason;
    private final int status;
    private final Thread reader;

    private volatile String body = "";

    private SseClient(Socket socket, int status, Map<String, String> head, InputStream raw) throws IOException {
        this.socket = socket;
        this.status = status;
        this.headers.putAll(head);
        String te = header("Transfer-Encoding");
        String cl = header("Content-Length");
        if (te != null && te.equalsIgnoreCase("chunked")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(new ChunkedInputStream(raw),
                    StandardCharsets.UTF_8));
            this.reader = new Thread(() -> readLoop(in), "sse-client");
            this.reader.setDaemon(true);
            this.reader.start();
        } else {
            int n = cl == null ? 0 : Integer.parseInt(cl);
            byte[] got = raw.readNBytes(n);
            this.body = new String(got, StandardCharsets.UTF_8);
            this.end = got.length == n ? End.CLEAN : End.CUT;
            this.reader = new Thread(() -> { });
            this.reader.start();
        }
    }

    /** Opens {@code GET path} with optional extra header lines ("Name: value"). */
    public static SseClient open(int port, String path, String... headerLines) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(20_000);
        OutputStream out = s.getOutputStream();
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\n");
        for (String h : headerLines) {
            req.append(h).append("\r\n");
        }
        req.append("\r\n");
        out.write(req.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
        InputStream raw = new java.io.BufferedInputStream(s.getInputStream());
        ChunkedInputStream.HeaderBlock head = ChunkedInputStream.readHead(raw);
        return new SseClient(s, head.status(), head.headers(), raw);
    }

    /** The body of a non-streaming response (an error's JSON). */
    public String body() {
        return body;
    }

    private void readLoop(BufferedReader in) {
        String id = null;
        StringBuilder data = null;
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) {
                    if (data != null) {
                        events.add(new Event(id, data.toString()));
                    }
                    data = null;
                    continue;
                }
                if (line.startsWith(":")) {
                    comments.add(line);
                    continue;
                }
                int colon = line.indexOf(':');
                String field = colon < 0 ? line : line.substring(0, colon);
                String value = colon < 0 ? "" : line.substring(colon + 1);
                if (value.startsWith(" ")) {
                    value = value.substring(1);
                }
                switch (field) {
                    case "id" -> id = value;
                    case "retry" -> retry = value;
                    case "data" -> {
                        if (data == null) {
                            data = new StringBuilder(value);
                        } else {
                            data.append('\n').append(value);
                        }
                    }
                    default -> { }
                }
            }
            // readLine returned null: the chunked stream reached its terminal chunk (a cut throws instead)
            end = End.CLEAN;
        } catch (IOException e) {
            cutReason = e.toString();
            end = End.CUT;
        }
    }

    public int status() {
        return status;
    }

    public String header(String name) {
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) {
                return e.getValue();
            }
        }
        return null;
    }

    public String retry() {
        return retry;
    }

    public List<String> comments() {
        return comments;
    }

    /** Waits for the next event. */
    public Event next(long timeoutMs) throws InterruptedException {
        Event e = events.poll(timeoutMs, TimeUnit.MILLISECONDS);
        assertNotNull(e, "no event within " + timeoutMs + " ms");
        return e;
    }

    /** Waits for {@code n} events. */
    public List<Event> take(int n, long timeoutMs) throws InterruptedException {
        List<Event> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (out.size() < n) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            Event e = events.poll(Math.max(left, 0), TimeUnit.MILLISECONDS);
            assertNotNull(e, "got " + out.size() + " of " + n + " events within " + timeoutMs + " ms");
            out.add(e);
        }
        return out;
    }

    /**
     * Waits until the server ends the response and asserts that it ended it cleanly (the terminal chunk), not by
     * closing or resetting the connection; returns true so that callers may also write
     * {@code assertTrue(sub.awaitEnd(ms))}.
     */
    public boolean awaitEnd(long timeoutMs) throws InterruptedException {
        End e = awaitClose(timeoutMs);
        if (e != End.CLEAN) {
            throw new AssertionError("expected the stream to end cleanly (terminal chunk) within " + timeoutMs
                    + " ms, but it is " + e + (cutReason == null ? "" : " (" + cutReason + ")"));
        }
        return true;
    }

    /** Waits up to {@code timeoutMs} for the response to end either way and says how ({@link End#OPEN}: not yet). */
    public End awaitClose(long timeoutMs) throws InterruptedException {
        reader.join(timeoutMs);
        return end;
    }

    /** How the response has ended so far. */
    public End end() {
        return end;
    }

    public boolean isEnded() {
        return end != End.OPEN;
    }

    /** Events received and not yet taken. */
    public int pending() {
        return events.size();
    }

    /** Asserts the ids of {@code events} run from {@code first} with no gap. */
    public static void assertConsecutive(List<Event> events, int first) {
        for (int i = 0; i < events.size(); i++) {
            assertEquals(String.valueOf(first + i), events.get(i).id(), "event id at " + i);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Drains a socket's bytes: the response head, then a chunked body decoded to plain bytes. */
    static final class ChunkedInputStream extends InputStream {
        record HeaderBlock(int status, Map<String, String> headers) {}

        private final InputStream in;
        private int left;
        private boolean done;

        ChunkedInputStream(InputStream in) {
            this.in = in;
        }

        static HeaderBlock readHead(InputStream in) throws IOException {
            Map<String, String> headers = new LinkedHashMap<>();
            String status = readLine(in);
            String line;
            while ((line = readLine(in)) != null && !line.isEmpty()) {
                int c = line.indexOf(':');
                headers.put(line.substring(0, c).trim(), line.substring(c + 1).trim());
            }
            return new HeaderBlock(Integer.parseInt(status.split(" ")[1]), headers);
        }

        static String readLine(InputStream in) throws IOException {
            StringBuilder sb = new StringBuilder();
            int b;
            while ((b = in.read()) != -1) {
                if (b == '\n') {
                    int n = sb.length();
                    return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
                }
                sb.append((char) b);
            }
            return sb.length() == 0 ? null : sb.toString();
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            if (left == 0) {
                String size = readLine(in);
                if (size == null) {
                    throw new EOFException("connection closed before the terminal chunk");
                }
                if (size.isEmpty()) {
                    size = readLine(in);
                    if (size == null) {
                        throw new EOFException("connection closed before the terminal chunk");
                    }
                }
                left = Integer.parseInt(size.split(";")[0].trim(), 16);
                if (left == 0) {
                    if (readLine(in) == null) {
                        throw new EOFException("connection closed inside the terminal chunk");
                    }
                    done = true;
                    return -1;
                }
            }
            int n = in.read(b, off, Math.min(len, left));
            if (n < 0) {
                throw new EOFException("connection closed " + left + " bytes short of a chunk's end");
            }
            left -= n;
            return n;
        }
    }
}

package io.iqstream.server.hostile;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HTTP/1.x spoken byte by byte over plain sockets, so a test can send what no well-behaved client would (a bad
 * chunk size, half a header, an HTTP/1.0 request) and see exactly what comes back: the status line, the headers,
 * the body, whether a chunked body ended with its terminal chunk, and whether the server closed the connection.
 * Every read has a deadline; a missing answer is a failure, never a hang. Each call is confined to its caller's
 * thread.
 */
final class RawHttp {
    static final String HOST = "127.0.0.1";
    private static final Pattern ERROR_CODE = Pattern.compile("\"error\"\\s*:\\s*\"([^\"]*)\"");

    private RawHttp() {}

    /** A connected socket with Nagle off; reads time out after {@code 10 s} unless a call says otherwise. */
    static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(HOST, port), 5_000);
        s.setSoTimeout(10_000);
        return s;
    }

    static void write(Socket s, String text) throws IOException {
        write(s, text.getBytes(StandardCharsets.ISO_8859_1));
    }

    static void write(Socket s, byte[] bytes) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(bytes);
        out.flush();
    }

    /** One HTTP/1.1 chunk around {@code payload}. */
    static byte[] chunk(byte[] payload) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(payload.length + 16);
        b.writeBytes((Integer.toHexString(payload.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(payload);
        b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    static byte[] chunk(String payload) {
        return chunk(payload.getBytes(StandardCharsets.UTF_8));
    }

    /** The head of a chunked publish of {@code contentType} to {@code runId}. */
    static String publishHead(String runId, String contentType, String token) {
        return "POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Type: " + contentType
                + "\r\nTransfer-Encoding: chunked\r\n" + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "\r\n";
    }

    /** A whole publish request with a fixed-length body. */
    static byte[] publish(String runId, String contentType, String token, byte[] body) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(body.length + 256);
        String head = "POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Type: "
                + contentType + "\r\nContent-Length: " + body.length + "\r\nAuthorization: Bearer " + token
                + "\r\nConnection: close\r\n\r\n";
        b.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(body);
        return b.toByteArray();
    }

    /** Connects, sends {@code request}, reads one response within {@code timeoutMs}, closes. */
    static Response exchange(int port, byte[] request, long timeoutMs) throws IOException {
        try (Socket s = connect(port)) {
            write(s, request);
            return read(s, timeoutMs);
        }
    }

    static Response exchange(int port, String request, long timeoutMs) throws IOException {
        return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1), timeoutMs);
    }

    /** {@code GET path} with {@code Connection: close} and extra header lines ("Name: value"). */
    static Response get(int port, String path, String... headerLines) throws IOException {
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: " + HOST + "\r\nConnection: close\r\n");
        for (String h : headerLines) {
            req.append(h).append("\r\n");
        }
        return exchange(port, req.append("\r\n").toString(), 10_000);
    }

    /**
     * Reads one response (skipping 1xx) within {@code timeoutMs}: by Content-Length, by chunks until the terminal
     * chunk, or until the server closes. A response cut short is returned with {@link Response#truncated()} set;
     * no status line at all within the time is an {@link AssertionError}.
     */
    static Response read(Socket s, long timeoutMs) throws IOException {
        return read(new Deadline(s, System.nanoTime() + timeoutMs * 1_000_000L));
    }

    /**
     * The responses of one connection, read in turn from one buffer (so answers that arrive together, as to
     * pipelined requests, are each read), every read within {@code timeoutMs} of this call.
     */
    static Responses responses(Socket s, long timeoutMs) throws IOException {
        Deadline in = new Deadline(s, System.nanoTime() + timeoutMs * 1_000_000L);
        return () -> read(in);
    }

    /** Successive responses of one connection. */
    interface Responses {
        Response next() throws IOException;
    }

    private static Response read(Deadline in) throws IOException {
        while (true) {
            String statusLine = in.line();
            if (statusLine == null) {
                throw new AssertionError("connection closed with no response");
            }
            String[] parts = statusLine.split(" ", 3);
            int status = Integer.parseInt(parts[1]);
            Map<String, String> headers = new LinkedHashMap<>();
            String line;
            while ((line = in.line()) != null && !line.isEmpty()) {
                int c = line.indexOf(':');
                headers.merge(line.substring(0, c).trim().toLowerCase(java.util.Locale.ROOT), line.substring(c + 1).trim(),
                        (a, b) -> a + ", " + b);
            }
            if (status >= 100 && status < 200) {
                continue;
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            boolean chunked = "chunked".equalsIgnoreCase(headers.get("transfer-encoding"));
            boolean truncated = false;
            boolean terminal = false;
            if (status == 204 || status == 304) {
                // no body
            } else if (chunked) {
                while (true) {
                    String size = in.line();
                    if (size == null) {
                        truncated = true;
                        break;
                    }
                    int n = Integer.parseInt(size.split(";")[0].trim(), 16);
                    if (n == 0) {
                        String trailer;
                        while ((trailer = in.line()) != null && !trailer.isEmpty()) {
                            // trailers are ignored
                        }
                        terminal = true;
                        break;
                    }
                    byte[] data = in.bytes(n);
                    body.writeBytes(data);
                    if (data.length < n || in.line() == null) {
                        truncated = true;
                        break;
                    }
                }
            } else if (headers.containsKey("content-length")) {
                int n = Integer.parseInt(headers.get("content-length"));
                byte[] data = in.bytes(n);
                body.writeBytes(data);
                truncated = data.length < n;
            } else {
                body.writeBytes(in.rest());
            }
            return new Response(parts[0], status, headers, body.toByteArray(), chunked, terminal, truncated);
        }
    }

    /**
     * Reads and discards until the server closes the connection (end of stream or reset): true, or false when it
     * is still open after {@code timeoutMs}.
     */
    static boolean awaitClosed(Socket s, long timeoutMs) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        byte[] sink = new byte[8192];
        try {
            InputStream in = s.getInputStream();
            while (true) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return false;
                }
                s.setSoTimeout((int) Math.max(1, left));
                try {
                    if (in.read(sink) < 0) {
                        return true;
                    }
                } catch (SocketTimeoutException e) {
                    return false;
                }
            }
        } catch (IOException e) {
            return true;
        }
    }

    /** One response. Header names are lower case. */
    record Response(String version, int status, Map<String, String> headers, byte[] body, boolean chunked,
            boolean terminalChunk, boolean truncated) {
        String header(String name) {
            return headers.get(name.toLowerCase(java.util.Locale.ROOT));
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The {@code error} code of a JSON error body, or null. */
        String error() {
            Matcher m = ERROR_CODE.matcher(text());
            return m.find() ? m.group(1) : null;
        }

        @Override
        public String toString() {
            String t = text();
            return version + " " + status + " " + headers + " " + (t.length() > 300 ? t.substring(0, 300) + "..." : t);
        }
    }

    /** A socket's input with one deadline for every read. */
    private static final class Deadline {
        private final Socket socket;
        private final InputStream in;
        private final long deadlineNanos;
        private final byte[] buf = new byte[16384];
        private int pos;
        private int end;
        private boolean eof;

        Deadline(Socket socket, long deadlineNanos) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.deadlineNanos = deadlineNanos;
        }

        /** Fills the buffer; false at end of stream (or a reset, which is the same to the reader). */
        private boolean fill() throws IOException {
            if (eof) {
                return false;
            }
            long left = (deadlineNanos - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new AssertionError("no complete response before the deadline");
            }
            socket.setSoTimeout((int) Math.max(1, left));
            int n;
            try {
                n = in.read(buf, 0, buf.length);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("no complete response before the deadline", e);
            } catch (IOException e) {
                n = -1;
            }
            if (n < 0) {
                eof = true;
                return false;
            }
            pos = 0;
            end = n;
            return true;
        }

        String line() throws IOException {
            StringBuilder sb = new StringBuilder();
            while (true) {
                if (pos == end && !fill()) {
                    return sb.length() == 0 ? null : sb.toString();
                }
                int b = buf[pos++] & 0xff;
                if (b == '\n') {
                    int n = sb.length();
                    return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
                }
                sb.append((char) b);
            }
        }

        byte[] bytes(int n) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream(n);
            while (out.size() < n) {
                if (pos == end && !fill()) {
                    break;
                }
                int take = Math.min(n - out.size(), end - pos);
                out.write(buf, pos, take);
                pos += take;
            }
            return out.toByteArray();
        }

        byte[] rest() throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (pos < end || fill()) {
                out.write(buf, pos, end - pos);
                pos = end;
            }
            return out.toByteArray();
        }
    }
}

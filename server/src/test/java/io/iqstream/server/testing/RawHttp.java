package io.iqstream.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A raw socket to the server for hostile-client tests: sends exactly the bytes a test writes, reads exactly what
 * comes back, and tells whether the server closed the connection. Reads time out after 20 s (a hang fails the
 * test instead of stalling it).
 */
public final class RawHttp implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    /** A reply read to its end: the status line, the head's lines, the body as text. */
    public record Reply(String statusLine, String head, String body) {
        public int status() {
            return Integer.parseInt(statusLine.split(" ")[1]);
        }

        /** The value of header {@code name} (case-insensitive), or null. */
        public String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    public RawHttp(int port) throws IOException {
        this.socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(20_000);
        socket.setTcpNoDelay(true);
        this.out = socket.getOutputStream();
        this.in = socket.getInputStream();
    }

    /** Sends {@code text} (ISO-8859-1 bytes) now; false when the server has closed the connection. */
    public boolean send(String text) {
        try {
            out.write(text.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Reads one reply: the head, then a body framed by Content-Length, or (without one) everything to the close. */
    public Reply readReply() throws IOException {
        String head = readHead();
        int lineEnd = head.indexOf("\r\n");
        String statusLine = lineEnd < 0 ? head : head.substring(0, lineEnd);
        Reply headOnly = new Reply(statusLine, head, "");
        String cl = headOnly.header("Content-Length");
        String te = headOnly.header("Transfer-Encoding");
        byte[] body;
        if (cl != null) {
            body = in.readNBytes(Integer.parseInt(cl));
        } else if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            throw new IllegalStateException("chunked reply: read it with readToClose()");
        } else if (headOnly.status() == 204 || headOnly.status() == 304) {
            body = new byte[0];
        } else {
            body = in.readAllBytes();
        }
        return new Reply(statusLine, head, new String(body, StandardCharsets.UTF_8));
    }

    /** Everything until the server closes the connection, as ISO-8859-1 text. */
    public String readToClose() throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    /** True when the server closed the connection (a read returns end of stream or reset) within 20 s. */
    public boolean closedByServer() throws IOException {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    private String readHead() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed before a reply head; got: " + b.toString(StandardCharsets.ISO_8859_1));
            }
            b.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3))
                    ? state + 1 : (c == '\r' ? 1 : 0);
        }
        String head = b.toString(StandardCharsets.ISO_8859_1);
        return head.substring(0, head.length() - 4);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

package io.iqstream.server.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A publisher over a raw socket: sends the request head, then body chunks one at a time as the test says, then
 * the end; or breaks off. Lets tests check that events arrive before the body ends and simulate lost backends.
 */
public final class ChunkedPublisher implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    private ChunkedPublisher(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new BufferedInputStream(socket.getInputStream());
    }

    public static ChunkedPublisher open(int port, String runId, String contentType, String token)
            throws IOException {
        return open(port, runId, contentType, token, new String[0]);
    }

    /** As {@link #open(int, String, String, String)}, with extra header lines ({@code "Name: value"}). */
    public static ChunkedPublisher open(int port, String runId, String contentType, String token,
            String... headerLines) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(20_000);
        s.setTcpNoDelay(true);
        ChunkedPublisher p = new ChunkedPublisher(s);
        String head = "POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: " + contentType + "\r\nTransfer-Encoding: chunked\r\n"
                + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + (headerLines.length == 0 ? "" : String.join("\r\n", headerLines) + "\r\n") + "\r\n";
        p.out.write(head.getBytes(StandardCharsets.UTF_8));
        p.out.flush();
        return p;
    }

    /** Sends one chunk now. */
    public ChunkedPublisher send(String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return this;
    }

    /** Ends the body and reads the reply. */
    public Reply finish() throws IOException {
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return readReply();
    }

    /** Reads the reply without ending the body (the server answered early, e.g. a refused event). */
    public Reply readReply() throws IOException {
        SseClient.ChunkedInputStream.HeaderBlock head = SseClient.ChunkedInputStream.readHead(in);
        String cl = null;
        for (var e : head.headers().entrySet()) {
            if (e.getKey().equalsIgnoreCase("Content-Length")) {
                cl = e.getValue();
            }
        }
        String body = cl == null ? "" : new String(in.readNBytes(Integer.parseInt(cl)), StandardCharsets.UTF_8);
        return new Reply(head.status(), body, head.headers());
    }

    /** Breaks the connection off without ending the body. */
    public void breakOff() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** A reply. */
    public record Reply(int status, String body, java.util.Map<String, String> headers) {
        public String header(String name) {
            for (var e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
            return null;
        }
    }
}

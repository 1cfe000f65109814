package io.iqstream.bench.driver;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A test's plain-socket HTTP/1.1 client for a peer: sends a driver's request text as it is, reads the
 * status and headers, then the body (Content-Length or chunked) whole, or as SSE events one at a time.
 * One thread.
 */
final class PeerHttp implements AutoCloseable {
  /** One SSE event: its id (null when none) and data (lines joined with \n). */
  record Event(String id, String data) {}

  private final Socket socket;
  private final InputStream raw;
  private final int status;
  private final Map<String, String> headers = new HashMap<>();
  private final boolean chunked;
  private int chunkLeft;
  private boolean ended;

  private PeerHttp(Socket socket, String request) throws IOException {
    this.socket = socket;
    socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
    socket.getOutputStream().flush();
    this.raw = socket.getInputStream();
    String statusLine = rawLine();
    if (statusLine == null || !statusLine.startsWith("HTTP/1.1 ")) {
      throw new IOException("no HTTP response: " + statusLine);
    }
    this.status = Integer.parseInt(statusLine.substring(9, 12));
    String line;
    while ((line = rawLine()) != null && !line.isEmpty()) {
      int colon = line.indexOf(':');
      headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
    }
    this.chunked = "chunked".equalsIgnoreCase(headers.get("transfer-encoding"));
    if (!chunked) {
      String length = headers.get("content-length");
      chunkLeft = length == null ? Integer.MAX_VALUE : Integer.parseInt(length);
    }
  }

  /** Sends {@code request} to 127.0.0.1:{@code port} and reads the response's head. */
  static PeerHttp send(int port, String request) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    s.setSoTimeout(10_000);
    return new PeerHttp(s, request);
  }

  int status() {
    return status;
  }

  String header(String name) {
    return headers.get(name.toLowerCase(Locale.ROOT));
  }

  /** The whole body (a response that ends). */
  String body() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int b;
    while ((b = bodyByte()) >= 0) {
      out.write(b);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * The next SSE event, or null when none came within {@code timeoutMs} or the stream ended. A
   * timeout leaves the stream where it was only between events, which is where these tests wait.
   */
  Event nextEvent(long timeoutMs) throws IOException {
    socket.setSoTimeout((int) timeoutMs);
    String id = null;
    StringBuilder data = null;
    try {
      while (true) {
        String line = bodyLine();
        if (line == null) {
          return null;
        }
        if (line.isEmpty()) {
          if (data != null) {
            return new Event(id, data.toString());
          }
          continue;
        }
        if (line.startsWith(":")) {
          continue;
        }
        int colon = line.indexOf(':');
        String field = colon < 0 ? line : line.substring(0, colon);
        String value = colon < 0 ? "" : line.substring(colon + 1);
        if (value.startsWith(" ")) {
          value = value.substring(1);
        }
        if (field.equals("id")) {
          id = value;
        } else if (field.equals("data")) {
          data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
        }
      }
    } catch (SocketTimeoutException e) {
      return null;
    }
  }

  private String bodyLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = bodyByte()) >= 0) {
      if (b == '\n') {
        break;
      }
      line.write(b);
    }
    if (b < 0 && line.size() == 0) {
      return null;
    }
    String s = line.toString(StandardCharsets.UTF_8);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  private int bodyByte() throws IOException {
    if (ended) {
      return -1;
    }
    if (chunked && chunkLeft == 0) {
      String size = rawLine();
      if (size != null && size.isEmpty()) {
        size = rawLine(); // the CRLF after the previous chunk
      }
      if (size == null) {
        ended = true;
        return -1;
      }
      int semi = size.indexOf(';');
      chunkLeft = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
      if (chunkLeft == 0) {
        ended = true;
        return -1;
      }
    }
    if (!chunked && chunkLeft == 0) {
      ended = true;
      return -1;
    }
    int b = raw.read();
    if (b < 0) {
      ended = true;
      return -1;
    }
    chunkLeft--;
    return b;
  }

  private String rawLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = raw.read()) >= 0 && b != '\n') {
      line.write(b);
    }
    if (b < 0 && line.size() == 0) {
      return null;
    }
    String s = line.toString(StandardCharsets.US_ASCII);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

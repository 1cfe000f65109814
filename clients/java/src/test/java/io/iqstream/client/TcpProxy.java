package io.iqstream.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of the server. {@link #cut()} resets every open connection, as a network
 * drop does; {@link #posts()} counts the POST request lines that went through it.
 */
final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private volatile int targetPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicInteger posts = new AtomicInteger();

  TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::acceptLoop);
  }

  URI baseUri() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** New connections go to {@code port} from now on (open ones stay where they are). */
  void retarget(int port) {
    targetPort = port;
  }

  int posts() {
    return posts.get();
  }

  void cut() {
    for (Socket s : sockets) {
      try {
        s.setSoLinger(true, 0); // RST, not FIN
        s.close();
      } catch (IOException ignored) {
        // already closed
      }
    }
    sockets.clear();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(client);
        sockets.add(upstream);
        Thread.ofVirtual().start(() -> pump(client, upstream, true));
        Thread.ofVirtual().start(() -> pump(upstream, client, false));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to, boolean countPosts) {
    byte[] buffer = new byte[16384];
    String carry = "";
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if (countPosts) {
          String text = carry + new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
          int at = -1;
          while ((at = text.indexOf("POST /v1/", at + 1)) >= 0) posts.incrementAndGet();
          carry = text.length() > 8 ? text.substring(text.length() - 8) : text;
        }
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException ignored) {
      // cut or closed
    } finally {
      try {
        from.close();
        to.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut();
  }
}

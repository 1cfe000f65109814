package io.iqstream.bench.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where the traced IQ-Stream row ({@code iqstream-traced}) exports its spans: an OTLP/HTTP endpoint on loopback
 * that takes every {@code POST /v1/traces} whole, counts it and its bytes, and answers {@code 200} with an empty
 * {@code ExportTraceServiceResponse} (an empty protobuf message: every span accepted). What the spans say is not
 * kept: the row measures what tracing costs the server, and the counts show it exported at all. Any other path is
 * {@code 404}. Its one thread is the bench's, never the server's CPU. Any thread; {@link #close} stops it.
 */
public final class OtlpSink implements AutoCloseable {
  private final HttpServer http;
  private final ExecutorService thread;
  private final AtomicLong exports = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();

  private OtlpSink(HttpServer http, ExecutorService thread) {
    this.http = http;
    this.thread = thread;
  }

  /** Starts a sink on 127.0.0.1 and a free port. */
  public static OtlpSink start() throws IOException {
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "otlp-sink");
      t.setDaemon(true);
      return t;
    });
    OtlpSink sink = new OtlpSink(http, thread);
    http.createContext("/", sink::handle);
    http.setExecutor(thread);
    http.start();
    return sink;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange; InputStream body = exchange.getRequestBody()) {
      long n = body.transferTo(java.io.OutputStream.nullOutputStream());
      if (!"POST".equals(exchange.getRequestMethod()) || !"/v1/traces".equals(exchange.getRequestURI().getPath())) {
        exchange.sendResponseHeaders(404, -1);
        return;
      }
      exports.incrementAndGet();
      bytes.addAndGet(n);
      exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      exchange.sendResponseHeaders(200, -1);
    }
  }

  /** The OTLP base address the server is given ({@code OTEL_EXPORTER_OTLP_ENDPOINT}), e.g. http://127.0.0.1:41234. */
  public String endpoint() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  /** Trace export requests taken so far. */
  public long exports() {
    return exports.get();
  }

  /** Bytes of those requests' bodies. */
  public long bytes() {
    return bytes.get();
  }

  @Override
  public void close() {
    http.stop(0);
    thread.shutdownNow();
  }
}

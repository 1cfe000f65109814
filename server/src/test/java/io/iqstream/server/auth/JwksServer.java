package io.iqstream.server.auth;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.jsonwebtoken.security.Jwk;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.PublicJwk;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A key server for tests on 127.0.0.1 (plain HTTP, or HTTPS with a certificate made by
 * {@link #selfSignedCertificate}): serves a JWK Set the test changes at will, with an ETag (the
 * set's version) and a Cache-Control the test sets; can answer 500, garbage, or hold requests.
 * Counts every request and every 304 it sends. Any thread.
 */
final class JwksServer implements AutoCloseable {
    private static final String PASSWORD = "changeit";

    private final HttpServer server;
    private final String scheme;
    private final AtomicReference<String> body = new AtomicReference<>("{\"keys\":[]}");
    private final AtomicInteger version = new AtomicInteger();
    private final AtomicReference<String> cacheControl = new AtomicReference<>(null);
    private final AtomicInteger status = new AtomicInteger(200);
    private final AtomicReference<CountDownLatch> hold = new AtomicReference<>(null);
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger notModified = new AtomicInteger();
    private final AtomicReference<String> lastIfNoneMatch = new AtomicReference<>(null);

    private JwksServer(HttpServer server, String scheme) {
        this.server = server;
        this.scheme = scheme;
        server.createContext("/jwks.json", this::handle);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "test-jwks-server");
            t.setDaemon(true);
            return t;
        }));
        server.start();
    }

    /** Plain HTTP on 127.0.0.1. */
    static JwksServer http() throws IOException {
        return new JwksServer(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0), "http");
    }

    /** HTTPS on 127.0.0.1 with the key and certificate of {@code keystore} (see {@link #selfSignedCertificate}). */
    static JwksServer https(Path keystore) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, PASSWORD.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD.toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        HttpsServer s = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        s.setHttpsConfigurator(new HttpsConfigurator(context));
        return new JwksServer(s, "https");
    }

    /**
     * Makes, with the JDK's keytool, a self-signed certificate for 127.0.0.1 (it is its own CA):
     * {@code dir/server.p12} (key and certificate) and {@code dir/ca.pem} (the certificate, for --jwks-ca).
     */
    static void selfSignedCertificate(Path dir) throws IOException, InterruptedException {
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(dir, keytool, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-ext", "bc:c", "-validity", "2",
                "-keystore", "server.p12", "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
        run(dir, keytool, "-exportcert", "-rfc", "-alias", "server", "-keystore", "server.p12",
                "-storepass", PASSWORD, "-file", "ca.pem");
    }

    private static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + String.join(" ", command) + "\n" + out);
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        requests.incrementAndGet();
        try (exchange) {
            CountDownLatch latch = hold.get();
            if (latch != null) {
                try {
                    latch.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            String etag = "\"v" + version.get() + "\"";
            String cc = cacheControl.get();
            if (cc != null) {
                exchange.getResponseHeaders().set("Cache-Control", cc);
            }
            int code = status.get();
            if (code != 200) {
                exchange.sendResponseHeaders(code, -1);
                return;
            }
            exchange.getResponseHeaders().set("ETag", etag);
            String inm = exchange.getRequestHeaders().getFirst("If-None-Match");
            lastIfNoneMatch.set(inm);
            if (etag.equals(inm)) {
                notModified.incrementAndGet();
                exchange.sendResponseHeaders(304, -1);
                return;
            }
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/jwk-set+json");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** Serves these public keys from now on (a new ETag). */
    void serve(List<? extends Jwk<?>> keys) {
        List<String> parts = new ArrayList<>();
        for (Jwk<?> k : keys) {
            parts.add(k instanceof PublicJwk<?> p ? Jwks.json(p) : Jwks.UNSAFE_JSON(k));
        }
        serveText("{\"keys\":[" + String.join(",", parts) + "]}");
    }

    /** Serves this text as the set from now on (a new ETag). */
    void serveText(String text) {
        body.set(text);
        version.incrementAndGet();
        status.set(200);
    }

    /** Answers every request with this status and no body (200 to serve again). */
    void answer(int code) {
        status.set(code);
    }

    void cacheControl(String value) {
        cacheControl.set(value);
    }

    /** Holds every request until the latch opens (null: answer at once). */
    void hold(CountDownLatch latch) {
        hold.set(latch);
    }

    int requests() {
        return requests.get();
    }

    int notModifiedAnswers() {
        return notModified.get();
    }

    String lastIfNoneMatch() {
        return lastIfNoneMatch.get();
    }

    URI uri() {
        return URI.create(scheme + "://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json");
    }

    @Override
    public void close() {
        CountDownLatch latch = hold.getAndSet(null);
        if (latch != null) {
            latch.countDown();
        }
        server.stop(0);
    }
}

package io.iqstream.server.auth;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

/**
 * A JWK Set at an {@code https://} URL (or {@code http://} on a loopback address), fetched with the
 * JDK's {@link HttpClient}: conditional with {@code If-None-Match}, bounded by {@code --jwks-timeout}
 * from connect to the last body byte and by {@link #MAX_BODY_BYTES}, trusting the JVM's trust store
 * or only the CA certificates of {@code --jwks-ca}. Redirects are never followed: a 3xx answer is a
 * failed fetch ({@link JwksFailure#REDIRECT}), since the URL was checked (https, or http only on
 * loopback) and a hop it names was not; a loopback key server must not be able to send the server to
 * any host.
 * How long the answer may be kept comes from {@code Cache-Control: max-age} ({@code no-cache} and
 * {@code no-store} mean 0; the refresher applies its floor and ceiling).
 *
 * <p>Confined to the refresh thread of {@link JwksRefresher}; the client's own threads do the I/O.
 */
final class JwksEndpoint implements JwksLocation {
    /** Largest set read; real ones are a few KiB. */
    static final int MAX_BODY_BYTES = 1 << 20;

    private final URI uri;
    private final long timeoutMs;
    private final HttpClient client;
    private final ExecutorService executor;

    /**
     * @param caPem a PEM file of the CA certificates to trust instead of the JVM's, or null
     * @throws IllegalArgumentException when the CA file cannot be read or holds no certificate
     */
    JwksEndpoint(URI uri, long timeoutMs, Path caPem) {
        this.uri = uri;
        this.timeoutMs = timeoutMs;
        // its own daemon threads: the client must not depend on the common ForkJoinPool, which a
        // caller blocked at start (or a one-CPU container) may leave without a free thread
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "iqstream-jwks-http");
            t.setDaemon(true);
            return t;
        });
        HttpClient.Builder builder = HttpClient.newBuilder()
                .executor(executor)
                .connectTimeout(Duration.ofMillis(timeoutMs))
                .followRedirects(HttpClient.Redirect.NEVER);
        if (caPem != null) {
            builder.sslContext(trusting(caPem));
        }
        this.client = builder.build();
    }

    /** An SSL context trusting only the certificates of {@code caPem}. */
    static SSLContext trusting(Path caPem) {
        Collection<? extends Certificate> certificates;
        try (InputStream in = Files.newInputStream(caPem)) {
            certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--jwks-ca " + caPem + " cannot be read as PEM certificates: " + e.getMessage(), e);
        }
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException("--jwks-ca " + caPem + " holds no certificate");
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            int i = 0;
            for (Certificate c : certificates) {
                store.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("--jwks-ca " + caPem + ": " + e.getMessage(), e);
        }
    }

    @Override
    public JwksFetch fetch(String etag) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofMillis(timeoutMs))
                .header("Accept", "application/jwk-set+json, application/json")
                .GET();
        if (etag != null) {
            request.header("If-None-Match", etag);
        }
        CompletableFuture<HttpResponse<byte[]>> future = client.sendAsync(request.build(), info -> new CappedBody());
        HttpResponse<byte[]> response;
        try {
            response = future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            return JwksFetch.failed(JwksFailure.TIMEOUT, "no complete answer from " + uri + " within " + timeoutMs + " ms");
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            return JwksFetch.failed(JwksFailure.IO, "interrupted");
        } catch (ExecutionException e) {
            return failure(e.getCause());
        }
        String newEtag = response.headers().firstValue("ETag").orElse(null);
        long maxAgeMs = maxAgeMs(response.headers().allValues("Cache-Control"));
        int status = response.statusCode();
        if (status == 304 && etag != null) {
            return JwksFetch.notModified(newEtag == null ? etag : newEtag, maxAgeMs);
        }
        if (status >= 300 && status < 400 && status != 304) {
            String location = response.headers().firstValue("Location").orElse("no Location");
            return JwksFetch.failed(JwksFailure.REDIRECT, uri + " answered HTTP " + status + " to "
                    + printable(location) + "; redirects are not followed: give --jwks the final URL");
        }
        if (status != 200) {
            return JwksFetch.failed(JwksFailure.HTTP_STATUS, uri + " answered HTTP " + status);
        }
        return JwksFetch.fetched(new String(response.body(), StandardCharsets.UTF_8), newEtag, maxAgeMs);
    }

    /** A header value for a log line: at most 200 characters, control characters as '?'. */
    private static String printable(String value) {
        StringBuilder sb = new StringBuilder(Math.min(value.length(), 200));
        for (int i = 0; i < value.length() && i < 200; i++) {
            char c = value.charAt(i);
            sb.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return value.length() > 200 ? sb.append('…').toString() : sb.toString();
    }

    private JwksFetch failure(Throwable thrown) {
        Throwable cause = thrown;
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof BodyTooLargeException || t instanceof HttpTimeoutException || t instanceof SSLException) {
                cause = t;
                break;
            }
        }
        if (cause instanceof BodyTooLargeException) {
            return JwksFetch.failed(JwksFailure.TOO_LARGE, uri + " sent more than " + MAX_BODY_BYTES + " bytes");
        }
        if (cause instanceof HttpTimeoutException) {
            return JwksFetch.failed(JwksFailure.TIMEOUT, uri + ": " + cause.getMessage());
        }
        if (cause instanceof SSLException) {
            return JwksFetch.failed(JwksFailure.TLS, uri + ": TLS failed (" + cause.getMessage()
                    + "); a private CA is given with --jwks-ca");
        }
        return JwksFetch.failed(JwksFailure.IO, uri + ": " + cause);
    }

    /** The {@code max-age} of the Cache-Control values in ms, 0 for no-cache/no-store, -1 when absent. */
    static long maxAgeMs(List<String> cacheControl) {
        long maxAge = -1;
        for (String header : cacheControl) {
            for (String directive : header.split(",")) {
                String d = directive.trim().toLowerCase(Locale.ROOT);
                if (d.equals("no-cache") || d.equals("no-store")) {
                    return 0;
                }
                if (d.startsWith("max-age=")) {
                    String value = d.substring("max-age=".length()).replace("\"", "").trim();
                    try {
                        long seconds = Long.parseLong(value);
                        maxAge = seconds < 0 ? 0 : Math.min(seconds, Long.MAX_VALUE / 1000) * 1000;
                    } catch (NumberFormatException e) {
                        // a malformed max-age is as good as none
                    }
                }
            }
        }
        return maxAge;
    }

    @Override
    public String describe() {
        return uri.toString();
    }

    @Override
    public void close() {
        client.shutdownNow();
        executor.shutdownNow();
    }

    /** A body over the cap. */
    private static final class BodyTooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        BodyTooLargeException() {
            super("JWKS body over " + MAX_BODY_BYTES + " bytes");
        }
    }

    /** Collects the body, refusing it once it passes {@link #MAX_BODY_BYTES}. */
    private static final class CappedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            for (ByteBuffer b : buffers) {
                if (bytes.size() + b.remaining() > MAX_BODY_BYTES) {
                    subscription.cancel();
                    result.completeExceptionally(new BodyTooLargeException());
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                bytes.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(bytes.toByteArray());
        }
    }
}

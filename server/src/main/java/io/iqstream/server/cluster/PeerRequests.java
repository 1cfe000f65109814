package io.iqstream.server.cluster;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The GETs this node asks its peers on a client's behalf (run lookups, thread listings), over one JDK HTTP
 * client: the target made relayable ({@link PeerTarget}), signed for the member asked ({@link PeerAuth}), with the
 * client's credentials, and the answer believed only with its proof of the secret. An answer without proof
 * completes as null and its member is suspected, so no caller can forget the check.
 *
 * <p>Any thread: requests run on the HTTP client's threads; callers hop back to their loop themselves.
 */
final class PeerRequests {
    private final Membership membership;
    private final PeerAuth auth;
    private final HttpClient http;

    PeerRequests(Membership membership, PeerAuth auth) {
        this.membership = membership;
        this.auth = auth;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(PeerChannels.CONNECT_TIMEOUT_MS))
                .build();
    }

    /**
     * {@code GET target} at {@code m} with {@code headers} (name, value pairs): the proven answer, or null when
     * the answer did not prove the secret; exceptionally when none came (connect, timeout).
     */
    <T> CompletableFuture<HttpResponse<T>> get(Member m, String target, long timeoutMs, List<String> headers,
            HttpResponse.BodyHandler<T> body) {
        String sent = PeerTarget.encode(target);
        PeerAuth.Signed signed = auth.sign(m, "GET", sent, System.currentTimeMillis());
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + m.key() + sent))
                .timeout(Duration.ofMillis(timeoutMs)).GET().header(PeerAuth.HEADER, signed.header());
        for (int k = 0; k + 1 < headers.size(); k += 2) {
            b.header(headers.get(k), headers.get(k + 1));
        }
        return http.sendAsync(b.build(), body).thenApply(r -> {
            if (auth.proves(signed, r.statusCode(), r.headers().firstValue(PeerAuth.PROOF).orElse(null))) {
                return r;
            }
            // an answer without proof of the secret is no answer: its node is suspected, never believed
            membership.suspect(m);
            return null;
        });
    }

    void close() {
        http.close();
    }
}

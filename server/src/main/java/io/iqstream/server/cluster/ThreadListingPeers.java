package io.iqstream.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.server.run.ThreadRun;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The other nodes' part of a thread listing ({@code GET /v1/threads/{id}/runs} with {@code --peers}): the same
 * request, signed ({@link PeerAuth}), to every live member but this one, each answering from its own workers only
 * (a verified peer request never fans out again). Each part is one page ({@code limit}, {@code after} as the
 * client sent them), so a listing costs the cluster at most one page per node; an answer without proof of the
 * secret, or none within {@link #TIMEOUT_MS}, fails the listing (503 {@code peer_unavailable}: never a listing
 * that silently misses runs).
 *
 * <p>Any thread: the requests run on the JDK HTTP client's threads; the caller joins the future on its loop.
 */
final class ThreadListingPeers {
    static final long TIMEOUT_MS = 2000;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One node's page: its runs, and whether it holds more after them. */
    record Part(List<ThreadRun> runs, boolean more) {}

    private final Membership membership;
    private final PeerAuth auth;
    private final HttpClient http;

    ThreadListingPeers(Membership membership, PeerAuth auth) {
        this.membership = membership;
        this.auth = auth;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(PeerChannels.CONNECT_TIMEOUT_MS)).build();
    }

    /**
     * Asks every other live member for its page of the listing {@code target} (the client's request target),
     * with the client's {@code credentials} (name, value pairs). Completes with every part, or exceptionally when
     * a member did not answer with proof.
     */
    CompletableFuture<List<Part>> gather(String target, List<String> credentials) {
        Membership.View v = membership.view();
        String sent = PeerTarget.encode(target);
        List<CompletableFuture<Part>> parts = new ArrayList<>();
        for (Member m : v.alive()) {
            if (m.equals(v.self())) {
                continue;
            }
            PeerAuth.Signed signed = auth.sign(m, "GET", sent, System.currentTimeMillis());
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + m.key() + sent))
                    .timeout(Duration.ofMillis(TIMEOUT_MS)).GET().header(PeerAuth.HEADER, signed.header());
            for (int k = 0; k + 1 < credentials.size(); k += 2) {
                b.header(credentials.get(k), credentials.get(k + 1));
            }
            parts.add(http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
                if (!auth.proves(signed, r.statusCode(), r.headers().firstValue(PeerAuth.PROOF).orElse(null))) {
                    membership.suspect(m);
                    throw new IllegalStateException(m + " answered without proof of the cluster secret");
                }
                if (r.statusCode() == 404) {
                    return new Part(List.of(), false);
                }
                if (r.statusCode() != 200) {
                    throw new IllegalStateException(m + " answered " + r.statusCode());
                }
                return parse(r.body());
            }));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
                .thenApply(ignored -> parts.stream().map(CompletableFuture::join).toList());
    }

    /** A node's answer, as {@code ThreadRunsRoute} writes it. */
    static Part parse(String body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("a peer's thread listing is not JSON", e);
        }
        List<ThreadRun> runs = new ArrayList<>();
        for (JsonNode r : root.path("runs")) {
            boolean running = r.path("running").asBoolean();
            runs.add(new ThreadRun(r.path("runId").asText(), !running, r.path("events").asInt(),
                    r.path("startedAt").asLong(), running ? 0 : r.path("endedAt").asLong()));
        }
        return new Part(runs, root.hasNonNull("next"));
    }

    void close() {
        http.close();
    }
}

package io.iqstream.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.server.run.ThreadRun;
import java.net.http.HttpResponse;
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
    private final PeerRequests requests;

    ThreadListingPeers(Membership membership, PeerRequests requests) {
        this.membership = membership;
        this.requests = requests;
    }

    /**
     * Asks every other live member for its page of the listing {@code target} (the client's request target),
     * with the client's {@code credentials} (name, value pairs). Completes with every part, or exceptionally when
     * a member did not answer with proof.
     */
    CompletableFuture<List<Part>> gather(String target, List<String> credentials) {
        Membership.View v = membership.view();
        List<CompletableFuture<Part>> parts = new ArrayList<>();
        for (Member m : v.alive()) {
            if (m.equals(v.self())) {
                continue;
            }
            parts.add(requests.get(m, target, TIMEOUT_MS, credentials, HttpResponse.BodyHandlers.ofString())
                    .thenApply(r -> part(m, r)));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
                .thenApply(ignored -> parts.stream().map(CompletableFuture::join).toList());
    }

    /** Member {@code m}'s part from its answer {@code r} (null: not proven). */
    private static Part part(Member m, HttpResponse<String> r) {
        if (r == null) {
            throw new IllegalStateException(m + " answered without proof of the cluster secret");
        }
        if (r.statusCode() == 404) {
            return new Part(List.of(), false);
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException(m + " answered " + r.statusCode());
        }
        return parse(r.body());
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
            // a peer of this build sends its start stamp whole (startedAtUs); an older one, milliseconds only
            long startedAtMicros = r.hasNonNull("startedAtUs") ? r.path("startedAtUs").asLong()
                    : r.path("startedAt").asLong() * 1000L;
            runs.add(new ThreadRun(r.path("runId").asText(), !running, r.path("events").asInt(),
                    startedAtMicros, running ? 0 : r.path("endedAt").asLong()));
        }
        return new Part(runs, root.hasNonNull("next"));
    }
}

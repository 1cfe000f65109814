package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.admission.ListingSlots;
import io.iqstream.server.auth.AuthDecision;
import io.iqstream.server.auth.Right;
import io.iqstream.server.auth.TokenExtractor;
import io.iqstream.server.cluster.Cluster;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.ThreadIndex;
import io.iqstream.server.run.ThreadRun;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.wire.Json;
import io.iqstream.server.worker.Worker;
import io.iqstream.server.worker.Workers;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * {@code GET /v1/threads/{threadId}/runs}: the held runs of a thread (runs whose first event is a
 * {@code RUN_STARTED} with that {@code threadId}), oldest first, each with its id, whether it is running, its event
 * count and its start and end times.
 *
 * <p>Authorization: the token must grant the {@code threads} right on the thread id (401 without a valid token, 403
 * without the right, both before any 404); a run appears in the answer only when the token also grants publish or
 * subscribe on its run id. No listed run: 404 {@code not_found}.
 *
 * <p>Limits: an answer holds at most {@code limit} runs ({@value #DEFAULT_LIMIT} by default, at most
 * {@value #MAX_LIMIT}), oldest first, with {@code next}, the cursor of the following page ({@code after}), or null;
 * each worker's part is one page too. At most {@value #MAX_IN_FLIGHT} listings are gathered at once on a node, and
 * at most {@value #MAX_IN_FLIGHT_PER_CALLER} of them for one caller (a token subject: {@link ListingSlots}); one
 * more is 503 {@code listings_busy} with {@code Retry-After: 1}. A connection has one listing in flight: the next
 * request it sends is read once this one is answered. So the heap a burst of listings can take is bounded by
 * {@value #MAX_IN_FLIGHT} pages, not by the number of runs or requests, and one caller listing in a loop on any
 * number of connections leaves the other half of the slots to everyone else.
 *
 * <p>With {@code --peers} the answer covers the cluster: every other live member is asked for its page
 * ({@code ThreadListingPeers}, signed, answered from that node alone) and the pages are merged; a member that does
 * not answer with proof of the secret makes the listing 503 {@code peer_unavailable}, never a partial answer.
 *
 * <p>Threading: called on the connection's loop. A thread's runs may live on every worker (a run's worker is chosen
 * by its run id), so each worker's {@link ThreadIndex} is asked on its own loop and the answers are joined without
 * blocking any loop: the reply is written from the connection's loop when the last worker answers. Workers that do
 * not answer within {@value #GATHER_TIMEOUT_MS} ms make the request 503 {@code workers_busy} (with Retry-After).
 * The connection reads nothing more until the reply is written.
 */
public final class ThreadRunsRoute {
    /** How long the workers' answers are awaited. */
    static final long GATHER_TIMEOUT_MS = 2000;
    /** Runs in an answer when the request names no {@code limit}. */
    public static final int DEFAULT_LIMIT = 100;
    /** Largest {@code limit}. */
    public static final int MAX_LIMIT = 1000;
    /** Listings gathered at once on a node ({@link ListingSlots#forThreadListings}). */
    public static final int MAX_IN_FLIGHT = ListingSlots.THREAD_LISTINGS;
    /** Listings gathered at once on a node for one caller (a token subject): its share. */
    public static final int MAX_IN_FLIGHT_PER_CALLER = ListingSlots.THREAD_LISTINGS_PER_CALLER;

    private static final String PREFIX = "/v1/threads/";
    private static final String RUNS = "/runs";

    private ThreadRunsRoute() {}

    /** Whether {@code rawPath} is a thread path (the route answers it, with an error when malformed). */
    public static boolean serves(String rawPath) {
        return rawPath.startsWith(PREFIX);
    }

    /**
     * Serves the request (any method); answers every outcome itself. True when the answer comes later: then
     * {@code answered} runs on the connection's loop once it is written, with whether the connection stays open.
     */
    public static boolean serve(ServerContext server, ChannelHandlerContext ctx, HttpRequest request,
            RequestTarget target, boolean fromPeer, boolean keepAlive, Consumer<Boolean> answered) {
        HttpReplies replies = server.replies();
        String rawPath = target.rawPath();
        String rest = rawPath.substring(PREFIX.length());
        if (!rest.endsWith(RUNS) || rest.indexOf('/') != rest.length() - RUNS.length()) {
            server.metrics().refused(Refusal.NOT_FOUND);
            replies.error(ctx, request, "not_found", HttpResponseStatus.NOT_FOUND, "no such endpoint: " + rawPath,
                    keepAlive);
            return false;
        }
        String threadId = PercentDecoder.decode(rest, 0, rest.length() - RUNS.length(), false);
        if (threadId == null || !isValidThreadId(threadId)) {
            server.metrics().refused(Refusal.BAD_REQUEST);
            replies.error(ctx, request, "bad_thread_id", HttpResponseStatus.BAD_REQUEST, "thread id must be 1-"
                    + ThreadIndex.MAX_THREAD_ID_CHARS + " characters, none of them a control character", keepAlive);
            return false;
        }
        if (!request.method().equals(HttpMethod.GET)) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, "GET, OPTIONS");
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            server.metrics().refused(Refusal.BAD_REQUEST);
            replies.send(ctx, request, r, false);
            return false;
        }
        String token = TokenExtractor.extract(request, target.parameters(TokenExtractor.QUERY_PARAMETER),
                server.cors().allowsCredentials(request));
        AuthDecision decision = server.authorizer().authorize(token, threadId, Right.THREADS);
        if (decision == AuthDecision.UNAUTHENTICATED) {
            server.metrics().refused(Refusal.UNAUTHENTICATED);
            replies.error(ctx, request, "unauthenticated", HttpResponseStatus.UNAUTHORIZED,
                    server.authorizer().refusalMessage(token), false);
            return false;
        }
        if (decision == AuthDecision.FORBIDDEN) {
            server.metrics().refused(Refusal.FORBIDDEN);
            replies.error(ctx, request, "forbidden", HttpResponseStatus.FORBIDDEN,
                    "the token does not allow listing thread " + threadId + " (the \"threads\" right)", false);
            return false;
        }
        int limit = limitOf(target.parameter("limit"));
        String afterText = target.parameter("after");
        ThreadRun.Cursor after = afterText == null ? null : ThreadRun.Cursor.decode(afterText);
        if (limit < 0 || afterText != null && after == null) {
            server.metrics().refused(Refusal.BAD_REQUEST);
            replies.error(ctx, request, "bad_request", HttpResponseStatus.BAD_REQUEST, limit < 0
                    ? "limit must be an integer from 1 to " + MAX_LIMIT
                    : "after must be the next cursor of an earlier answer", keepAlive);
            return false;
        }
        String caller = server.authorizer().callerOf(token);
        if (caller == null) {
            caller = "address:" + addressOf(ctx);
        }
        ListingSlots slots = server.threadListings();
        ListingSlots.Outcome slot = slots.take(caller);
        if (slot != ListingSlots.Outcome.TAKEN) {
            server.metrics().refused(Refusal.LISTINGS_BUSY);
            replies.error(ctx, request, Refusal.LISTINGS_BUSY, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    slot == ListingSlots.Outcome.CALLER_BUSY
                            ? "this caller has " + slots.maxPerCaller() + " thread listings being gathered already "
                                    + "(its share of the node's " + slots.maxInFlight() + "); try again"
                            : slots.maxInFlight() + " thread listings are being gathered already; try again",
                    keepAlive);
            return false;
        }
        gather(server, ctx, request, threadId, token, caller, after, limit, fromPeer, keepAlive, answered);
        return true;
    }

    /** The connection's remote address without its port: the caller when authorization is off. */
    private static String addressOf(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                ? a.getAddress().getHostAddress() : String.valueOf(ctx.channel().remoteAddress());
    }

    /** The {@code limit} parameter: {@link #DEFAULT_LIMIT} when absent, -1 when not 1 to {@link #MAX_LIMIT}. */
    private static int limitOf(String text) {
        if (text == null) {
            return DEFAULT_LIMIT;
        }
        if (text.isEmpty() || text.length() > 4) {
            return -1;
        }
        int n = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n >= 1 && n <= MAX_LIMIT ? n : -1;
    }

    /** AG-UI thread ids are free text: any 1-256 characters but control characters. */
    static boolean isValidThreadId(String threadId) {
        if (threadId.isEmpty() || threadId.length() > ThreadIndex.MAX_THREAD_ID_CHARS) {
            return false;
        }
        for (int i = 0; i < threadId.length(); i++) {
            char c = threadId.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return false;
            }
        }
        return true;
    }

    private static void gather(ServerContext server, ChannelHandlerContext ctx, HttpRequest request, String threadId,
            String token, String caller, ThreadRun.Cursor after, int limit, boolean fromPeer, boolean keepAlive,
            Consumer<Boolean> answered) {
        Workers workers = server.workers();
        Predicate<String> visible = runId -> server.authorizer().authorizeAny(token, runId) == AuthDecision.ALLOWED;
        List<CompletableFuture<List<ThreadRun>>> parts = new ArrayList<>(workers.size());
        for (int i = 0; i < workers.size(); i++) {
            Worker w = workers.get(i);
            // one more than the page, so the answer knows whether a next page exists
            parts.add(CompletableFuture.supplyAsync(
                    () -> w.registry().threads().runsOf(threadId, after, limit + 1, visible), w.loop()));
        }
        // --peers: the other nodes' pages too (a peer's own request is answered from this node alone)
        Cluster cluster = server.cluster();
        CompletableFuture<Cluster.PeerRuns> peers = cluster == null || fromPeer
                ? CompletableFuture.completedFuture(new Cluster.PeerRuns(List.of(), false))
                : cluster.threadRunsOfPeers(request);
        ctx.channel().config().setAutoRead(false);
        CompletableFuture.allOf(CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])), peers)
                .orTimeout(GATHER_TIMEOUT_MS + 500, TimeUnit.MILLISECONDS)
                .whenComplete((ignored, failure) -> ctx.channel().eventLoop().execute(() -> {
                    server.threadListings().give(caller);
                    boolean kept = false;
                    try {
                        if (failure != null) {
                            boolean local = parts.stream().anyMatch(p -> !p.isDone() || p.isCompletedExceptionally());
                            server.replies().error(ctx, request, local ? "workers_busy" : "peer_unavailable",
                                    HttpResponseStatus.SERVICE_UNAVAILABLE, local ? "the workers did not answer "
                                            + "within " + GATHER_TIMEOUT_MS + " ms; try again"
                                            : "a cluster member did not give its part of the listing: " + failure
                                                    .getMessage() + "; retry", false);
                            return;
                        }
                        List<ThreadRun> runs = new ArrayList<>();
                        for (ThreadRun r : peers.join().runs()) {
                            // a peer's page went through the same rule there; filtered again here all the same,
                            // so a peer's answer never lists what this caller may not see
                            if (visible.test(r.runId())) {
                                runs.add(r);
                            }
                        }
                        for (CompletableFuture<List<ThreadRun>> part : parts) {
                            runs.addAll(part.join());
                        }
                        reply(server, ctx, request, threadId, runs, after, limit, peers.join().more(), fromPeer,
                                keepAlive);
                        kept = keepAlive;
                    } catch (RuntimeException e) {
                        ctx.pipeline().fireExceptionCaught(e);
                    }
                    answered.accept(kept);
                }));
    }

    private static void reply(ServerContext server, ChannelHandlerContext ctx, HttpRequest request, String threadId,
            List<ThreadRun> runs, ThreadRun.Cursor after, int limit, boolean peersHoldMore, boolean fromPeer,
            boolean keepAlive) {
        if (runs.isEmpty() && after == null) {
            server.metrics().refused(Refusal.NOT_FOUND);
            server.replies().error(ctx, request, "not_found", HttpResponseStatus.NOT_FOUND,
                    "no held run of thread " + threadId, keepAlive);
            return;
        }
        runs.sort(ThreadRun.ORDER);
        int n = Math.min(runs.size(), limit);
        StringBuilder sb = new StringBuilder(64 + 128 * n).append("{\"threadId\":");
        Json.quote(sb, threadId);
        sb.append(",\"runs\":[");
        for (int i = 0; i < n; i++) {
            ThreadRun r = runs.get(i);
            sb.append(i == 0 ? "{" : ",{").append("\"runId\":");
            Json.quote(sb, r.runId());
            sb.append(",\"running\":").append(!r.ended())
                    .append(",\"events\":").append(r.events())
                    .append(",\"startedAt\":").append(r.startedAtMs());
            if (fromPeer) {
                // the asking node merges pages in start order: it needs the stamp whole, not its milliseconds
                sb.append(",\"startedAtUs\":").append(r.startedAtMicros());
            }
            sb.append(",\"endedAt\":").append(r.ended() ? Long.toString(r.endedAtMs()) : "null").append('}');
        }
        sb.append("],\"next\":");
        if (runs.size() > limit || peersHoldMore && n > 0) {
            Json.quote(sb, runs.get(n - 1).cursor().encode());
        } else {
            sb.append("null");
        }
        sb.append('}');
        server.replies().json(ctx, request, HttpResponseStatus.OK, sb.toString(), keepAlive);
    }
}

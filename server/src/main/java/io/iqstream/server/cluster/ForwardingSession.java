package io.iqstream.server.cluster;

import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.telemetry.RelayHop;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import java.util.function.BooleanSupplier;

/**
 * One run request relayed to the peer that holds the run: the request head (with the peer header, so it is not
 * forwarded again) and then each body chunk as it arrives go to the peer; the peer's answer — a JSON reply or an
 * SSE stream, {@code Last-Event-ID} resume included since the headers pass unchanged — comes back chunk by chunk
 * and is flushed once per read. Backpressure both ways follows writability: a full client socket stops reading the
 * peer, a full peer socket stops reading the client.
 *
 * <p>Confined to the run's worker loop: the client's connection was moved there, and the peer connection is made
 * on (or borrowed from) the same loop. When the peer cannot be reached the client gets 503 {@code peer_unavailable}
 * (Retry-After 1; the peer is suspected dead until a probe finds it again); when the peer's connection breaks
 * mid-answer the client's is closed too (a subscriber reconnects with Last-Event-ID; a publisher retries with it).
 */
final class ForwardingSession implements Relay {
    private final ChannelHandlerContext client;
    private final Member target;
    private final PeerChannels peers;
    private final Membership membership;
    private final HttpReplies replies;
    private final ClusterMetrics metrics;
    private final boolean keepAlive;
    private final PeerAuth auth;
    /** The peer header sent: the answer's proof must match it. */
    private final PeerAuth.Signed signed;
    private final HttpRequest outgoing;
    private final ArrayDeque<HttpContent> pending = new ArrayDeque<>(4);
    private Channel peer;
    private boolean requestSent;
    /** Some of the request's body went to the peer: if the peer breaks now, what it took is unknown. */
    private boolean bodyStarted;
    private boolean responseStarted;
    private boolean responseKeepAlive;
    private boolean done;
    /** Waits for the answer to be whole: a request pipelined behind this one (see {@link Relay#whenDone}). */
    private Consumer<Boolean> whenDone;
    /** Asked when the peer cannot be reached before anything was relayed: true when it took the request over. */
    private final BooleanSupplier unreachable;
    /** The relay's span when tracing is on, else null. */
    private final RelayHop hop;

    private ForwardingSession(ChannelHandlerContext client, HttpRequest request, Member target, PeerChannels peers,
            Membership membership, HttpReplies replies, PeerAuth auth, ClusterMetrics metrics, boolean keepAlive,
            boolean placed, BooleanSupplier unreachable, RelayHop hop) {
        this.client = client;
        this.hop = hop;
        this.unreachable = unreachable;
        this.metrics = metrics;
        this.target = target;
        this.peers = peers;
        this.membership = membership;
        this.replies = replies;
        this.keepAlive = keepAlive;
        HttpHeaders headers = request.headers().copy();
        for (CharSequence hopByHop : new CharSequence[] {HttpHeaderNames.CONNECTION, HttpHeaderNames.KEEP_ALIVE,
                HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TE, HttpHeaderNames.UPGRADE,
                HttpHeaderNames.EXPECT}) {
            headers.remove(hopByHop);
        }
        headers.remove(PeerAuth.PROOF);
        headers.remove(Forwarder.PLACED);
        if (placed) {
            headers.set(Forwarder.PLACED, "1");
        }
        this.signed = auth.sign(target, request.method().name(), request.uri(), System.currentTimeMillis());
        this.auth = auth;
        headers.set(PeerAuth.HEADER, signed.header());
        if (!request.protocolVersion().isKeepAliveDefault()) {
            headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        this.outgoing = new DefaultHttpRequest(request.protocolVersion(), request.method(), request.uri(), headers);
    }

    /**
     * Starts relaying {@code request} to {@code target}. On the client's (the run's worker) loop. {@code
     * unreachable} is asked, when the peer cannot be reached or closes before anything was relayed, whether it
     * takes the request over (a read that looks for its run again); false: the client gets 503.
     */
    static ForwardingSession start(ChannelHandlerContext client, HttpRequest request, Member target,
            PeerChannels peers, Membership membership, HttpReplies replies, PeerAuth auth, ClusterMetrics metrics,
            boolean keepAlive, boolean placed, BooleanSupplier unreachable, RelayHop hop) {
        ForwardingSession s = new ForwardingSession(client, request, target, peers, membership, replies, auth,
                metrics, keepAlive, placed, unreachable, hop);
        peers.acquire(client.channel().eventLoop(), target, s, s::connected);
        return s;
    }

    private void connected(Channel channel, Throwable cause) {
        if (channel == null) {
            metrics.failed(ClusterMetrics.Failure.CONNECT);
            membership.suspect(target);
            releasePending();
            if (!done) {
                done = true;
                endHop("unreachable");
                if (unreachable.getAsBoolean()) {
                    return;
                }
                replies.error(client, null, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "the node that serves this run (" + target + ") cannot be reached: "
                                + (cause == null ? "closed" : cause.getMessage()) + "; retry", false);
                finished(false);
            }
            return;
        }
        if (done) { // the client left while connecting
            channel.close();
            return;
        }
        peer = channel;
        peer.write(outgoing);
        while (!pending.isEmpty()) {
            writeToPeer(pending.poll());
        }
        peer.flush();
    }

    private void writeToPeer(HttpContent content) {
        if (content instanceof LastHttpContent) {
            requestSent = true;
        }
        bodyStarted |= content.content().isReadable();
        peer.write(content);
        if (!peer.isWritable()) {
            client.channel().config().setAutoRead(false);
        }
    }

    @Override
    public void onContent(HttpContent content) {
        if (done) {
            content.release();
        } else if (peer == null) {
            pending.add(content);
        } else {
            writeToPeer(content);
        }
    }

    @Override
    public void onReadComplete() {
        if (peer != null && !done) {
            peer.flush();
        }
    }

    @Override
    public void writabilityChanged() {
        if (peer != null && !done) {
            peer.config().setAutoRead(client.channel().isWritable());
        }
    }

    /** The peer's writability: the client is read only while the peer can take more. */
    void peerWritabilityChanged() {
        if (!done) {
            client.channel().config().setAutoRead(peer.isWritable());
        }
    }

    @Override
    public void clientClosed() {
        releasePending();
        if (!done) {
            done = true;
            endHop("client_closed");
            if (peer != null) {
                peer.close();
            }
            finished(false);
        }
    }

    @Override
    public boolean isDone() {
        return done;
    }

    @Override
    public void whenDone(Consumer<Boolean> then) {
        if (done) {
            then.accept(false);
        } else {
            whenDone = then;
        }
    }

    /** The answer is whole or failed: what waits behind it goes on ({@code kept}) or is dropped. */
    private void finished(boolean kept) {
        Consumer<Boolean> then = whenDone;
        whenDone = null;
        if (then != null) {
            then.accept(kept);
        }
    }

    /** A message of the peer's answer. Takes ownership of {@code msg}. */
    void fromPeer(Object msg) {
        if (done) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpResponse r
                && !auth.proves(signed, r.status().code(), r.headers().get(PeerAuth.PROOF))) {
            // the answer does not come from a holder of the secret: nothing of it reaches the client
            ReferenceCountUtil.release(msg);
            done = true;
            endHop("peer_unproven");
            metrics.failed(ClusterMetrics.Failure.UNPROVEN);
            membership.suspect(target);
            releasePending();
            peer.close();
            replies.error(client, null, "peer_unproven", HttpResponseStatus.BAD_GATEWAY,
                    "the node that serves this run (" + target + ") answered without proof of the cluster "
                            + "secret; retry", false);
            finished(false);
            return;
        }
        if (msg instanceof HttpResponse r && r.status().code() == 404 && r.headers().contains(Forwarder.NOT_HELD)) {
            // the node this was relayed to (from memory) does not hold the run: look again, or the client retries
            ReferenceCountUtil.release(msg);
            done = true;
            endHop("not_held");
            releasePending();
            peer.close();
            if (!unreachable.getAsBoolean()) {
                replies.error(client, null, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "run moved: the node remembered for it (" + target + ") no longer holds it; retry", false);
            }
            return;
        }
        if (msg instanceof HttpResponse r) {
            responseStarted = true;
            if (hop != null) {
                hop.status(r.status().code());
            }
            responseKeepAlive = HttpUtil.isKeepAlive(r);
            HttpHeaders h = r.headers().copy();
            h.remove(PeerAuth.PROOF);
            h.remove(HttpHeaderNames.CONNECTION);
            h.remove(HttpHeaderNames.KEEP_ALIVE);
            boolean clientKeeps = keepAlive && responseKeepAlive;
            if (!clientKeeps) {
                h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            } else if (!outgoing.protocolVersion().isKeepAliveDefault()) {
                h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            client.write(new DefaultHttpResponse(outgoing.protocolVersion(), r.status(), h));
        }
        if (msg instanceof HttpContent c) {
            boolean last = c instanceof LastHttpContent;
            if (last) {
                done = true;
                endHop("answered");
                releasePending();
                var f = client.writeAndFlush(c);
                if (!(keepAlive && responseKeepAlive)) {
                    f.addListener(ChannelFutureListener.CLOSE);
                }
                client.channel().config().setAutoRead(true);
                if (responseKeepAlive && requestSent) {
                    peers.release(target, peer);
                } else {
                    peer.close();
                }
                finished(keepAlive && responseKeepAlive);
                return;
            }
            client.write(c);
            if (!client.channel().isWritable()) {
                peer.config().setAutoRead(false);
            }
        } else if (!(msg instanceof HttpResponse)) {
            ReferenceCountUtil.release(msg);
        }
    }

    void peerReadComplete() {
        if (!done) {
            client.flush();
        }
    }

    /** The peer's connection closed before its answer was whole. */
    void peerClosed() {
        if (done) {
            return;
        }
        done = true;
        endHop("peer_closed");
        metrics.failed(ClusterMetrics.Failure.BROKEN);
        releasePending();
        if (responseStarted || bodyStarted) {
            // never an HTTP answer once body bytes went through: the client must see a broken request (a
            // publisher then asks where the run stands, and gets run_lost if it died with the peer)
            client.flush();
            client.close();
        } else if (!unreachable.getAsBoolean()) {
            replies.error(client, null, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "the node that serves this run (" + target + ") closed the connection; retry", false);
        }
        finished(false);
    }

    private void endHop(String outcome) {
        if (hop != null) {
            hop.end(outcome);
        }
    }

    private void releasePending() {
        while (!pending.isEmpty()) {
            pending.poll().release();
        }
    }
}

package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.telemetry.RequestScopeHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;

/**
 * The whole request path of a main-port connection. Before it, on the listener, {@link #connectionLimit()}: a slot
 * under {@code --max-connections}, or the new connection closed at once, before it reaches a loop. Then, in order:
 * <ol>
 *   <li>{@code body}: the step-down ({@link ChunkedBodyReader}): bytes go on to the codec cut at each head's end,
 *       and a streaming publish body's data chunks are read there and handed straight to the publish, past the
 *       codec and every handler after it;
 *   <li>{@code arrival}: a request's first byte starts its header timer ({@link RequestTimeoutHandler});
 *   <li>{@code http}: the HTTP/1.1 codec (line, header and chunk limits; failures become decoder results);
 *   <li>{@code timeouts}: header and idle timeouts ({@link RequestTimeoutHandler});
 *   <li>{@code expect}: {@code 100 Continue} for clients that ask (curl does for large bodies);
 *   <li>{@code peer} (only with {@code --peers}): signs this node's answer to a verified peer request
 *       ({@link io.iqstream.server.cluster.PeerProofHandler});
 *   <li>{@code relay}: the router that refuses malformed requests, answers operations endpoints, moves run
 *       requests to their worker and serves them there ({@link HttpRequestHandler}).
 * </ol>
 * Nothing else: no aggregator (publish bodies are streamed), no extra buffering (subscribers write slices of the
 * run's log, framed below the codec by {@code wire.ChunkFramer}).
 *
 * <p>While a live reader waits (an SSE response streaming, a long-poll at its tail) its connection needs no
 * request path: {@link #dropRequestPath} takes {@code arrival}, {@code http} and {@code expect} out (the codec's
 * decoder, its parser state and buffers: about half of an idle reader's memory) and puts the shared
 * {@link StreamEndEncoder} where the codec was; {@link #restoreRequestPath} puts fresh ones back when it ends
 * ({@code wire.WaitingReader}).
 */
public final class IqStreamInitializer extends ChannelInitializer<Channel> {
    /** The longest request line decoded (longer: 400); public for the tests that send maximal heads. */
    public static final int MAX_INITIAL_LINE_BYTES = 8192;
    /** The most header bytes decoded (more: 400); public for the tests that send maximal heads. */
    public static final int MAX_HEADER_BYTES = 16384;
    private static final int MAX_CHUNK_BYTES = 64 * 1024;

    private final ServerContext server;
    private final ConnectionLimitHandler connections;

    public IqStreamInitializer(ServerContext server, ConnectionSlots slots) {
        this.server = server;
        this.connections = new ConnectionLimitHandler(slots);
    }

    /** The listener's handler: a connection over {@code --max-connections} is closed as it is accepted. */
    public ConnectionLimitHandler connectionLimit() {
        return connections;
    }

    @Override
    protected void initChannel(Channel ch) {
        ServerConfig config = server.config();
        RequestTimeoutHandler timeouts = new RequestTimeoutHandler(config.headerTimeoutMs(),
                config.bodyTimeoutMs(), config.idleTimeoutMs(), server.metrics(), server.replies());
        ChunkedBodyReader body = new ChunkedBodyReader();
        ch.pipeline()
                .addLast("body", body)
                .addLast("arrival", timeouts.arrivalWatch())
                .addLast("http", newCodec())
                .addLast("timeouts", timeouts)
                .addLast("expect", new HttpServerExpectContinueHandler());
        if (server.telemetry().isOn() || config.jsonLogs()) {
            // a span per traced request and the run id / stream path of log lines (neither: not in the pipeline)
            ch.pipeline().addLast("scope", new RequestScopeHandler(server.telemetry(), config.advertise()));
        }
        if (server.cluster() != null) {
            ch.pipeline().addLast("peer", server.cluster().newProofHandler());
        }
        ch.pipeline().addLast("relay", new HttpRequestHandler(server, timeouts, body));
    }

    private static HttpServerCodec newCodec() {
        return new HttpServerCodec(MAX_INITIAL_LINE_BYTES, MAX_HEADER_BYTES, MAX_CHUNK_BYTES);
    }

    /**
     * A live reader waits on this connection: the request path ({@code arrival}, the codec, {@code expect}) leaves
     * the pipeline, the shared {@link StreamEndEncoder} takes the codec's place. Not from inside the codec's own
     * call (its decoder would be removed mid-decode): the caller defers it to a task.
     */
    static void dropRequestPath(ChannelPipeline pipeline) {
        pipeline.remove("arrival");
        pipeline.remove("expect");
        pipeline.replace("http", "http", StreamEndEncoder.INSTANCE);
    }

    /** The reader ended: a fresh request path, as {@link #initChannel} made it, for the connection's next request. */
    static void restoreRequestPath(ChannelPipeline pipeline, RequestTimeoutHandler timeouts) {
        pipeline.replace("http", "http", newCodec());
        pipeline.addBefore("http", "arrival", timeouts.arrivalWatch());
        pipeline.addAfter("timeouts", "expect", new HttpServerExpectContinueHandler());
    }
}

package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;

/**
 * The whole request path of a connection: HTTP/1.1 codec, {@code 100 Continue} for clients that ask (curl does
 * for large bodies), then the router that moves run requests to their
 * worker and serves them there. Nothing else sits in the pipeline: no aggregator (publish bodies are streamed),
 * no extra buffering (subscribers write slices of the run's log).
 */
public final class IqStreamInitializer extends ChannelInitializer<Channel> {
    private static final int MAX_INITIAL_LINE_BYTES = 8192;
    private static final int MAX_HEADER_BYTES = 16384;
    private static final int MAX_CHUNK_BYTES = 64 * 1024;

    private final ServerContext server;

    public IqStreamInitializer(ServerContext server) {
        this.server = server;
    }

    @Override
    protected void initChannel(Channel ch) {
        ch.pipeline()
                .addLast("http", new HttpServerCodec(MAX_INITIAL_LINE_BYTES, MAX_HEADER_BYTES, MAX_CHUNK_BYTES))
                .addLast("expect", new HttpServerExpectContinueHandler())
                .addLast("relay", new HttpRequestHandler(server));
    }
}

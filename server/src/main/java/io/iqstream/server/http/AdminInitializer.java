package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.config.ServerConfig;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpServerCodec;

/**
 * The admin port's path ({@code --admin-port}): its own small connection cap ({@value #MAX_CONNECTIONS}, not
 * shared with {@code --max-connections}), the HTTP codec with small limits, the connection timers, and
 * {@link AdminRequestHandler}. Meant to be reachable only from the private network (health checks, Prometheus).
 */
public final class AdminInitializer extends ChannelInitializer<Channel> {
    /** Connections the admin port holds at once; counted in the main port's file reserve. */
    public static final int MAX_CONNECTIONS = 64;
    private static final int MAX_INITIAL_LINE_BYTES = 4096;
    private static final int MAX_HEADER_BYTES = 8192;
    private static final int MAX_CHUNK_BYTES = 8192;

    private final ServerContext server;
    private final ConnectionLimitHandler connections;

    public AdminInitializer(ServerContext server) {
        this.server = server;
        this.connections = new ConnectionLimitHandler(new ConnectionSlots(MAX_CONNECTIONS, null,
                server.metrics().adminConnectionsRefusedMax));
    }

    /** The admin listener's handler: a connection over its cap is closed as it is accepted. */
    public ConnectionLimitHandler connectionLimit() {
        return connections;
    }

    @Override
    protected void initChannel(Channel ch) {
        ServerConfig config = server.config();
        RequestTimeoutHandler timeouts = new RequestTimeoutHandler(config.headerTimeoutMs(),
                config.bodyTimeoutMs(), config.idleTimeoutMs(), server.metrics(), server.replies());
        ch.pipeline()
                .addLast("arrival", timeouts.arrivalWatch())
                .addLast("http", new HttpServerCodec(MAX_INITIAL_LINE_BYTES, MAX_HEADER_BYTES, MAX_CHUNK_BYTES))
                .addLast("timeouts", timeouts)
                .addLast("admin", new AdminRequestHandler(server));
    }
}

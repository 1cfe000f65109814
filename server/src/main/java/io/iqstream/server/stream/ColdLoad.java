package io.iqstream.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;
import java.util.function.Consumer;

/**
 * A request on a cold stream ({@code --cold-after}): its stream's bytes, or a fork's source's, are loaded from the
 * file first ({@link DurableStreams#load}, on the storage thread), then the request is served as any other
 * ({@link StreamExchange#serve}); until then it is a request whose answer waits for the disk (a request pipelined
 * behind it is held). The answer it then becomes (a live read, a write waiting for the disk) is followed through
 * this one.
 *
 * <p>One per request; confined to the request's worker loop (the stream's owner; a fork's source may be another's:
 * the load runs there, and its outcome comes back here).
 */
final class ColdLoad implements StreamAnswer {
    private final StreamExchange.Settings settings;
    private final ChannelHandlerContext ctx;
    private final HttpRequest request;
    private final String path;
    private final List<String> offsets;
    private final String live;
    private final String cursor;
    private final boolean keepAlive;
    private final boolean sourceReadable;
    /** The request's body, held (retained) until it is served. */
    private ByteBuf body;
    /** Gives back the body's budget charge once the body is served or released ({@link #whenBodyReleased}). */
    private Runnable bodyReleased;
    /** The answer the request became once loaded; null while loading, and once answered. */
    private StreamAnswer served;
    private boolean loading = true;
    private boolean closed;
    private long cutAfterLagMs = -1;
    private Consumer<Boolean> whenDone;

    private ColdLoad(StreamExchange.Settings settings, ChannelHandlerContext ctx, HttpRequest request, String path,
            ByteBuf body, List<String> offsets, String live, String cursor, boolean keepAlive,
            boolean sourceReadable) {
        this.settings = settings;
        this.ctx = ctx;
        this.request = request;
        this.path = path;
        this.body = body.retain();
        this.offsets = offsets;
        this.live = live;
        this.cursor = cursor;
        this.keepAlive = keepAlive;
        this.sourceReadable = sourceReadable;
    }

    /** Loads {@code cold}, then serves the request (see {@link StreamExchange#serve} for the parameters). */
    static StreamAnswer start(DurableStream cold, StreamExchange.Settings settings, ChannelHandlerContext ctx,
            HttpRequest request, String path, ByteBuf body, List<String> offsets, String live, String cursor,
            boolean keepAlive, boolean sourceReadable) {
        ColdLoad l = new ColdLoad(settings, ctx, request, path, body, offsets, live, cursor, keepAlive,
                sourceReadable);
        DurableStreams streams = settings.streams();
        EventLoop owner = streams.ownerOf(cold.path);
        EventLoop here = ctx.channel().eventLoop();
        Runnable load = () -> streams.load(cold, ctx.alloc(), result -> {
            if (here.inEventLoop()) {
                l.loaded(result);
            } else {
                here.execute(() -> l.loaded(result));
            }
        });
        if (owner.inEventLoop()) {
            load.run();
        } else {
            owner.execute(load);
        }
        return l;
    }

    private void loaded(DurableStreams.Load result) {
        loading = false;
        try {
            serveLoaded(result);
        } finally {
            Runnable release = bodyReleased;
            bodyReleased = null;
            if (release != null) {
                release.run();
            }
        }
    }

    private void serveLoaded(DurableStreams.Load result) {
        ByteBuf b = body;
        body = null;
        if (closed) {
            b.release();
            return;
        }
        if (result == DurableStreams.Load.READY) {
            served = StreamExchange.serve(settings, ctx, request, path, b, offsets, live, cursor, keepAlive,
                    sourceReadable);
        } else {
            b.release();
            StreamReply reply = new StreamReply(settings, ctx, request, path, keepAlive);
            if (result == DurableStreams.Load.OVER_BUDGET) {
                reply.overBudget();
            } else {
                reply.fileUnreadable();
            }
        }
        if (served != null && cutAfterLagMs >= 0) {
            served.cutAfterLagMs(cutAfterLagMs);
        }
        Consumer<Boolean> then = whenDone;
        whenDone = null;
        if (then == null) {
            return;
        }
        if (served == null) {
            then.accept(keepAlive);
        } else if (served.awaitsStorage()) {
            served.whenDone(then);
        } else {
            then.accept(false); // it became a live read: nothing is read behind it (as for any live read)
        }
    }

    @Override
    public boolean isDone() {
        return !loading && (served == null || served.isDone());
    }

    @Override
    public void closed() {
        closed = true;
        if (served != null) {
            served.closed();
        }
    }

    @Override
    public boolean awaitsStorage() {
        return loading || served != null && served.awaitsStorage();
    }

    @Override
    public void whenDone(Consumer<Boolean> then) {
        if (loading) {
            whenDone = then;
        } else if (served != null) {
            served.whenDone(then);
        } else {
            then.accept(keepAlive);
        }
    }

    @Override
    public void cutAfterLagMs(long lagMs) {
        if (served != null) {
            served.cutAfterLagMs(lagMs);
        } else {
            cutAfterLagMs = lagMs;
        }
    }

    @Override
    public void whenBodyReleased(Runnable release) {
        if (body == null) {
            release.run();
        } else {
            bodyReleased = release; // the body stays charged while the file is read
        }
    }

    @Override
    public void writabilityChanged() {
        if (served != null) {
            served.writabilityChanged();
        }
    }
}

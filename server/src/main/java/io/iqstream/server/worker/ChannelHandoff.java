package io.iqstream.server.worker;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;

/**
 * Moves a connection to the worker that owns its run.
 *
 * <h2>Implementation notes</h2>
 * The connection was accepted onto some loop; its first request names a run owned by another. We stop reading
 * (autoRead off), deregister the channel from its loop and register it on the owner's; the pipeline, with the
 * HTTP codec's parse state, travels with it. Messages already decoded from the same read keep arriving on the
 * old loop while the deregistration is pending: the caller holds them ({@code HttpRequestHandler}) and replays
 * them on the owner once {@code onArrived} runs there. From then on the publisher and every subscriber of the run
 * live on one thread, so an event goes from the publisher's socket to the subscribers' sockets with no lock,
 * queue or copy between threads. An exception thrown by {@code onArrived} is fired into the pipeline on the
 * target loop ({@code exceptionCaught}), which answers it; it never leaves the connection hanging with reads off.
 * The move costs two loop hops once per connection (or per request that names a
 * run of another worker on a keep-alive connection), never per event.
 */
public final class ChannelHandoff {
    private ChannelHandoff() {}

    /**
     * Starts the move; {@code onArrived} runs on {@code target} once registered there; a failed move closes and
     * runs {@code onFailed} (on the loop that saw the failure; the connection is on no other), an exception from
     * {@code onArrived} goes to the pipeline's {@code exceptionCaught}. A connection closed while it is between
     * loops (a reset read on the old loop after the deregistration was queued) cannot be registered again, and
     * Netty gives its pipeline no {@code channelInactive}: {@code onFailed} runs, then the move fires it on the new
     * loop, so every handler (the HTTP codec's partial request included) releases what it holds. A connection that
     * arrives on a loop shutting down (the server closes) is closed there and {@code onFailed} runs: that loop
     * closed its channels once already and would end with this one open.
     */
    @SuppressWarnings("deprecation")
    public static void moveTo(Channel channel, EventLoop target, Runnable onArrived, Runnable onFailed) {
        channel.config().setAutoRead(false);
        channel.deregister().addListener(deregistered -> {
            if (!deregistered.isSuccess()) {
                channel.close();
                onFailed.run();
                return;
            }
            // even a connection that broke off meanwhile is registered on the target, so its close runs
            // through the pipeline there and the codec's buffers are released
            target.register(channel).addListener(registered -> {
                if (!registered.isSuccess()) {
                    // closed while on no loop, or refused by a loop shutting down: closed here (its unsent writes
                    // released; a no-op if it was closed), but Netty fires no channelInactive for a channel on no
                    // loop, so the pipeline gets it here, on the loop the channel names, and its decoders release
                    // what they hold (the HTTP codec's bytes of a request begun)
                    channel.unsafe().close(channel.unsafe().voidPromise());
                    onFailed.run();
                    channel.pipeline().fireChannelInactive();
                    return;
                }
                if (target.isShuttingDown()) {
                    // registered on a loop that is going away (the server closes): that loop may have closed its
                    // channels already and would end with this one open, unreleased; closed here, through the
                    // pipeline, instead of served
                    channel.close();
                    onFailed.run();
                    return;
                }
                try {
                    onArrived.run();
                } catch (Throwable t) {
                    channel.pipeline().fireExceptionCaught(t);
                }
            });
        });
    }
}

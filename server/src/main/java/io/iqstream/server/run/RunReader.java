package io.iqstream.server.run;

import io.netty.channel.Channel;

/**
 * A party reading a run as it grows: a subscriber's stream. Called on the run's worker event loop only.
 */
public interface RunReader {
    /** New events (or the run's end) are available; write what the socket takes, flush later. */
    void eventsAvailable();

    /** Flushes what {@link #eventsAvailable()} wrote during this loop turn. */
    void flush();

    /** The connection this reader writes to. */
    Channel channel();

    /** The run is gone (deleted or expired): end the stream now. */
    void runDropped();
}

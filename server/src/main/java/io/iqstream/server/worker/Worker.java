package io.iqstream.server.worker;

import io.iqstream.server.run.RunRegistry;
import io.netty.channel.EventLoop;

/**
 * One worker: an event loop thread and the runs it owns. Every run id maps to exactly one worker
 * ({@link Workers#ownerOf}); the run's publisher and subscribers are served on this loop.
 */
public record Worker(int index, EventLoop loop, RunRegistry registry) {}

package io.iqstream.server.warmup;

import java.io.IOException;

/** The warm-up got an answer that a correct server does not give; it stops there and says why. */
final class WarmupFailure extends IOException {
    WarmupFailure(String message) {
        super(message);
    }
}

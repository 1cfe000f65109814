package io.iqstream.server.metrics;

import java.util.EnumMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs, at info, how many requests were refused since the last call and why — one line a minute at most, none
 * when nothing was refused. (Each refusal is also logged on its own at debug.) Run by one scheduler thread.
 */
public final class RefusalSummary implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(RefusalSummary.class);

    private final Metrics metrics;
    private final EnumMap<Refusal, Long> seen = new EnumMap<>(Refusal.class);

    public RefusalSummary(Metrics metrics) {
        this.metrics = metrics;
        for (Refusal r : Refusal.values()) {
            seen.put(r, 0L);
        }
    }

    @Override
    public void run() {
        String line = summarise();
        if (line != null) {
            LOG.info("refused since last summary: {}", line);
        }
    }

    /** The refusals since the last call, as {@code reason=count, …}, or null when there were none. */
    String summarise() {
        StringBuilder sb = new StringBuilder();
        for (Refusal r : Refusal.values()) {
            long now = metrics.refusals(r);
            long delta = now - seen.get(r);
            seen.put(r, now);
            if (delta > 0) {
                sb.append(sb.length() == 0 ? "" : ", ").append(r.label()).append('=').append(delta);
            }
        }
        return sb.length() == 0 ? null : sb.toString();
    }
}

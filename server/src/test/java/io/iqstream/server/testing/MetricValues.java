package io.iqstream.server.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One unlabelled metric's value from a server's {@code /metrics} page, as Prometheus would scrape it. */
public final class MetricValues {
    private static final Pattern METRIC = Pattern.compile("(?m)^(iqstream_[a-z_]+) (-?\\d+)$");

    private MetricValues() {}

    /** The value of {@code name} on {@code base + "/metrics"}; fails when the page has no such metric. */
    public static long of(String base, String name) throws Exception {
        Matcher m = METRIC.matcher(DurableHttp.send("GET", base + "/metrics", null).body());
        while (m.find()) {
            if (m.group(1).equals(name)) {
                return Long.parseLong(m.group(2));
            }
        }
        throw new AssertionError("no metric " + name + " at " + base + "/metrics");
    }
}

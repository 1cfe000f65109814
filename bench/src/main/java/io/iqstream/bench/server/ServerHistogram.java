package io.iqstream.bench.server;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Prometheus histogram read from a server's metrics text (IQ-Stream's {@code iqstream_resume_seconds}): its
 * buckets' upper bounds in seconds, their cumulative counts, the count and the sum. Two readings give the
 * window's own ({@link #since}), so the server's account of its part of a resume stands beside the generator's
 * time to resume.
 *
 * @param boundsS the finite upper bounds, ascending ({@code +Inf} is the count)
 * @param cumulative observations at or under each bound
 */
public record ServerHistogram(double[] boundsS, long[] cumulative, long count, double sumS) {
  private static final double[] SHARES_UNDER_S = {0.0001, 0.00025, 0.0005, 0.001};

  /** The histogram {@code name} of {@code metrics}, or null when the text has none (an older server). */
  public static ServerHistogram parse(String metrics, String name) {
    Matcher b = Pattern.compile("(?m)^" + Pattern.quote(name) + "_bucket\\{le=\"([0-9.eE+-]+)\"} (\\d+)$")
        .matcher(metrics);
    List<double[]> buckets = new ArrayList<>();
    while (b.find()) {
      buckets.add(new double[] {Double.parseDouble(b.group(1)), Long.parseLong(b.group(2))});
    }
    Matcher c = Pattern.compile("(?m)^" + Pattern.quote(name) + "_count (\\d+)$").matcher(metrics);
    Matcher s = Pattern.compile("(?m)^" + Pattern.quote(name) + "_sum ([0-9.eE+-]+)$").matcher(metrics);
    if (buckets.isEmpty() || !c.find() || !s.find()) {
      return null;
    }
    double[] bounds = new double[buckets.size()];
    long[] counts = new long[buckets.size()];
    for (int i = 0; i < bounds.length; i++) {
      bounds[i] = buckets.get(i)[0];
      counts[i] = (long) buckets.get(i)[1];
    }
    return new ServerHistogram(bounds, counts, Long.parseLong(c.group(1)), Double.parseDouble(s.group(1)));
  }

  /** What was observed after {@code before} (same buckets), or this whole when {@code before} is null. */
  public ServerHistogram since(ServerHistogram before) {
    if (before == null) {
      return this;
    }
    if (before.boundsS.length != boundsS.length) {
      throw new IllegalArgumentException("histograms with different buckets");
    }
    long[] counts = new long[cumulative.length];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = cumulative[i] - before.cumulative[i];
    }
    return new ServerHistogram(boundsS, counts, count - before.count, sumS - before.sumS);
  }

  /** Observations at or under {@code boundS} (one of the bounds), as a share of the count; NaN for none. */
  public double shareUnder(double boundS) {
    int i = indexOf(boundS);
    if (i < 0) {
      throw new IllegalArgumentException("no bucket bound " + boundS);
    }
    return count == 0 ? Double.NaN : cumulative[i] / (double) count;
  }

  /** The bucket that holds the median, as {@code (low, high] ms}; "–" for no observation. */
  public String medianBucket() {
    if (count == 0) {
      return "–";
    }
    double low = 0;
    for (int i = 0; i < boundsS.length; i++) {
      if (cumulative[i] * 2 >= count) {
        return String.format(Locale.ROOT, "(%s, %s] ms", ms(low), ms(boundsS[i]));
      }
      low = boundsS[i];
    }
    return String.format(Locale.ROOT, "over %s ms", ms(low));
  }

  /** In words, for the log: "n 20, mean 0.081 ms, median in (0.05, 0.1] ms, ≤ 0.1 ms 70%, ...". */
  public String describe() {
    if (count == 0) {
      return "n 0";
    }
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "n %d, mean %.3f ms, median in %s", count,
        sumS / count * 1e3, medianBucket()));
    for (double bound : SHARES_UNDER_S) {
      if (indexOf(bound) >= 0) {
        sb.append(String.format(Locale.ROOT, ", ≤ %s ms %.0f%%", ms(bound), 100 * shareUnder(bound)));
      }
    }
    return sb.toString();
  }

  private int indexOf(double boundS) {
    for (int i = 0; i < boundsS.length; i++) {
      if (boundsS[i] == boundS) {
        return i;
      }
    }
    return -1;
  }

  private static String ms(double seconds) {
    return new BigDecimal(Double.toString(seconds)).movePointRight(3).stripTrailingZeros().toPlainString();
  }
}

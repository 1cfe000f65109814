package io.iqstream.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A line chart as a standalone SVG: x = concurrent runs (log scale when the levels span more than a
 * factor of 8), y linear from 0 or, for a chart made {@link #logY()}, logarithmic with ticks at 1, 2, 5,
 * 10, 20, 50... (latencies that span 1 ms to seconds), one polyline per server, axes with ticks, a
 * legend. Written by hand, no library.
 * Any thread; build, then {@link #toSvg()}.
 */
public final class SvgChart {
  private static final String[] COLORS = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"
  };
  private static final int W = 720;
  private static final int H = 420;
  private static final int LEFT = 80;
  private static final int RIGHT = 170;
  private static final int TOP = 40;
  private static final int BOTTOM = 60;

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final Map<String, List<double[]>> series = new LinkedHashMap<>();
  private boolean logY;

  public SvgChart(String title, String xLabel, String yLabel) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
  }

  /** Draws y on a log axis (points with y ≤ 0 are left out); call before adding points. */
  public SvgChart logY() {
    this.logY = true;
    return this;
  }

  /** Adds a point to a series (points are drawn in x order). */
  public SvgChart point(String seriesName, double x, double y) {
    if (Double.isFinite(x) && Double.isFinite(y) && !(logY && y <= 0)) {
      series.computeIfAbsent(seriesName, k -> new ArrayList<>()).add(new double[] {x, y});
    }
    return this;
  }

  public String toSvg() {
    double minX = Double.MAX_VALUE;
    double maxX = -Double.MAX_VALUE;
    double maxY = 0;
    double minY = Double.MAX_VALUE;
    for (List<double[]> pts : series.values()) {
      pts.sort((a, b) -> Double.compare(a[0], b[0]));
      for (double[] p : pts) {
        minX = Math.min(minX, p[0]);
        maxX = Math.max(maxX, p[0]);
        maxY = Math.max(maxY, p[1]);
        minY = Math.min(minY, p[1]);
      }
    }
    if (minX > maxX) {
      minX = 0;
      maxX = 1;
    }
    boolean logX = minX > 0 && maxX / minX > 8;
    if (minX == maxX) {
      minX = logX ? minX / 2 : Math.max(0, minX - 1);
      maxX = logX ? maxX * 2 : maxX + 1;
    }
    double yTop = logY ? logTickCeil(maxY <= 0 ? 1 : maxY) : niceCeil(maxY <= 0 ? 1 : maxY * 1.05);
    double yBottom = logY ? logTickFloor(minY == Double.MAX_VALUE || minY <= 0 ? 1 : minY) : 0;
    if (logY && yBottom >= yTop) {
      yTop = logTickCeil(yTop * 1.01);
    }
    double plotW = W - LEFT - RIGHT;
    double plotH = H - TOP - BOTTOM;
    final double fMinX = minX;
    final double fMaxX = maxX;
    java.util.function.DoubleUnaryOperator sx = x -> LEFT + plotW * (logX
        ? (Math.log(x) - Math.log(fMinX)) / (Math.log(fMaxX) - Math.log(fMinX))
        : (x - fMinX) / (fMaxX - fMinX));
    final double fBottom = yBottom;
    final double fTop = yTop;
    java.util.function.DoubleUnaryOperator sy = logY
        ? y -> TOP + plotH * (1 - (Math.log(y) - Math.log(fBottom))
            / (Math.log(fTop) - Math.log(fBottom)))
        : y -> TOP + plotH * (1 - y / fTop);

    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " font-family=\"sans-serif\" font-size=\"12\">%n", W, H, W, H));
    s.append(String.format(Locale.ROOT,
        "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", W, H));
    s.append(String.format(Locale.ROOT,
        "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>%n", LEFT,
        esc(title)));
    // axes
    s.append(String.format(Locale.ROOT,
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", LEFT, H - BOTTOM,
        W - RIGHT, H - BOTTOM));
    s.append(String.format(Locale.ROOT,
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", LEFT, TOP, LEFT,
        H - BOTTOM));
    // y ticks: five even steps from 0, or every 1-2-5 value of the log axis
    List<Double> yTicks = new ArrayList<>();
    if (logY) {
      yTicks.addAll(logTicks(yBottom, yTop));
    } else {
      for (int i = 0; i <= 5; i++) {
        yTicks.add(yTop * i / 5);
      }
    }
    for (double v : yTicks) {
      double y = sy.applyAsDouble(v);
      s.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", LEFT, y, W - RIGHT,
          y));
      s.append(String.format(Locale.ROOT,
          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", LEFT - 6, y + 4, num(v)));
    }
    // x ticks at each distinct x
    java.util.TreeSet<Double> xs = new java.util.TreeSet<>();
    series.values().forEach(pts -> pts.forEach(p -> xs.add(p[0])));
    for (double xv : xs) {
      double x = sx.applyAsDouble(xv);
      s.append(String.format(Locale.ROOT,
          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>%n", x, H - BOTTOM, x,
          H - BOTTOM + 5));
      s.append(String.format(Locale.ROOT,
          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, H - BOTTOM + 18,
          num(xv)));
    }
    s.append(String.format(Locale.ROOT,
        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", LEFT + plotW / 2, H - 15,
        esc(xLabel + (logX ? " (log scale)" : ""))));
    s.append(String.format(Locale.ROOT,
        "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">%s"
            + "</text>%n", TOP + plotH / 2, TOP + plotH / 2,
        esc(yLabel + (logY ? " (log scale)" : ""))));
    // series
    int c = 0;
    for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
      String color = COLORS[c % COLORS.length];
      StringBuilder pts = new StringBuilder();
      for (double[] p : e.getValue()) {
        double x = sx.applyAsDouble(p[0]);
        double y = sy.applyAsDouble(p[1]);
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        s.append(String.format(Locale.ROOT,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, color));
      }
      s.append(String.format(Locale.ROOT,
          "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n", color,
          pts.toString().trim()));
      int ly = TOP + 10 + c * 20;
      s.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>%n",
          W - RIGHT + 15, ly, W - RIGHT + 40, ly, color));
      s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", W - RIGHT + 46,
          ly + 4, esc(e.getKey())));
      c++;
    }
    s.append("</svg>\n");
    return s.toString();
  }

  /** Number of series with at least one point. */
  public int seriesCount() {
    return series.size();
  }

  static double niceCeil(double v) {
    double exp = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
      if (m * exp >= v) {
        return m * exp;
      }
    }
    return 10 * exp;
  }

  /** The 1-2-5 values (…, 0.5, 1, 2, 5, 10, 20, 50, 100…) from {@code bottom} to {@code top}. */
  static List<Double> logTicks(double bottom, double top) {
    List<Double> ticks = new ArrayList<>();
    for (double v = logTickFloor(bottom); v <= top * (1 + 1e-9); v = nextLogTick(v)) {
      ticks.add(v);
    }
    return ticks;
  }

  /** The largest 1-2-5 value at or below {@code v} (v > 0). */
  static double logTickFloor(double v) {
    double exp = Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    double best = exp;
    for (double m : new double[] {1, 2, 5}) {
      if (m * exp <= v * (1 + 1e-9)) {
        best = m * exp;
      }
    }
    return best;
  }

  /** The smallest 1-2-5 value at or above {@code v} (v > 0). */
  static double logTickCeil(double v) {
    double f = logTickFloor(v);
    return f >= v * (1 - 1e-9) ? f : nextLogTick(f);
  }

  private static double nextLogTick(double tick) {
    double exp = Math.pow(10, Math.floor(Math.log10(tick) + 1e-9));
    double m = Math.round(tick / exp);
    return m == 1 ? 2 * exp : m == 2 ? 5 * exp : 10 * exp;
  }

  static String num(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e9) {
      return Long.toString((long) v);
    }
    return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.2g", v);
  }

  static String esc(String t) {
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}

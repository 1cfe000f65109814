package io.iqstream.bench;

import io.iqstream.bench.report.ResultRow;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One row per server, CPU count and level out of several passes ({@code --repeat}): the pass whose CPU per
 * event is the median (the lower middle of an even number), so every figure of a row comes from one window;
 * its note lists every pass's CPU per event and resume p50. A pass that failed counts only where none
 * succeeded. Order: as the rows first appeared.
 */
final class PassMedian {
  private PassMedian() {
  }

  static List<ResultRow> rows(List<ResultRow> passes) {
    Map<String, List<ResultRow>> groups = new LinkedHashMap<>();
    for (ResultRow r : passes) {
      groups.computeIfAbsent(r.server() + "/" + r.cpus() + "/" + r.concurrency(), g -> new ArrayList<>())
          .add(r);
    }
    List<ResultRow> out = new ArrayList<>();
    for (List<ResultRow> group : groups.values()) {
      List<ResultRow> measured = group.stream()
          .filter(r -> r.error() == null && r.cpuUsPerEvent() != null)
          .sorted(Comparator.comparingDouble(ResultRow::cpuUsPerEvent)).toList();
      if (measured.isEmpty()) {
        out.add(group.get(0));
        continue;
      }
      ResultRow median = measured.get((measured.size() - 1) / 2);
      if (group.size() == 1) {
        out.add(median);
        continue;
      }
      StringBuilder note = new StringBuilder("median of ").append(group.size())
          .append(" passes by CPU per event; every pass in order: ");
      for (int i = 0; i < group.size(); i++) {
        ResultRow r = group.get(i);
        note.append(i == 0 ? "" : "; ").append(r.error() != null ? "failed"
            : String.format(Locale.ROOT, "%.1f µs/event", r.cpuUsPerEvent())
                + (r.resumeP50Ms() == null ? ""
                    : String.format(Locale.ROOT, ", resume p50 %.2f ms", r.resumeP50Ms())));
      }
      out.add(median.withVariant(median.variant() == null ? note.toString()
          : median.variant() + "; " + note));
    }
    return out;
  }
}

package io.iqstream.bench.server;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a process of the bench runs: the CPUs it is pinned to ({@code taskset -c}; null for none).
 * Its scheduling priority is inherited from the runner, which raises its own (root only) before it
 * starts anything, so the server under test and the generator always share one priority.
 */
public record Placement(String cpuList) {
  public static final Placement NONE = new Placement(null);

  /** The command prefix that applies this placement. */
  public List<String> prefix() {
    List<String> p = new ArrayList<>();
    if (cpuList != null) {
      p.addAll(List.of("taskset", "-c", cpuList));
    }
    return p;
  }
}

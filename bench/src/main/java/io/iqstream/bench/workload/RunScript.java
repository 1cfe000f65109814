package io.iqstream.bench.workload;

/**
 * The fixed shape of one agent run of WORKLOAD.md: 429 AG-UI events and the offset of each from the
 * run's start. Events other than the tool pause are evenly spaced ({@code spacingNs}, 20 ms at full
 * scale); after {@code TOOL_CALL_END} the schedule pauses {@code pauseNs} (1.5 s) while "the tool runs".
 *
 * <p>Immutable; any thread. A {@code scale} below 1 compresses the schedule (tests and the CI smoke use
 * it to make runs of a few seconds); the events are the same.
 */
public final class RunScript {
  /** Event types, in order. */
  public enum Kind {
    RUN_STARTED, TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, TOOL_CALL_START,
    TOOL_CALL_ARGS, TOOL_CALL_END, TOOL_CALL_RESULT, RUN_FINISHED
  }

  public static final int FIRST_ANSWER_DELTAS = 180;
  public static final int TOOL_ARGS_DELTAS = 40;
  public static final int SECOND_ANSWER_DELTAS = 200;
  public static final int EVENTS = 1 + 1 + FIRST_ANSWER_DELTAS + 1 + 1 + TOOL_ARGS_DELTAS + 1 + 1 + 1
      + SECOND_ANSWER_DELTAS + 1 + 1;
  /** Index of the first / last delta of the first answer and of the second answer (0-based). */
  public static final int FIRST_ANSWER_FROM = 2;
  public static final int FIRST_ANSWER_TO = FIRST_ANSWER_FROM + FIRST_ANSWER_DELTAS - 1;
  public static final int TOOL_CALL_END_INDEX = FIRST_ANSWER_TO + 1 + 1 + TOOL_ARGS_DELTAS + 1;
  public static final int SECOND_ANSWER_FROM = TOOL_CALL_END_INDEX + 3;
  public static final int SECOND_ANSWER_TO = SECOND_ANSWER_FROM + SECOND_ANSWER_DELTAS - 1;

  public static final long FULL_SPACING_NS = 20_000_000L;
  public static final long FULL_PAUSE_NS = 1_500_000_000L;
  /** Time between a run's start (its connections are opened) and its first event. */
  public static final long FULL_LEAD_NS = 50_000_000L;

  private static final Kind[] KINDS = buildKinds();

  private final long[] offsetNs = new long[EVENTS];
  private final long lengthNs;

  public RunScript(double scale) {
    if (!(scale > 0 && scale <= 10)) {
      throw new IllegalArgumentException("scale must be in (0, 10]: " + scale);
    }
    long spacingNs = Math.round(FULL_SPACING_NS * scale);
    long pauseNs = Math.round(FULL_PAUSE_NS * scale);
    long leadNs = Math.round(FULL_LEAD_NS * scale);
    for (int i = 0; i < EVENTS; i++) {
      offsetNs[i] = leadNs + i * spacingNs + (i > TOOL_CALL_END_INDEX ? pauseNs : 0);
    }
    lengthNs = offsetNs[EVENTS - 1] + spacingNs;
  }

  /** A script whose whole run (lead, events, pause) lasts about {@code runLengthMs}. */
  public static RunScript ofLengthMs(long runLengthMs) {
    return new RunScript(runLengthMs / (double) fullLengthMs());
  }

  public static long fullLengthMs() {
    return (FULL_LEAD_NS + EVENTS * FULL_SPACING_NS + FULL_PAUSE_NS) / 1_000_000L;
  }

  public static Kind kind(int index) {
    return KINDS[index];
  }

  /** Offset of event {@code index} from the run's start. */
  public long offsetNs(int index) {
    return offsetNs[index];
  }

  /** Time from a run's start to the start of the next run in the same slot. */
  public long lengthNs() {
    return lengthNs;
  }

  /** True for indexes inside one of the two answers (where a browser may drop). */
  public static boolean insideAnswer(int index) {
    return (index >= FIRST_ANSWER_FROM && index <= FIRST_ANSWER_TO)
        || (index >= SECOND_ANSWER_FROM && index <= SECOND_ANSWER_TO);
  }

  private static Kind[] buildKinds() {
    Kind[] k = new Kind[EVENTS];
    int i = 0;
    k[i++] = Kind.RUN_STARTED;
    k[i++] = Kind.TEXT_MESSAGE_START;
    for (int j = 0; j < FIRST_ANSWER_DELTAS; j++) {
      k[i++] = Kind.TEXT_MESSAGE_CONTENT;
    }
    k[i++] = Kind.TEXT_MESSAGE_END;
    k[i++] = Kind.TOOL_CALL_START;
    for (int j = 0; j < TOOL_ARGS_DELTAS; j++) {
      k[i++] = Kind.TOOL_CALL_ARGS;
    }
    k[i++] = Kind.TOOL_CALL_END;
    k[i++] = Kind.TOOL_CALL_RESULT;
    k[i++] = Kind.TEXT_MESSAGE_START;
    for (int j = 0; j < SECOND_ANSWER_DELTAS; j++) {
      k[i++] = Kind.TEXT_MESSAGE_CONTENT;
    }
    k[i++] = Kind.TEXT_MESSAGE_END;
    k[i++] = Kind.RUN_FINISHED;
    if (i != EVENTS) {
      throw new AssertionError(i);
    }
    return k;
  }
}

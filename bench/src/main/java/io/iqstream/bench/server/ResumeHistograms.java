package io.iqstream.bench.server;

/**
 * A server's own account of its resumes, from one reading of its metrics: {@code handling}, its part (IQ-Stream's
 * {@code iqstream_resume_seconds}: the request's first byte read to the replay's first flush), and {@code accept},
 * the wait before it ({@code iqstream_resume_accept_seconds}: the new connection's accept to that first byte; null
 * from a server that keeps none).
 */
public record ResumeHistograms(ServerHistogram handling, ServerHistogram accept) {
  /** Both histograms of {@code metrics}; null when it has no resume histogram at all (an older server). */
  static ResumeHistograms parse(String metrics) {
    ServerHistogram handling = ServerHistogram.parse(metrics, "iqstream_resume_seconds");
    return handling == null ? null
        : new ResumeHistograms(handling, ServerHistogram.parse(metrics, "iqstream_resume_accept_seconds"));
  }
}

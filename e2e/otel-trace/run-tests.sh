#!/usr/bin/env bash
# End-to-end traces: a real OpenTelemetry Collector (built by install-collector.sh) receives OTLP from two real
# IQ-Stream nodes in a cluster, and test_trace.py checks the one trace an agent's POST, a browser's read and
# resume on the other node, and a Durable Streams append and read make (spans, parents, links, attributes).
#   IQSTREAM_JAR, IQSTREAM_JAVA / JAVA_HOME as every suite (scripts/server-for-tests.sh); KEEP_WORK=1 keeps logs.
# Exits 77 with the reason when the collector cannot be built here (no go command, or the module proxy not reached).
set -uo pipefail
cd "$(dirname "$0")"
source ../../scripts/server-for-tests.sh >/dev/null || exit 1
if ! ./install-collector.sh; then
  echo "SKIP: the test's OpenTelemetry Collector could not be built (go >= 1.26 and the Go module proxy needed)" >&2
  exit 77
fi
exec python3 test_trace.py

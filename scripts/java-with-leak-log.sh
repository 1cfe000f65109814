#!/usr/bin/env bash
# Runs the real java ($IQSTREAM_REAL_JAVA) with Netty's leak detector at paranoid, copying everything the
# process prints into $IQSTREAM_LEAK_LOG while still passing it on (stdout to stdout, stderr to stderr).
# scripts/server-for-tests.sh points IQSTREAM_JAVA here, so every server a client suite spawns runs this way,
# and iqstream_check_leaks (defined there) fails the suite on a `LEAK:` line in that log.
set -euo pipefail
: "${IQSTREAM_REAL_JAVA:?set by scripts/server-for-tests.sh}" "${IQSTREAM_LEAK_LOG:?set by scripts/server-for-tests.sh}"
exec "$IQSTREAM_REAL_JAVA" -Dio.netty.leakDetection.level=paranoid "$@" \
  > >(tee -a "$IQSTREAM_LEAK_LOG") 2> >(tee -a "$IQSTREAM_LEAK_LOG" >&2)

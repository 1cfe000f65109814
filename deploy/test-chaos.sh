#!/usr/bin/env bash
# The chaos test (issue 34): three nodes with --peers on 127.0.0.1 behind deploy/haproxy/haproxy.cfg, paused
# (SIGSTOP 3 s), killed and restarted (SIGKILL), and starved (two busy loops) under K = 50 runs in flight; and the
# issue's probe (three nodes, two busy loops, publish through A, read through B, resume through C) 20 times.
# See deploy/test-chaos.py. About five minutes, bounded, self-cleaning.
#
#   bash deploy/test-chaos.sh        (env IQSTREAM_JAR, JAVA_HOME, KEEP_WORK=1, CHAOS_SECONDS, PROBE_TRIES)
#
# Installs haproxy from Debian when missing (as root), like deploy/test-cluster.sh; without root and without
# haproxy it skips (exit 77).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
JAR=${IQSTREAM_JAR:-$REPO/server/target/iqstream-server.jar}

if ! command -v haproxy >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: haproxy missing and not root to install it (sudo apt-get install -y haproxy)" >&2
    exit 77
  fi
  echo "installing haproxy from Debian"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy; } >/tmp/iqstream-chaos-apt.log 2>&1 \
    || { echo "FAIL: apt-get install haproxy failed (/tmp/iqstream-chaos-apt.log)" >&2; exit 1; }
fi
command -v yes >/dev/null || { echo "FAIL: yes(1) missing (coreutils)" >&2; exit 1; }
. "$REPO/scripts/find-java.sh"
JAVA="$(find_java)"
[ -n "$JAVA" ] || { echo "FAIL: no Java >= 21 found (set JAVA_HOME)" >&2; exit 1; }
[ -f "$JAR" ] || { echo "FAIL: server jar not found: $JAR (build it or set IQSTREAM_JAR)" >&2; exit 1; }
keep=()
[ "${KEEP_WORK:-0}" = 1 ] && keep=(--keep)
exec python3 "$HERE/test-chaos.py" --jar "$JAR" --java "$JAVA" --tries "${PROBE_TRIES:-20}" \
  --seconds "${CHAOS_SECONDS:-120}" "${keep[@]}"

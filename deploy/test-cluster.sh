#!/usr/bin/env bash
# The cluster test (issue 9): real nodes with --peers on 127.0.0.1 behind a real
# HAProxy in round-robin (no hashing), checked event by event. See the scenarios
# in deploy/test-cluster.py (the last: durable streams on disk through a rolling
# restart); about two to three minutes, bounded, self-cleaning.
#
#   bash deploy/test-cluster.sh        (env IQSTREAM_JAR, JAVA_HOME, KEEP_WORK=1)
#
# Installs haproxy from Debian when missing (as root), like deploy/test-lb.sh.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
JAR=${IQSTREAM_JAR:-$REPO/server/target/iqstream-server.jar}

if ! command -v haproxy >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "FAIL: haproxy missing; run as root or: sudo apt-get install -y haproxy" >&2; exit 1; }
  echo "installing haproxy from Debian"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy; } >/tmp/iqstream-cluster-apt.log 2>&1 \
    || { echo "FAIL: apt-get install haproxy failed (/tmp/iqstream-cluster-apt.log)" >&2; exit 1; }
fi
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/find-java.sh"
JAVA="$(find_java)"
[ -n "$JAVA" ] || { echo "FAIL: no Java >= 21 found (set JAVA_HOME)" >&2; exit 1; }
[ -f "$JAR" ] || { echo "FAIL: server jar not found: $JAR (build it or set IQSTREAM_JAR)" >&2; exit 1; }
keep=()
[ "${KEEP_WORK:-0}" = 1 ] && keep=(--keep)
exec python3 "$HERE/test-cluster.py" --jar "$JAR" --java "$JAVA" "${keep[@]}"

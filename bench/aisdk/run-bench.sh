#!/usr/bin/env bash
# The AI SDK bench (bench/aisdk/README.md): installs its locked dependencies and the package's, Debian's
# redis-server when missing (as root), then runs every row in one run and prints the table.
#   K, WINDOW_S, WARMUP_S, WARMUP_MAX_S, ROWS: see bench.js.   IQSTREAM_JAR, IQSTREAM_JAVA: the server and a java >= 21.
set -euo pipefail
cd "$(dirname "$0")"
source ../../scripts/server-for-tests.sh >/dev/null
export IQSTREAM_JAVA=$IQSTREAM_REAL_JAVA
npm ci --no-audit --no-fund --loglevel=error
(cd ../../clients/resumable-stream && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -x "${REDIS_SERVER:-/usr/bin/redis-server}" ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server
fi
exec node bench.js

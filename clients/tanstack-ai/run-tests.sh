#!/usr/bin/env bash
# Installs the locked dependencies (@tanstack/ai and @tanstack/ai-client from npm, pinned in package-lock.json;
# @iqstream/client linked from ../js) and runs the adapter's tests against a real IQ-Stream server and TanStack
# AI's own server helpers and client.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
set -euo pipefail
cd "$(dirname "$0")"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node >= 20 is required (found $(node --version))" >&2
  exit 1
fi

source ../../scripts/server-for-tests.sh

npm ci --no-audit --no-fund --loglevel=error
status=0
node --test --test-concurrency=1 test/*.test.js || status=$?
iqstream_check_leaks || status=1
exit $status

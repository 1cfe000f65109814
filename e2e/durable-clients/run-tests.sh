#!/usr/bin/env bash
# The durable-clients suite of scripts/test-all.sh: the Durable Streams protocol's own client and transports,
# unchanged, against IQ-Stream's /v1/stream/ (two nodes of a cluster, JWT auth): @durable-streams/client 0.2.7, the
# AI SDK through @durable-streams/aisdk-transport 0.0.7 and TanStack AI through
# @durable-streams/tanstack-ai-transport 0.0.9 (pinned in package-lock.json, installed by npm ci).
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
#   DURABLE_CLIENTS_SERVER=reference  runs the same tests against the protocol's Node reference server
#                  (@durable-streams/server 0.3.7, no auth: the token test is skipped; one process for both nodes)
set -euo pipefail
cd "$(dirname "$0")"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node >= 20 is required (found $(node --version))" >&2
  exit 1
fi

if [ "${DURABLE_CLIENTS_SERVER:-iqstream}" = iqstream ]; then
  source ../../scripts/server-for-tests.sh
fi

npm ci --no-audit --no-fund --loglevel=error
status=0
node --test --test-concurrency=1 test/*.test.js || status=$?
if [ "${DURABLE_CLIENTS_SERVER:-iqstream}" = iqstream ]; then
  iqstream_check_leaks || status=1
fi
exit $status

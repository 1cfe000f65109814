#!/usr/bin/env bash
# The durable-clients suite of scripts/test-all.sh: the Durable Streams protocol's own client and transports,
# unchanged, against IQ-Stream's /v1/stream/ (two nodes of a cluster, JWT auth): @durable-streams/client 0.2.7, the
# AI SDK through @durable-streams/aisdk-transport 0.0.7 and TanStack AI through
# @durable-streams/tanstack-ai-transport 0.0.9 (pinned in package-lock.json, installed by npm ci); the client across a
# SIGKILL / SIGTERM and restart of its node (--durability disk), and with --sse-lifetime (test/restart.test.js,
# test/sse-lifetime.test.js); then the Python client from PyPI (durable-streams 0.1.0, python/requirements.txt) in a
# fresh venv (python/test_python_client.py).
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
#   PYTHON         the interpreter the venv is made from (default: python3, 3.10 or newer)
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
# the protocol's Python client from PyPI (durable-streams, pinned in python/requirements.txt), in a fresh venv
if [ "${DURABLE_CLIENTS_SERVER:-iqstream}" = iqstream ]; then
  python=${PYTHON:-python3}
  venv=python/.venv-test
  rm -rf "$venv"
  if command -v "$python" >/dev/null && "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
      && "$python" -m venv "$venv"; then
    "$venv/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check \
      --cache-dir "${IQSTREAM_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream-pip}" -r python/requirements.txt
    (cd python && "../$venv/bin/python" -m unittest -v test_python_client) || status=$?
  elif [ "${CI:-}" = true ]; then
    echo "durable-clients: FAIL: no Python >= 3.10 with venv for the Python client's tests (set PYTHON)" >&2
    status=1
  else
    echo "durable-clients: the Python client's tests SKIPPED: no Python >= 3.10 with venv (set PYTHON)" >&2
  fi
fi
if [ "${DURABLE_CLIENTS_SERVER:-iqstream}" = iqstream ]; then
  iqstream_check_leaks || status=1
fi
exit $status

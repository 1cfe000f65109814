#!/usr/bin/env bash
# Installs the locked dependencies (ai, @ai-sdk/react, resumable-stream and redis from npm, pinned in
# package-lock.json) and Debian's redis-server when missing (for the same suite against the original
# resumable-stream), then runs the package's tests against a real IQ-Stream server: the AI SDK docs' routes on two
# app instances (test/resume.test.js), the API's conventions (test/api.test.js), and useChat({ resume: true }) in
# headless Chromium (test/browser).
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
#   REDIS_SERVER   redis-server binary (default /usr/bin/redis-server, installed when absent and apt is there)
#   CHROMIUM_PATH  the browser for test/browser (default: found as every suite finds it, scripts/find-chromium.sh,
#                  installed when absent)
# When Redis or Chromium cannot be had, that half is skipped, saying so, and this script exits 77 once the rest
# passed: scripts/test-all.sh reports the suite as skipped (a failure under CI=true unless IQSTREAM_TEST_SKIPPABLE
# names aisdk), never as passed.
set -euo pipefail
cd "$(dirname "$0")"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node >= 20 is required (found $(node --version))" >&2
  exit 1
fi

source ../../scripts/server-for-tests.sh

npm ci --no-audit --no-fund --loglevel=error

# Debian's redis-server, for the runs against the original resumable-stream: installed once, as root, when apt
# is there; elsewhere those runs are skipped, saying so (under CI a missing Redis fails the suite)
redis_server=${REDIS_SERVER:-/usr/bin/redis-server}
if [ ! -x "$redis_server" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "redis-server not found: installing Debian's redis-server with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server \
    || { DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server; } \
    || echo "could not install redis-server (its half is skipped below)" >&2
fi
skipped=()
if [ ! -x "$redis_server" ]; then
  echo "SKIPPED the runs against resumable-stream + Redis: no redis-server at $redis_server" >&2
  skipped+=("the runs against resumable-stream + Redis (no redis-server at $redis_server)")
fi
export REDIS_SERVER=$redis_server

status=0
node --test --test-concurrency=1 test/*.test.js || status=$?

# useChat({ resume: true }) from @ai-sdk/react in headless Chromium (its own locked dependencies: @ai-sdk/react,
# react, esbuild, playwright-core). Chromium is found, or installed, as every browser suite does
# (scripts/find-chromium.sh); when there is none the test is skipped, saying so.
source ../../scripts/find-chromium.sh
iqstream_find_chromium
if [ -z "$CHROMIUM_PATH" ]; then
  echo "SKIPPED test/browser (useChat resume in headless Chromium): no Chromium found and none could be installed" >&2
  skipped+=("test/browser (no Chromium)")
else
  (cd test/browser && npm ci --no-audit --no-fund --loglevel=error)
  node --test --test-concurrency=1 test/browser/*.test.js || status=$?
fi
iqstream_check_leaks || status=1
if [ "$status" -eq 0 ] && [ "${#skipped[@]}" -gt 0 ]; then
  echo "aisdk: SKIP: the rest passed, but skipped: $(IFS=';'; echo "${skipped[*]}")"
  exit 77
fi
exit $status

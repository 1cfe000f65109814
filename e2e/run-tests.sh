#!/usr/bin/env bash
# Browser end-to-end tests: installs Debian's Chromium if missing, installs playwright-core from the
# lockfile, and runs the tests (node --test) against the real server jar.
#   IQSTREAM_JAR   server jar (default: ../server/target/iqstream-server.jar; build it first with
#                  `mvn -B -q -pl server package -DskipTests` from the repository root)
#   JAVA_HOME      a JDK >= 21 (else `java` on the PATH)
#   CHROMIUM_PATH  the browser (default: found as every browser suite finds it, scripts/find-chromium.sh)
# Screenshots land in e2e/artifacts/. Exits non-zero when a test fails.
set -euo pipefail
cd "$(dirname "$0")"

source ../scripts/find-chromium.sh
iqstream_find_chromium
if [ -z "$CHROMIUM_PATH" ]; then
  echo "e2e: SKIP: no Chromium found and none could be installed (scripts/install-chromium.sh needs root or sudo)"
  exit 77
fi

jar="${IQSTREAM_JAR:-$(pwd)/../server/target/iqstream-server.jar}"
if [ ! -f "$jar" ]; then
  echo "e2e: server jar not found: $jar (build it, or set IQSTREAM_JAR)" >&2
  exit 1
fi
export IQSTREAM_JAR="$jar"

if [ -z "${JAVA_HOME:-}" ]; then
  for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64; do
    if [ -x "$candidate/bin/java" ]; then export JAVA_HOME="$candidate"; break; fi
  done
fi

# IQSTREAM_JAVA: the found java behind the leak-log wrapper (paranoid leak detection; checked at the end)
source ../scripts/server-for-tests.sh

npm ci --no-audit --no-fund --loglevel=error
mkdir -p artifacts
status=0
# files, not the folder: Node >= 21 reads a folder argument as a file to run and fails
node --test --test-concurrency=1 --test-reporter=spec tests/*.test.js || status=$?
iqstream_check_leaks || status=1
exit $status

#!/usr/bin/env bash
# Runs every test suite of the project, in order, and fails if any fails. Called by `./iqstream test` and CI.
#   1. Maven: unit + integration tests of server, client, bench (incl. the bench smoke)
#   2. clients/js (node --test), clients/python (unittest)
#   3. e2e browser tests in headless Chromium (installs Chromium if missing)
#   4. deploy/test-lb.sh: HAProxy and nginx hashing run ids over several nodes
# Set IQSTREAM_TEST_ONLY=maven,js,python,e2e,lb to run a subset.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ONLY="${IQSTREAM_TEST_ONLY:-maven,js,python,e2e,lb}"
want() { [[ ",$ONLY," == *",$1,"* ]]; }
export IQSTREAM_JAR="$ROOT/server/target/iqstream-server.jar"
failed=()
step() { # step NAME CMD...
  local name="$1"; shift
  echo "=== $name: $*"
  local t0=$SECONDS
  if "$@"; then echo "=== $name: passed in $((SECONDS - t0)) s"; else echo "=== $name: FAILED after $((SECONDS - t0)) s"; failed+=("$name"); fi
}
if want maven; then
  step maven mvn -B -ntp verify
  if [[ ! -f "$IQSTREAM_JAR" ]]; then echo "server jar missing; stopping"; exit 1; fi
fi
[[ -f "$IQSTREAM_JAR" ]] || mvn -B -q -ntp -DskipTests -pl server -am package
want js && [[ -x clients/js/run-tests.sh ]] && step js clients/js/run-tests.sh
want js && [[ -x clients/copilotkit/run-tests.sh ]] && step copilotkit clients/copilotkit/run-tests.sh
want python && [[ -x clients/python/run-tests.sh ]] && step python clients/python/run-tests.sh
want e2e && [[ -x e2e/run-tests.sh ]] && step e2e e2e/run-tests.sh
want lb && [[ -x deploy/test-lb.sh ]] && step lb deploy/test-lb.sh
if ((${#failed[@]})); then echo "FAILED: ${failed[*]}"; exit 1; fi
echo "ALL TESTS PASSED"

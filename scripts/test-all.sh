#!/usr/bin/env bash
# Runs every test suite of the project, in order, and fails if any fails. Called by `./iqstream test` and CI.
#   maven   unit + integration tests of server, client, bench (incl. the bench smoke)
#   fuzz    every Jazzer @FuzzTest of the server in fuzzing mode, a short fixed time each (scripts/fuzz.sh, docs/FUZZING.md)
#   self    this script's own rules (scripts/test-all-selftest.sh, on a fake tree: a few seconds)
#   agui    the bench's AG-UI events against @ag-ui/core's schemas (bench/agui-check/run-check.sh)
#   peers   the bench's Go peers: Mercure and Centrifugo built (cached after the first build on a machine), their
#           drivers' tests and the bench smoke against the real servers (bench/peers/run-tests.sh)
#   js      clients/js (node --test)
#   copilotkit  clients/copilotkit: the CopilotKit AgentRunner with CopilotKit's own runtime (node --test)
#   tanstack  clients/tanstack-ai: TanStack AI's delivery durability with TanStack's own server helpers and client (node --test)
#   aisdk   clients/resumable-stream: the AI SDK docs' resumable chat on IQ-Stream and on resumable-stream + Redis
#   python  clients/python: a fresh venv, the iqstream package pip-installed from its path, pydantic-ai, LangGraph and
#           Agent Framework from PyPI (pinned), their AG-UI endpoints behind ResumableAGUI (unittest)
#   packages  every client package installs from what it would publish: npm pack of the four JS clients into a fresh
#           project, the Python wheel and sdist into fresh venvs (scripts/test-packages.sh)
#   e2e     browser tests in headless Chromium (installs Chromium if missing)
#   durable the Durable Streams conformance suite (@durable-streams/server-conformance-tests, pinned) against
#           ./iqstream serve --durable-streams-open: all 332 must pass; then the protocol's reference server in the
#           same run, the baseline figure (e2e/durable-conformance/run-tests.sh; about a minute)
#   client-conformance  the protocol's client conformance suite (vendored in third_party/durable-streams/) with its
#           TypeScript, Go and Java clients against IQ-Stream, then the Go and Java clients with JWTs
#           (e2e/client-conformance/run-tests.sh; about two minutes)
#   lb      deploy/test-lb.sh: HAProxy and nginx hashing run ids over several nodes
#   dist    the jlink archive run with no JDK visible (scripts/test-dist.sh)
#   k8s     the Kubernetes manifests' structure (deploy/kubernetes/test-manifests.py)
#   image   the container image built and run under a local dockerd (scripts/test-image.sh)
# A failed suite's last 60 lines are printed again just above the verdict (each suite's output is kept in a
# temporary folder, named there), so a runner that keeps only the end of the output still shows why.
# Set IQSTREAM_TEST_ONLY=maven,js,... to run a subset: the last line then says which ran
# ("PASSED (subset: maven,js)"); only a run of every suite prints "ALL TESTS PASSED".
# Under CI (CI=true) a suite whose script is missing or not executable fails the run; elsewhere it is
# skipped with a warning, and the last line says so.
# A suite that cannot run on this machine (no root for dist, no Docker engine for image, no PyYAML for k8s, no
# Chromium for copilotkit's browser test) prints why and exits 77 (SKIP_RC, automake's "skipped"): it is then
# reported as skipped, never as passed, and the last line names every skip. Under CI=true a skip fails the run
# unless that suite is declared skippable on that machine: IQSTREAM_TEST_SKIPPABLE=dist,image (a comma list of
# suite names, set in that runner's environment). Any other non-zero exit is a failure.
# The same holds inside the maven suite: a JUnit test that skips itself names the machine fact it needs
# (MachineFact.assume: epoll, io_uring, listen_queue_drops, thread_allocation), and under CI=true it fails unless
# IQSTREAM_TEST_SKIPPABLE names that fact too (server/src/test/.../SkipCheckExtension.java).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# ---- the suites: name and script, in the order they run (maven is special: it builds the jar).
# To add a suite: its name in ALL_SUITES and its executable script (no arguments) in SUITE_SCRIPT;
# scripts/test-all-selftest.sh then checks it is run, and fails CI when its script is missing.
ALL_SUITES=(maven fuzz self agui peers js copilotkit tanstack aisdk python packages e2e durable durable-clients client-conformance lb cluster chaos observability otel dist k8s image)
declare -A SUITE_SCRIPT=(
  [fuzz]=scripts/fuzz.sh
  [self]=scripts/test-all-selftest.sh
  [agui]=bench/agui-check/run-check.sh
  [peers]=bench/peers/run-tests.sh
  [js]=clients/js/run-tests.sh
  [copilotkit]=clients/copilotkit/run-tests.sh
  [tanstack]=clients/tanstack-ai/run-tests.sh
  [aisdk]=clients/resumable-stream/run-tests.sh
  [durable-clients]=e2e/durable-clients/run-tests.sh
  [client-conformance]=e2e/client-conformance/run-tests.sh
  [python]=clients/python/run-tests.sh
  [packages]=scripts/test-packages.sh
  [e2e]=e2e/run-tests.sh
  [durable]=e2e/durable-conformance/run-tests.sh
  [lb]=deploy/test-lb.sh
  [cluster]=deploy/test-cluster.sh
  [chaos]=deploy/test-chaos.sh
  [observability]=deploy/observability/test-observability.sh
  [otel]=e2e/otel-trace/run-tests.sh
  [dist]=scripts/test-dist.sh
  [k8s]=deploy/kubernetes/test-manifests.py
  [image]=scripts/test-image.sh
)

SKIP_RC=77

ALL="$(IFS=,; echo "${ALL_SUITES[*]}")"
ONLY="${IQSTREAM_TEST_ONLY:-$ALL}"
SKIPPABLE="${IQSTREAM_TEST_SKIPPABLE:-}"
for var in IQSTREAM_TEST_ONLY IQSTREAM_TEST_SKIPPABLE; do
  list="${!var:-}"
  for name in ${list//,/ }; do
    if [[ ",$ALL," != *",$name,"* ]]; then
      echo "$var: unknown suite '$name' (suites: $ALL)" >&2; exit 2
    fi
  done
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }
strict() { [[ "${CI:-}" == true ]]; }
skippable() { [[ ",$SKIPPABLE," == *",$1,"* ]]; }
export IQSTREAM_JAR="$ROOT/server/target/iqstream-server.jar"
# every server a suite starts keeps durable streams in memory unless the suite says otherwise: suites run servers
# side by side from one working directory, and a data directory is one node's. The suites of the disk name it, each
# with a data directory of its own (the maven suite's storage tests, the conformance suite's disk run).
export IQSTREAM_DURABILITY="${IQSTREAM_DURABILITY:-memory}"
# the servers the suites start skip the start-up's JIT warm-up (--warmup: several seconds per start); they test
# behaviour. dist, image and k8s run the server as shipped, warm-up included (suite() below unsets it for them).
export IQSTREAM_WARMUP=0
AS_SHIPPED=" dist image k8s "

# each suite's output is also kept in a file of its own, so that the verdict can end with each failed suite's last
# lines: a CI runner that keeps only the end of a long run's output still shows why
SUITE_LOGS="$(mktemp -d "${TMPDIR:-/tmp}/iqstream-test-all.XXXXXX")"

failed=() ran=() skipped=()
step() { # step NAME CMD...
  local name="$1"; shift
  echo "=== $name: $*"
  local t0=$SECONDS
  ran+=("$name")
  local rc=0
  "$@" > >(tee "$SUITE_LOGS/$name.log") 2>&1 || rc=$?
  if ((rc == 0)); then
    echo "=== $name: passed in $((SECONDS - t0)) s"
  elif ((rc == SKIP_RC)) && ! strict; then
    echo "=== $name: SKIPPED after $((SECONDS - t0)) s (its reason above; under CI=true this fails unless declared in IQSTREAM_TEST_SKIPPABLE)"
    skipped+=("$name")
  elif ((rc == SKIP_RC)) && skippable "$name"; then
    echo "=== $name: SKIPPED after $((SECONDS - t0)) s (its reason above; declared skippable here: IQSTREAM_TEST_SKIPPABLE)"
    skipped+=("$name")
  elif ((rc == SKIP_RC)); then
    echo "=== $name: FAILED: skipped itself (exit $SKIP_RC, its reason above) under CI=true, and IQSTREAM_TEST_SKIPPABLE does not name it"
    failed+=("$name")
  else
    echo "=== $name: FAILED after $((SECONDS - t0)) s (exit $rc)"; failed+=("$name")
  fi
}
suite() { # suite NAME: runs its script; a missing or non-executable one fails under CI, else is skipped
  local name="$1" script="${SUITE_SCRIPT[$1]}"
  want "$name" || return 0
  if [[ -f "$script" && -x "$script" ]]; then
    if [[ "$AS_SHIPPED" == *" $name "* ]]; then step "$name" env -u IQSTREAM_WARMUP "$script"
    else step "$name" "$script"; fi
  elif strict; then
    echo "=== $name: FAILED: $script is missing or not executable (CI=true)"; failed+=("$name")
  else
    echo "=== $name: SKIPPED: $script is missing or not executable (under CI=true this fails)"
    skipped+=("$name")
  fi
}

# ---- maven first: it builds the server jar the other suites start
if want maven; then
  step maven mvn -B -ntp verify
  if [[ ! -f "$IQSTREAM_JAR" ]]; then echo "server jar missing; stopping"; exit 1; fi
fi
[[ -f "$IQSTREAM_JAR" ]] || mvn -B -q -ntp -DskipTests -pl server -am package

for name in "${ALL_SUITES[@]}"; do
  [[ "$name" == maven ]] || suite "$name"
done

# ---- verdict: only a run of every suite, none skipped, is "ALL TESTS PASSED"; the last line names every skip
# (a suite that skipped itself counts as run: it is in the subset and in "skipped")
skipped_list="$(IFS=,; echo "${skipped[*]:-}")"
sleep 1 # each suite's output goes through a tee of its own: the last one's copy is out before the verdict
if ((${#failed[@]})); then
  for name in "${failed[@]}"; do
    if [[ -s "$SUITE_LOGS/$name.log" ]]; then
      echo "=== $name: the last 60 lines it printed (all of it: $SUITE_LOGS/$name.log)"
      tail -n 60 "$SUITE_LOGS/$name.log"
    fi
  done
  echo "FAILED: ${failed[*]}${skipped_list:+ (skipped: $skipped_list)}"; exit 1
fi
ran_list="$(IFS=,; echo "${ran[*]:-}")"
if ((${#skipped[@]})); then
  echo "PASSED (subset: ${ran_list:-none}; skipped: $skipped_list)"
elif [[ "$ran_list" != "$ALL" ]]; then
  echo "PASSED (subset: ${ran_list:-none})"
else
  echo "ALL TESTS PASSED"
fi

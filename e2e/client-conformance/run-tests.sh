#!/usr/bin/env bash
# The client-conformance suite of scripts/test-all.sh: the Durable Streams protocol's own client conformance suite
# (its 269 YAML test cases and its runner, vendored at a pinned commit in third_party/durable-streams/, README.md
# there) against one IQ-Stream node, with the protocol's TypeScript client (@durable-streams/client, from npm), its Go
# client (built here with `go build` from the vendored source) and its Java client (built here with javac), each
# through its own conformance adapter; then the Go and Java clients against IQ-Stream with JWTs (go-client/,
# java-client/: create, append, catch-up, a live read resumed from a saved offset, closure).
# Every test must pass but those reference-only.txt lists (each with its reason), which must fail.
#   IQSTREAM_JAR / IQSTREAM_JAVA  as in scripts/server-for-tests.sh
#   CONFORMANCE_ADAPTERS  which adapters to run (default: ts,go,java)
# Needs node >= 20 and npm (exit 77 without them), go (for the Go client) and a JDK's javac (for the Java client):
# a missing tool skips that client with a warning, or fails the suite under CI=true.
set -euo pipefail
cd "$(dirname "$0")"
HERE=$PWD
ROOT="$(cd ../.. && pwd)"
VENDOR="$ROOT/third_party/durable-streams/packages"

missing() { # tool, what needs it
  if [ "${CI:-}" = true ]; then echo "client-conformance: FAIL: $1 is needed for $2" >&2; status=1
  else echo "client-conformance: $2 SKIPPED: $1 not found" >&2; fi
}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "${CI:-}" = true ]; then echo "client-conformance: FAIL: node and npm are needed" >&2; exit 1; fi
  echo "client-conformance: node and npm are needed; skipped" >&2
  exit 77
fi
source ../../scripts/server-for-tests.sh
status=0
work=$(mktemp -d "${TMPDIR:-/tmp}/iqstream-client-conformance.XXXXXX")
server=
trap 'if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

(cd "$VENDOR/client-conformance-tests" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
TSX="$VENDOR/client-conformance-tests/node_modules/.bin/tsx"

# the clients' builds, from the vendored source
adapters=${CONFORMANCE_ADAPTERS:-ts,go,java}
javac=${JAVA_HOME:+$JAVA_HOME/bin/javac}
[ -n "$javac" ] && [ -x "$javac" ] || javac=$(dirname "$IQSTREAM_REAL_JAVA")/javac
have_go=0 have_java=0
if [[ ,$adapters, == *,go,* ]]; then
  if command -v go >/dev/null; then
    (cd "$VENDOR/client-go" && go build -o "$work/go-adapter" ./cmd/conformance-adapter) && have_go=1 \
      || { echo "client-conformance: FAIL: the Go client did not build" >&2; status=1; }
  else missing go "the Go client"; fi
fi
if [[ ,$adapters, == *,java,* ]]; then
  if [ -x "$javac" ]; then
    "$javac" --release 11 -nowarn -d "$work/java" \
      $(find "$VENDOR/client-java/src/main/java" "$VENDOR/client-java/conformance-adapter/src/main/java" -name '*.java') \
      && have_java=1 || { echo "client-conformance: FAIL: the Java client did not build" >&2; status=1; }
  else missing javac "the Java client"; fi
fi

start_server() { # extra flags: one IQ-Stream node on a free loopback port; sets server (its pid) and port
  local log="$work/server-$RANDOM.log"
  "$IQSTREAM_JAVA" -Xmx256m -jar "$IQSTREAM_JAR" serve --host 127.0.0.1 --port 0 --workers 2 --warmup 0 \
    --durable-streams-long-poll 500ms "$@" >"$log" 2>&1 &
  server=$!
  port=
  for _ in $(seq 1 600); do
    port=$(sed -n 's#.*listening on http://[^ ]*:\([0-9][0-9]*\) .*#\1#p' "$log" | head -1)
    [ -n "$port" ] && return 0
    kill -0 "$server" 2>/dev/null || { echo "client-conformance: the server exited:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.2
  done
  echo "client-conformance: the server did not start" >&2; cat "$log" >&2; exit 1
}

# one IQ-Stream node for the conformance runs: /v1/stream/ open (no tokens; docs/DURABLE-STREAMS.md says why),
# long-polls of 500 ms as the runner gives its reference server
start_server --durable-streams-open
export DURABLE_STREAMS_TARGET_URL="http://127.0.0.1:$port/v1/stream"
export CONFORMANCE_RESULTS_DIR="$work"

run_adapter() { # label, adapter command...
  local label=$1; shift
  (cd "$VENDOR/client-conformance-tests" && "$TSX" "$HERE/conformance.ts" "$label" "$@") >"$work/$label.log" 2>&1 || {
    tail -80 "$work/$label.log" >&2; status=1; }
  grep -A30 "^client conformance ($label)" "$work/$label.log" || echo "client conformance ($label): FAIL: no summary" >&2
}
[[ ,$adapters, == *,ts,* ]] && run_adapter ts ts
[ "$have_go" = 1 ] && run_adapter go "$work/go-adapter"
[ "$have_java" = 1 ] && run_adapter java "$IQSTREAM_REAL_JAVA" -cp "$work/java" com.durablestreams.ConformanceAdapter

kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
server=

# the Go and Java clients against a node with JWT auth on: tokens in their header options
if [ "$have_go" = 1 ] || [ "$have_java" = 1 ]; then
  secret=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  start_server --jwt-secret "$secret"
  export IQSTREAM_URL="http://127.0.0.1:$port" IQSTREAM_JWT_SECRET="$secret"
  if [ "$have_go" = 1 ]; then
    (cd go-client && go test -count=1 -v ./...) >"$work/go-client.log" 2>&1 \
      && echo "go client with JWTs: $(grep -c '^--- PASS' "$work/go-client.log") tests passed ($(grep -c '^    --- PASS' "$work/go-client.log") subtests)" \
      || { cat "$work/go-client.log" >&2; echo "go client with JWTs: FAIL" >&2; status=1; }
  fi
  if [ "$have_java" = 1 ]; then
    if "$javac" -nowarn -cp "$work/java" -d "$work/java-check" java-client/JavaClientCheck.java; then
      "$IQSTREAM_REAL_JAVA" -cp "$work/java:$work/java-check" JavaClientCheck || { echo "java client with JWTs: FAIL" >&2; status=1; }
    else
      echo "client-conformance: FAIL: java-client/JavaClientCheck.java did not compile" >&2; status=1
    fi
  fi
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=
fi
iqstream_check_leaks || status=1
exit $status

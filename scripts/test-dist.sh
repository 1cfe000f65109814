#!/usr/bin/env bash
# Tests the distribution the way a user runs it: builds iqstream-<version>-linux-x64.tar.gz (scripts/make-dist.sh,
# reusing the server jar already built), unpacks it into a temp folder and, in a mount namespace where
# /usr/lib/jvm (and /opt/java) are empty tmpfs and PATH has no java, checks:
#   1. bin/iqstream --version prints the jar's version and commit;
#   2. bin/iqstream serve (secret from IQSTREAM_JWT_SECRET, port 0) sizes the JVM (memory plan logged, -Xmx and
#      -XX:MaxDirectMemorySize on the java it exec'd, IQSTREAM_MEMORY_BUDGET honoured), runs as the launcher's own
#      PID (exec), loads the native epoll transport from lib/native, serves a run end to end, resumes it with
#      Last-Event-ID, and /metrics shows the planned budget (scripts/ship-check.py story);
#   3. SIGTERM drains: /readyz 503, new runs 503, the open run finishes, then the process exits.
# Needs root (for unshare -m) and python3; without them prints "test-dist: SKIP: <why>" and exits 77, which
# scripts/test-all.sh reports as skipped (a failure under CI=true unless IQSTREAM_TEST_SKIPPABLE names dist).
# Env: KEEP_WORK=1 keeps the temp folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d /tmp/iqstream-dist.XXXXXX)"
cleanup() {
  local rc=$?
  set +e   # clean up everything, whatever fails
  [[ -n "${SERVER_PID:-}" ]] && kill -KILL "$SERVER_PID" 2>/dev/null
  if [[ ($rc -ne 0 && $rc -ne 77) || "${KEEP_WORK:-0}" == 1 ]]; then echo "test-dist: work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
t0=$SECONDS

if [[ $(id -u) -ne 0 ]] || ! command -v unshare >/dev/null; then
  echo "test-dist: SKIP: needs root and unshare (util-linux) to hide the JDK"; exit 77
fi
# into target/dist, where scripts/test-image.sh (next in ./iqstream test) takes it from
IQSTREAM_DIST_REUSE_JAR=1 "$ROOT/scripts/make-dist.sh"
archive="$(ls -t "$ROOT"/target/dist/iqstream-*-linux-x64.tar.gz | head -1)"
mkdir "$WORK/opt"
tar -xzf "$archive" -C "$WORK/opt"
home="$(ls -d "$WORK"/opt/iqstream-*-linux-x64)"
[[ -x "$home/bin/iqstream" && -x "$home/runtime/bin/java" && -f "$home/lib/iqstream-server.jar" ]] \
  || { echo "test-dist: FAIL: archive layout"; exit 1; }
want_version="$(cd "$WORK" && "${JAVA_HOME:+$JAVA_HOME/bin/}java" -jar "$home/lib/iqstream-server.jar" --version)"

# everything below runs with no JDK visible
unshare -m -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$WORK" WORK="$WORK" HOME_DIR="$home" \
  ROOT="$ROOT" WANT_VERSION="$want_version" bash -euo pipefail -c '
  for d in /usr/lib/jvm /opt/java; do [[ -d $d ]] && mount -t tmpfs none "$d"; done
  if java -version >/dev/null 2>&1; then echo "test-dist: FAIL: a java is still visible"; exit 1; fi
  got="$("$HOME_DIR/bin/iqstream" --version)"
  [[ "$got" == "$WANT_VERSION" ]] || { echo "test-dist: FAIL: --version: $got, expected $WANT_VERSION"; exit 1; }
  echo "ok   --version: $got (no JDK visible)"

  secret="dist-test-secret-$RANDOM-0123456789abcdef0123456789"
  IQSTREAM_JWT_SECRET="$secret" IQSTREAM_MEMORY_BUDGET=64m "$HOME_DIR/bin/iqstream" serve --host 127.0.0.1 \
    --port 0 --drain-timeout 30s >"$WORK/server.out" 2>"$WORK/server.err" &
  pid=$!
  trap "kill -KILL \$pid 2>/dev/null || true" EXIT   # a failed check must not leave the server running
  for _ in $(seq 1 600); do
    grep -q "listening on" "$WORK/server.out" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || { echo "test-dist: FAIL: server exited"; cat "$WORK/server.err"; exit 1; }
    sleep 0.1
  done
  base="$(grep -o "http://[0-9.]*:[0-9]*" "$WORK/server.out" | head -1)"
  [[ -n "$base" ]] || { echo "test-dist: FAIL: server did not start in 60 s"; cat "$WORK/server.err"; exit 1; }
  exe="$(readlink -f /proc/$pid/exe)"
  [[ "$exe" == "$HOME_DIR/runtime/bin/java" ]] \
    || { echo "test-dist: FAIL: PID $pid runs $exe, not the bundled java (no exec?)"; exit 1; }
  cmdline="$(tr "\0" " " </proc/$pid/cmdline)"
  [[ "$cmdline" == *-Xmx*m* && "$cmdline" == *-XX:MaxDirectMemorySize=*m* && "$cmdline" == *ExitOnOutOfMemoryError* ]] \
    || { echo "test-dist: FAIL: JVM not sized: $cmdline"; exit 1; }
  # the plan step names the collector and, on a JDK 24+ runtime, allows Netty its Unsafe (else it allocates per copy)
  [[ "$cmdline" == *-XX:+UseG1GC* ]] || { echo "test-dist: FAIL: no collector from the plan step: $cmdline"; exit 1; }
  feature="$(grep -o "^JAVA_VERSION=.[0-9]*" "$HOME_DIR/runtime/release" | grep -o "[0-9]*$")"
  [[ "${feature:-0}" -lt 24 || "$cmdline" == *--sun-misc-unsafe-memory-access=allow* ]] \
    || { echo "test-dist: FAIL: JDK $feature runtime without the Unsafe allowance: $cmdline"; exit 1; }
  grep -q "memory plan: .*event-log budget 64m (--memory-budget)" "$WORK/server.err" \
    || { echo "test-dist: FAIL: no memory plan for IQSTREAM_MEMORY_BUDGET=64m"; cat "$WORK/server.err"; exit 1; }
  grep -q "(epoll, " "$WORK/server.out" || { echo "test-dist: FAIL: not on epoll: $(grep listening "$WORK/server.out")"; exit 1; }
  # the JIT warm-up runs as shipped (the other suites skip it) and must have completed, not stopped
  cat "$WORK/server.out" "$WORK/server.err" | grep -q "warmed up in [0-9]* ms: [0-9]* requests" \
    || { echo "test-dist: FAIL: no completed warm-up: $(cat "$WORK/server.out" "$WORK/server.err" | grep -i warm)"; exit 1; }
  echo "ok   serve: $base, epoll, PID $pid is the bundled java, $(grep -o "memory plan:.*" "$WORK/server.err")"

  python3 "$ROOT/scripts/ship-check.py" story "$base" "$secret" 64
  python3 "$ROOT/scripts/ship-check.py" drain "$base" "$secret" -- kill -TERM $pid
  for _ in $(seq 1 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then echo "test-dist: FAIL: still running 60 s after SIGTERM"; exit 1; fi
  rc=0; wait $pid || rc=$?
  grep -q "iqstream: stopped" "$WORK/server.out" || { echo "test-dist: FAIL: no clean stop (exit $rc)"; exit 1; }
  echo "ok   SIGTERM: drained and stopped (exit $rc)"
'
echo "test-dist: passed in $((SECONDS - t0)) s ($(basename "$archive"), $(du -k "$archive" | cut -f1) KiB)"

# Sourced by the client test scripts: checks the server jar and finds a java >= 21 to run it.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 (default: the first 21+ of $JAVA_HOME/bin/java, java on the PATH, /usr/lib/jvm/*)
#   IQSTREAM_LEAK_LOG  where spawned servers' output is copied (default: a new temporary file)
# Exports IQSTREAM_JAR and IQSTREAM_JAVA, or exits 1 with the reason. IQSTREAM_JAVA is then
# scripts/java-with-leak-log.sh, which runs the real java (IQSTREAM_REAL_JAVA) with Netty's leak detector at
# paranoid and copies what it prints into IQSTREAM_LEAK_LOG; the suite ends with `iqstream_check_leaks`,
# which fails on a `LEAK:` line there. (A leak is reported when the garbage collector finds the lost buffer
# while the server still runs, so this catches what a suite's servers live long enough to collect.)
# the suites start several servers from one working directory, and a data directory is one node's: their durable
# streams stay in memory unless the suite says otherwise (IQSTREAM_DURABILITY, or --durability and --data-dir)
export IQSTREAM_DURABILITY="${IQSTREAM_DURABILITY:-memory}"
# and a stream's `retry:` is exactly --retry (the suites time reconnects by it); a test of the jitter names the flag
export IQSTREAM_RETRY_JITTER="${IQSTREAM_RETRY_JITTER:-0}"
_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IQSTREAM_JAR=${IQSTREAM_JAR:-$_repo/server/target/iqstream-server.jar}
if [ ! -f "$IQSTREAM_JAR" ]; then
  echo "IQ-Stream jar not found at $IQSTREAM_JAR: build it (mvn -B -pl server package) or set IQSTREAM_JAR" >&2
  exit 1
fi
_java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
_find_java() {
  local candidate major
  for candidate in "${IQSTREAM_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    major=$(_java_major "$candidate")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then echo "$candidate"; return 0; fi
  done
  return 1
}
if ! IQSTREAM_JAVA=$(_find_java); then
  echo "no Java 21+ found to run the server: set IQSTREAM_JAVA or JAVA_HOME" >&2
  exit 1
fi
IQSTREAM_REAL_JAVA=$IQSTREAM_JAVA
IQSTREAM_LEAK_LOG=${IQSTREAM_LEAK_LOG:-$(mktemp "${TMPDIR:-/tmp}/iqstream-servers.XXXXXX")}
IQSTREAM_JAVA="$_repo/scripts/java-with-leak-log.sh"
export IQSTREAM_JAR IQSTREAM_JAVA IQSTREAM_REAL_JAVA IQSTREAM_LEAK_LOG
echo "server: $IQSTREAM_JAR, java: $IQSTREAM_REAL_JAVA (leak detection paranoid; output copied to $IQSTREAM_LEAK_LOG)"

# Fails (status 1, the lines printed) when a spawned server reported a leaked buffer; removes the log otherwise.
iqstream_check_leaks() {
  if grep -q 'LEAK:' "$IQSTREAM_LEAK_LOG" 2>/dev/null; then
    # A leak fails the suite, as it fails the in-process server tests. IQSTREAM_LEAKS=warn only warns (to see the
    # other results of a suite while a leak is being chased).
    if [ "${IQSTREAM_LEAKS:-fail}" = warn ]; then
      echo "WARNING (IQSTREAM_LEAKS=warn): Netty reported leaked buffers in a spawned IQ-Stream server (full output: $IQSTREAM_LEAK_LOG):" >&2
    else
      echo "FAIL: Netty reported leaked buffers in a spawned IQ-Stream server (full output: $IQSTREAM_LEAK_LOG; IQSTREAM_LEAKS=warn only warns):" >&2
    fi
    grep -A12 'LEAK:' "$IQSTREAM_LEAK_LOG" | head -60 >&2
    [ "${IQSTREAM_LEAKS:-fail}" = warn ] && return 0
    return 1
  fi
  echo "no leak reported by the spawned servers (Netty leak detection paranoid)"
  rm -f "$IQSTREAM_LEAK_LOG"
}

# Sourced by the client test scripts: checks the server jar and finds a java >= 21 to run it.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 (default: the first 21+ of $JAVA_HOME/bin/java, java on the PATH, /usr/lib/jvm/*)
# Exports IQSTREAM_JAR and IQSTREAM_JAVA, or exits 1 with the reason.
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
export IQSTREAM_JAR IQSTREAM_JAVA
echo "server: $IQSTREAM_JAR, java: $IQSTREAM_JAVA"

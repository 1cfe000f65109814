#!/usr/bin/env bash
# Installs the locked dependencies and runs the client's tests against a real IQ-Stream server.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
set -euo pipefail
cd "$(dirname "$0")"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node >= 20 is required (found $(node --version))" >&2
  exit 1
fi

jar=${IQSTREAM_JAR:-../../server/target/iqstream-server.jar}
if [ ! -f "$jar" ]; then
  echo "IQ-Stream jar not found at $jar: build it (mvn -B -pl server package) or set IQSTREAM_JAR" >&2
  exit 1
fi

# Finds a java >= 21 for the server: $IQSTREAM_JAVA, $JAVA_HOME/bin/java, java on the PATH, then /usr/lib/jvm/*.
java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
find_java() {
  local candidate major
  for candidate in "${IQSTREAM_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    major=$(java_major "$candidate")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then echo "$candidate"; return 0; fi
  done
  return 1
}
if ! IQSTREAM_JAVA=$(find_java); then
  echo "no Java 21+ found to run the server: set IQSTREAM_JAVA or JAVA_HOME" >&2
  exit 1
fi
export IQSTREAM_JAVA
echo "server: $jar, java: $IQSTREAM_JAVA"

npm ci --no-audit --no-fund --loglevel=error
exec node --test --test-concurrency=1 test/*.test.js

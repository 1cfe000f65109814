# Sourced by the test scripts that start the server jar themselves (deploy/test-lb.sh, deploy/test-cluster.sh):
# find_java prints the first java >= 21 of JAVA_HOME, the usual Temurin folders and the PATH, or nothing.
find_java() {
  local cand major
  for cand in "${JAVA_HOME:-}/bin/java" /usr/lib/jvm/temurin-25-jdk-amd64/bin/java \
              /usr/lib/jvm/temurin-21-jdk-amd64/bin/java "$(command -v java)"; do
    [ -x "$cand" ] || continue
    major=$("$cand" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [ "${major:-0}" -ge 21 ] 2>/dev/null; then echo "$cand"; return 0; fi
  done
  return 0 # none: the caller says so
}

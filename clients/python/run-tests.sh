#!/usr/bin/env bash
# Runs the Python publisher's tests (standard library only) against a real IQ-Stream server.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
#   PYTHON         interpreter (default: python3; 3.10 or newer)
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is required")'
source ../../scripts/server-for-tests.sh

status=0
"$python" -m unittest discover -s tests -t . -v || status=$?
iqstream_check_leaks || status=1
exit $status

#!/usr/bin/env bash
# The python suite: a fresh venv, the iqstream package installed into it from this path (pip install ., as a user
# would), the frameworks it is tested with from PyPI (pinned: tests/requirements-frameworks.txt, every transitive
# package in tests/constraints.txt), then every test against a real IQ-Stream server:
#   mypy                                             the package type-checks (it ships py.typed)
#   tests/test_publisher.py, test_async_client.py   the synchronous and the asyncio client (standard library)
#   tests/test_repair.py                             the repair step both publishers drive (iqstream/_repair.py),
#                                                    alone: every decision after a break or a refusal, no server
#   tests/test_core.py                               the rest of the sans-I/O core both clients share, alone: the
#                                                    requests (_requests.py), the answers (_results.py), no server
#   tests/test_restore.py                            both publishers restore a run whose node was SIGKILLed
#                                                    (two server processes with --peers)
#   tests/frameworks/                                pydantic-ai, LangGraph (ag-ui-langgraph) and Microsoft Agent
#                                                    Framework (agent-framework-ag-ui): their own AG-UI endpoints plus
#                                                    ResumableAGUI, the in-process adapters, @ag-ui/client's HttpAgent
# Downloads are cached between runs in $IQSTREAM_PIP_CACHE (default ~/.cache/iqstream-pip): a warm run installs
# from the cache. Exit 77 (skipped, with the reason) when no Python >= 3.10 with venv is found.
#   IQSTREAM_JAR   server jar (default: <repo>/server/target/iqstream-server.jar)
#   IQSTREAM_JAVA  java >= 21 to run it (default: the first 21+ of $JAVA_HOME/bin/java, java, /usr/lib/jvm/*)
#   PYTHON         interpreter the venv is made from (default: python3; 3.10 or newer)
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null; then
  echo "SKIPPED python suite: no $python on the PATH (set PYTHON to a Python >= 3.10)" >&2
  exit 77
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "SKIPPED python suite: $python is $("$python" --version 2>&1); the package needs Python >= 3.10 (set PYTHON)" >&2
  exit 77
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node and npm are required (the HttpAgent test runs @ag-ui/client)" >&2
  exit 1
fi
source ../../scripts/server-for-tests.sh

venv=.venv-test
cache=${IQSTREAM_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream-pip}
rm -rf "$venv" build ./*.egg-info
if ! "$python" -m venv "$venv"; then
  echo "SKIPPED python suite: '$python -m venv' failed (on Debian: apt-get install python3-venv)" >&2
  exit 77
fi
t0=$SECONDS
"$venv/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check --cache-dir "$cache" \
  -c tests/constraints.txt . -r tests/requirements-frameworks.txt
rm -rf build ./*.egg-info
echo "venv: the package and the frameworks installed in $((SECONDS - t0)) s"
# the tests import the installed package: prove it is the one in the venv (the source folder is on sys.path only
# when the tests run from here, and is the same code)
(cd / && "$OLDPWD/$venv/bin/python" -c '
import iqstream, iqstream.asgi, iqstream_client, sys
assert "site-packages" in iqstream.__file__, iqstream.__file__
print("installed:", iqstream.__version__, iqstream.__file__)')
# typed (py.typed): the package type-checks as its users' checkers see it
"$venv/bin/python" -m mypy --no-incremental iqstream iqstream_client
(cd tests/agui-client && npm ci --no-audit --no-fund --loglevel=error)

status=0
"$venv/bin/python" -m unittest discover -s tests -t . -v || status=$?
iqstream_check_leaks || status=1
exit $status

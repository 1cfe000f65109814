#!/usr/bin/env bash
# Checks the bench's AG-UI events against @ag-ui/core's own zod schemas (docs/BENCHMARK.md, "The
# workload"). Run by scripts/test-all.sh (step agui) and by hand. Idempotent: installs the locked npm
# dependencies (npm ci, only when node_modules is missing or older than the lockfile) and writes the
# sample run with AgUiRunTest when it is missing or older than the workload's sources.
# Exits non-zero when an event is invalid or the check cannot run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
sample="$repo/bench/target/sample-run.ndjson"

cd "$here"
if [[ ! -d node_modules || package-lock.json -nt node_modules ]]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules
fi

if [[ ! -f "$sample" ]] || [[ -n "$(find "$repo/bench/src" -newer "$sample" -name '*.java' -print -quit)" ]]; then
  echo "agui-check: writing the sample run (AgUiRunTest)"
  (cd "$repo" && mvn -B -q -ntp -pl bench test -Dtest=AgUiRunTest -Dsurefire.failIfNoSpecifiedTests=false)
fi
[[ -s "$sample" ]] || { echo "agui-check: no sample at $sample" >&2; exit 1; }

node check.mjs "$sample"

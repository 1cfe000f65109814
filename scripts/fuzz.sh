#!/usr/bin/env bash
# Runs every Jazzer fuzz test of the server -- each @FuzzTest method of each *FuzzTest class, in any package --
# in fuzzing mode for a fixed time, a few at a time, and fails if any of them finds a crash. Called by
# scripts/test-all.sh (so by `./iqstream test` and CI); see docs/FUZZING.md.
#   scripts/fuzz.sh [SECONDS]     seconds per target (default IQSTREAM_FUZZ_SECONDS, else 15)
#   IQSTREAM_FUZZ_JOBS=N          targets fuzzed at once (default 2)
#   IQSTREAM_FUZZ_FILTER=REGEX    only targets (Class#method) matching REGEX
# Jazzer fuzzes one test per JVM (JAZZER_FUZZ=1 with two @FuzzTest selected is an error), hence one Maven run per
# target, with the server/pom.xml profile `fuzz`. A crashing input is written to
# server/src/test/resources/<package>/<Class>Inputs/<method>/crash-*; commit it and it runs in every `mvn test`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
seconds="${1:-${IQSTREAM_FUZZ_SECONDS:-15}}"
jobs="${IQSTREAM_FUZZ_JOBS:-2}"
filter="${IQSTREAM_FUZZ_FILTER:-.}"
logs="$ROOT/server/target/fuzz-logs"

targets=()
while IFS= read -r file; do
  class="${file#server/src/test/java/}"; class="${class%.java}"; class="${class//\//.}"
  while IFS= read -r method; do
    [[ -n "$method" ]] && targets+=("$class#$method")
  done < <(awk '/@FuzzTest/ { want = 1 }
                want && match($0, /void[ \t]+[A-Za-z0-9_$]+[ \t]*\(/) {
                  m = substr($0, RSTART, RLENGTH); sub(/^void[ \t]+/, "", m); sub(/[ \t]*\($/, "", m); print m; want = 0 }' "$file")
done < <(find server/src/test/java -name '*FuzzTest.java' | sort)
selected=()
for t in "${targets[@]}"; do [[ "$t" =~ $filter ]] && selected+=("$t"); done
if ((${#selected[@]} == 0)); then echo "fuzz: no @FuzzTest methods found"; exit 1; fi
echo "fuzz: ${#selected[@]} targets, ${seconds} s each, $jobs at a time"

mvn -B -q -ntp -pl server test-compile   # once; each target then runs only surefire:test
rm -rf "$logs"; mkdir -p "$logs"

fuzz_one() { # fuzz_one CLASS#METHOD: one JVM fuzzing one target; status in $logs/NAME.rc
  local target="$1" name="${1##*.}"; name="${name//#/.}"
  local t0=$SECONDS rc=0
  JAZZER_FUZZ=1 mvn -B -q -ntp -pl server -Pfuzz surefire:test -Dtest="$target" -Dfuzz.seconds="$seconds" \
    -Dfuzz.target="$name" >"$logs/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/$name.rc"
  if ((rc == 0)); then echo "fuzz: $target passed ($((SECONDS - t0)) s)"; else echo "fuzz: $target FAILED ($((SECONDS - t0)) s)"; fi
}

for t in "${selected[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  fuzz_one "$t" &
done
wait

failed=0
for t in "${selected[@]}"; do
  name="${t##*.}"; name="${name//#/.}"
  if [[ "$(cat "$logs/$name.rc" 2>/dev/null || echo 1)" != 0 ]]; then
    failed=1
    echo "=== fuzz: $t failed; end of its log ($logs/$name.log):"
    tail -n 60 "$logs/$name.log"
    find server/target/fuzz-reports/"$name" -name '*.txt' -exec tail -n 40 {} + 2>/dev/null || true
    echo "=== crashing inputs, if any, are under server/src/test/resources/**/$(echo "$name" | cut -d. -f1)Inputs/"
  fi
done
exit "$failed"

#!/usr/bin/env bash
# Tests scripts/test-all.sh's own rules on a fake tree (fake suites, a fake mvn, a fake server jar), so
# that a weakened rule fails CI: a missing or non-executable suite fails under CI=true and is reported
# as skipped elsewhere; a subset never prints "ALL TESTS PASSED"; a failing suite fails the run; an
# unknown name in IQSTREAM_TEST_ONLY is refused; a suite that skips itself (exit 77) is reported as skipped on
# the last line, never as passed, and fails under CI=true unless IQSTREAM_TEST_SKIPPABLE names it. Then the real
# suites that can skip themselves (dist, image, k8s) are made to skip (a fake `id` saying non-root, PyYAML
# hidden) and must exit 77, not 0. Run by test-all.sh (suite self); a few seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# the fake tree: test-all.sh itself, every suite script it names passing, a jar, an mvn that passes
mkdir -p "$tmp/scripts" "$tmp/server/target" "$tmp/bin"
cp "$here/test-all.sh" "$tmp/scripts/"
touch "$tmp/server/target/iqstream-server.jar"
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/mvn"
chmod +x "$tmp/bin/mvn"
mapfile -t scripts < <(grep -oE '^\s*\[[a-z0-9_-]+\]=[^ ]+' "$here/test-all.sh" | sed 's/.*=//')
((${#scripts[@]} >= 5)) || { echo "selftest: found only ${#scripts[@]} suite scripts in test-all.sh" >&2; exit 1; }
for s in "${scripts[@]}"; do
  mkdir -p "$tmp/$(dirname "$s")"
  printf '#!/bin/sh\necho "ran %s"\nexit 0\n' "$s" >"$tmp/$s"
  chmod +x "$tmp/$s"
done
all="$(grep -oE '^ALL_SUITES=\(.*\)' "$here/test-all.sh" | sed 's/.*(\(.*\))/\1/' | tr ' ' ',')"

fails=0
# expect RC PATTERN ENV... : runs the fake test-all.sh with ENV; checks its status and last line
expect() {
  local want_rc="$1" pattern="$2"; shift 2
  local out rc=0
  out="$(env -u CI -u IQSTREAM_TEST_ONLY PATH="$tmp/bin:$PATH" "$@" "$tmp/scripts/test-all.sh" 2>&1)" || rc=$?
  local last="${out##*$'\n'}"
  if [[ "$rc" != "$want_rc" || ! "$last" =~ $pattern ]]; then
    echo "selftest FAILED: [$*] gave rc $rc, last line '$last'; wanted rc $want_rc and /$pattern/"
    echo "$out" | sed 's/^/    /'
    fails=$((fails + 1))
  else
    echo "selftest ok: [$*] -> rc $rc, '$last'"
  fi
}

expect 0 '^ALL TESTS PASSED$' CI=true
expect 0 '^PASSED \(subset: maven,js\)$' IQSTREAM_TEST_ONLY=maven,js
expect 0 '^PASSED \(subset: js\)$' CI=true IQSTREAM_TEST_ONLY=js
expect 2 "unknown suite 'jss'" IQSTREAM_TEST_ONLY=jss

chmod -x "$tmp/clients/js/run-tests.sh"            # not executable
rm "$tmp/deploy/test-lb.sh"                         # missing
expect 1 '^FAILED: js lb$' CI=true
expect 0 '^PASSED \(subset: .*; skipped: js,lb\)$'
expect 0 '^PASSED \(subset: none; skipped: lb\)$' IQSTREAM_TEST_ONLY=lb
chmod +x "$tmp/clients/js/run-tests.sh"

printf '#!/bin/sh\necho "fake: the reason python failed"\nexit 3\n' >"$tmp/clients/python/run-tests.sh"   # a failing suite
expect 1 '^FAILED: python lb$' CI=true
expect 1 '^FAILED: python$' IQSTREAM_TEST_ONLY=python
# the verdict repeats a failed suite's last lines just above it (a runner that keeps only the end of the output)
out="$(env -u CI PATH="$tmp/bin:$PATH" IQSTREAM_TEST_ONLY=python "$tmp/scripts/test-all.sh" 2>&1 | tail -n 3)" || true
if [[ "$out" == *"=== python: the last 60 lines it printed"*$'\n'"fake: the reason python failed"$'\n'"FAILED: python" ]]; then
  echo "selftest ok: a failed suite's last lines are repeated before the verdict"
else
  echo "selftest FAILED: a failed suite's last lines are not repeated before the verdict: $out"; fails=$((fails + 1))
fi

printf '#!/bin/sh\nexit 0\n' >"$tmp/clients/python/run-tests.sh"   # passing again
printf '#!/bin/sh\necho "fake: SKIP: no root"\nexit 77\n' >"$tmp/scripts/test-dist.sh"   # a suite that skips itself
mkdir -p "$tmp/deploy" && printf '#!/bin/sh\nexit 0\n' >"$tmp/deploy/test-lb.sh" && chmod +x "$tmp/deploy/test-lb.sh"
expect 1 '^FAILED: dist$' CI=true
expect 0 '^PASSED \(subset: .*; skipped: dist\)$' CI=true IQSTREAM_TEST_SKIPPABLE=dist
expect 1 '^FAILED: dist$' CI=true IQSTREAM_TEST_SKIPPABLE=image
expect 0 '^PASSED \(subset: .*dist.*; skipped: dist\)$'
expect 0 '^PASSED \(subset: dist; skipped: dist\)$' IQSTREAM_TEST_ONLY=dist
expect 2 "unknown suite 'dits'" CI=true IQSTREAM_TEST_SKIPPABLE=dits
printf '#!/bin/sh\nexit 77\n' >"$tmp/scripts/test-image.sh"
expect 0 '^PASSED \(subset: .*; skipped: dist,image\)$'
expect 0 '^PASSED \(subset: .*; skipped: dist,image\)$' CI=true IQSTREAM_TEST_SKIPPABLE=image,dist
expect 1 '^FAILED: image \(skipped: dist\)$' CI=true IQSTREAM_TEST_SKIPPABLE=dist

# the real suites that can skip themselves must say so with 77: dist and image when not root (a fake `id`
# first on the PATH; both check it before doing anything), k8s when PyYAML cannot be imported (a yaml module
# that fails to import shadows it; pip is kept off the network)
mkdir -p "$tmp/nonroot" "$tmp/noyaml"
printf '#!/bin/sh\necho 1000\n' >"$tmp/nonroot/id" && chmod +x "$tmp/nonroot/id"
echo 'raise ImportError("hidden by test-all-selftest.sh")' >"$tmp/noyaml/yaml.py"
real_skip() { # real_skip NAME CMD...: CMD must exit 77 and print a SKIP line
  local name="$1" out rc=0; shift
  out="$("$@" 2>&1)" || rc=$?
  if [[ "$rc" == 77 && "$out" == *SKIP* ]]; then echo "selftest ok: real $name skips with 77: ${out##*$'\n'}"
  else echo "selftest FAILED: real $name, made to skip, gave rc $rc (wanted 77):"; echo "$out" | sed 's/^/    /'; fails=$((fails + 1)); fi
}
real_skip dist env PATH="$tmp/nonroot:$PATH" "$here/test-dist.sh"
real_skip image env PATH="$tmp/nonroot:$PATH" "$here/test-image.sh"
real_skip k8s env PYTHONPATH="$tmp/noyaml" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 python3 \
  "$here/../deploy/kubernetes/test-manifests.py"

[[ -n "$all" ]] || { echo "selftest: no ALL_SUITES in test-all.sh" >&2; exit 1; }
((fails == 0)) || { echo "test-all selftest: $fails check(s) failed"; exit 1; }
echo "test-all selftest: all checks passed (suites: $all)"

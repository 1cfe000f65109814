#!/usr/bin/env bash
# The peers suite of scripts/test-all.sh: keeps the bench's built peers working. Builds Mercure and Centrifugo
# from the Go module proxy (install-mercure.sh and install-centrifugo.sh; the first build on a machine takes
# minutes, later ones copy it from the cache: go-peer.sh), Electric's Durable Streams server from crates.io
# (install-durable-streams.sh, cached the same way) and installs the Node reference server from npm
# (install-durable-node.sh), all at once, then runs the bench's tests tagged "peers" against the real servers:
# each driver's protocol pieces (MercureDriverTest, CentrifugoDriverTest, DurableStreamsDriverTest) and the
# peers' bench smoke (PeersSmokeTest: ./iqstream bench --peers-smoke). Those tests fail, never skip, under
# CI=true. Without a go or a cargo command this suite cannot run: it says so and exits 77 (skipped).
# The group filter runs with failIfNoSpecifiedTests=false, so a renamed tag or class would run nothing green: the
# suite counts the tests the run reported (surefire's reports) and fails below MIN_TESTS, or on any skipped one
# under CI=true.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if ! command -v go >/dev/null 2>&1; then
  echo "peers: SKIP: no go command (Go >= 1.26 builds Mercure and Centrifugo)"; exit 77
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "peers: SKIP: no cargo command (Rust builds Electric's Durable Streams server)"; exit 77
fi
t0=$SECONDS
pids=()
"$here/install-mercure.sh" & pids+=($!)
"$here/install-centrifugo.sh" & pids+=($!)
"$here/install-durable-streams.sh" & pids+=($!)
"$here/install-durable-node.sh" & pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
((rc == 0)) || { echo "peers: an install failed (exit $rc)" >&2; exit 1; }
echo "peers: Mercure, Centrifugo and the Durable Streams servers ready in $((SECONDS - t0)) s"
cd "$repo"
# MercureDriverTest (2: with and without history), CentrifugoDriverTest (2), PeersSmokeTest (1),
# DurableStreamsDriverTest (4: three servers, parameterized, and one more)
MIN_TESTS=9
reports="$repo/bench/target/surefire-reports"
rm -f "$reports"/TEST-*.xml
mvn -B -q -ntp -pl bench test -Dbench.excludedGroups= -Dgroups=peers -Dsurefire.failIfNoSpecifiedTests=false
read -r ran skipped < <(python3 - "$reports" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
ran = skipped = 0
for f in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(f).getroot()
    ran += int(r.get("tests", 0))
    skipped += int(r.get("skipped", 0))
print(ran, skipped)
PY
)
echo "peers: $ran tests ran ($skipped skipped), at least $MIN_TESTS expected"
if ((ran < MIN_TESTS)); then
  echo "peers: FAILED: only $ran tests tagged peers ran (a renamed tag or class?): at least $MIN_TESTS expected" >&2
  exit 1
fi
if ((skipped > 0)) && [[ "${CI:-}" == true ]]; then
  echo "peers: FAILED: $skipped of the peers' tests skipped themselves under CI=true" >&2
  exit 1
fi

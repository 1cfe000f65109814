#!/usr/bin/env bash
# The peers suite of scripts/test-all.sh: keeps the bench's built peers working. Builds Mercure and Centrifugo
# from the Go module proxy (install-mercure.sh and install-centrifugo.sh; the first build on a machine takes
# minutes, later ones copy it from the cache: go-peer.sh), Electric's Durable Streams server from crates.io
# (install-durable-streams.sh, cached the same way) and installs the Node reference server from npm
# (install-durable-node.sh), all at once, then runs the bench's tests tagged "peers" against the real servers:
# each driver's protocol pieces (MercureDriverTest, CentrifugoDriverTest, DurableStreamsDriverTest) and the
# peers' bench smoke (PeersSmokeTest: ./iqstream bench --peers-smoke). Those tests fail, never skip, under
# CI=true. Without a go or a cargo command this suite cannot run: it says so and exits 77 (skipped).
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
mvn -B -q -ntp -pl bench test -Dbench.excludedGroups= -Dgroups=peers -Dsurefire.failIfNoSpecifiedTests=false

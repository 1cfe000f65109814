#!/bin/sh
# Builds Centrifugo v6.9.1 from the Go module proxy into bench/peers/centrifugo/bin/centrifugo. Idempotent:
# does nothing when that binary is there and says it is v6.9.1.
# The version is pinned in centrifugo/go.mod (the `tool` of a small module of the bench's own, as
# `go install github.com/centrifugal/centrifugo/v6@v6.9.1` would build it); centrifugo/go.sum holds the
# checksum of every module in the build, and the go command refuses a download that does not match it
# (-mod=readonly: nothing is re-resolved). Built as the release is (CGO_ENABLED=0, -trimpath, the version
# stamped), without the release's usage-stats endpoint, so this build never reports anywhere.
# The build is gentle on a shared machine (one compile at a time); the first one takes a few minutes.
set -eu
cd "$(dirname "$0")/centrifugo"
VERSION=6.9.1
if [ -x bin/centrifugo ] && bin/centrifugo version 2>/dev/null | grep -q "$VERSION"; then exit 0; fi
command -v go >/dev/null 2>&1 || { echo "install-centrifugo.sh: no go command (Go >= 1.26 needed)" >&2; exit 1; }
mkdir -p bin
CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOMAXPROCS="${GOMAXPROCS:-1}" go build -p 1 -trimpath \
  -ldflags "-s -w -X github.com/centrifugal/centrifugo/v6/internal/build.Version=$VERSION" \
  -o bin/centrifugo.new github.com/centrifugal/centrifugo/v6
mv bin/centrifugo.new bin/centrifugo
bin/centrifugo version | grep -q "$VERSION"

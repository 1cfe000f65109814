#!/bin/sh
# Builds Centrifugo v6.9.1 from the Go module proxy into bench/peers/centrifugo/bin/centrifugo. Idempotent:
# does nothing when that binary is there and says it is v6.9.1.
# The version is pinned in centrifugo/go.mod (the `tool` of a small module of the bench's own, as
# `go install github.com/centrifugal/centrifugo/v6@v6.9.1` would build it); centrifugo/go.sum holds the
# checksum of every module in the build, and the go command refuses a download that does not match it
# (-mod=readonly: nothing is re-resolved). Built as the release is (CGO_ENABLED=0, -trimpath, the version
# stamped), without the release's usage-stats endpoint, so this build never reports anywhere.
# The first build takes minutes (go-peer.sh: the figures and the cache that makes the next one a copy).
set -eu
cd "$(dirname "$0")/centrifugo"
VERSION=6.9.1
. ../go-peer.sh
go_peer centrifugo github.com/centrifugal/centrifugo/v6 "bin/centrifugo version | grep -q '$VERSION'" \
  -ldflags "-s -w -X github.com/centrifugal/centrifugo/v6/internal/build.Version=$VERSION"

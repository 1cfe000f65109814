#!/bin/sh
# Builds the Mercure hub v0.24.2 (Caddy with the Mercure module) from the Go module proxy into
# bench/peers/mercure/bin/mercure. Idempotent: does nothing when that binary is there and lists the
# Mercure module at v0.24.2.
# github.com/dunglas/mercure/caddy's go.mod has `replace github.com/dunglas/mercure => ../`, so
# `go install …/caddy/mercure@v0.24.2` refuses it; it is built instead as the `tool` of a small module of
# the bench's own (mercure/go.mod pins github.com/dunglas/mercure and …/caddy at v0.24.2; go.sum holds
# the checksum of every module in the build, and the go command refuses a download that does not match
# it: -mod=readonly, nothing is re-resolved). One pin differs from Mercure's own go.sum:
# golang.org/x/crypto/x509roots/fallback v0.0.0-20260528171630-4c4d20b72c2f, which Caddy v2.11.3 asks
# for, is refused by proxy.golang.org ("not available"), so the next one it serves
# (v0.0.0-20261030153154-30a33513ff6d, a list of root certificates only, unused on loopback) is pinned.
# Built as the official binaries are: CGO_ENABLED=0, tags nobadger nomysql nopgx, without
# deprecated_transport (so the Caddyfile's `transport` directive chooses local or bolt).
# The first build takes minutes (go-peer.sh: the figures and the cache that makes the next one a copy).
set -eu
cd "$(dirname "$0")/mercure"
VERSION=v0.24.2
. ../go-peer.sh
go_peer mercure github.com/dunglas/mercure/caddy/mercure \
  "bin/mercure list-modules --versions | grep -q 'http.handlers.mercure $VERSION'" \
  -tags nobadger,nomysql,nopgx -ldflags "-s -w"

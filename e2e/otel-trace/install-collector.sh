#!/bin/sh
# Builds the test's OpenTelemetry Collector (collector/main.go: the collector's own OTLP receiver and the contrib
# file exporter, at collector v0.161.0) from the Go module proxy into e2e/otel-trace/collector/bin/otelcol, once
# per machine: go.sum pins every module (the go command refuses a download that does not match it), and the binary
# is cached outside the checkout as bench/peers' Go peers are (bench/peers/go-peer.sh: the cache and its key).
# About a minute on two CPUs the first time; a copy after that.
set -eu
cd "$(dirname "$0")/collector"
. ../../../bench/peers/go-peer.sh
hash=$(sha256sum main.go | cut -c1-16)
go_peer otelcol . "bin/otelcol --version | grep -q 'version e2e-$hash'" -ldflags "-s -w -X main.sourceHash=$hash"

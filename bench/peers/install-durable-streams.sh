#!/bin/sh
# Builds Electric's Durable Streams server, crate durable-streams 0.1.5 from crates.io (binary
# durable-streams-server), into bench/peers/durable-streams/bin/durable-streams-server. Idempotent: does nothing
# when that binary is there beside its stamp (bin/durable-streams-server.built: the crate, its version and the
# build's key). The binary has no --version, so the stamp, written by this script after cargo installed exactly
# that version, is what says which it is.
# Built as `cargo install durable-streams --version 0.1.5 --locked` does (the crate's own Cargo.lock: every
# dependency at the version and checksum its authors released with; cargo refuses a download whose checksum
# does not match), release profile, into a scratch root, then kept in a cache outside the checkout keyed by
# the version and the rustc that built it, so a fresh clone on the same machine (CI) copies it in:
#   ${IQSTREAM_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream/peers}/durable-streams-server-<key>/
# IQSTREAM_PEERS_CACHE=off builds without that cache. The build takes a few minutes the first time on two
# cores (IQSTREAM_PEERS_BUILD_PROCS sets cargo's -j; every CPU by default).
set -eu
cd "$(dirname "$0")/durable-streams"
NAME=durable-streams-server
CRATE=durable-streams
VERSION=0.1.5
stamp="$CRATE $VERSION"
check() { [ -x "bin/$NAME" ] && [ "$(cat "bin/$NAME.built" 2>/dev/null)" = "$stamp" ]; }
if check; then exit 0; fi
command -v cargo >/dev/null 2>&1 || { echo "install-durable-streams.sh: no cargo command (Rust >= 1.85 needed)" >&2; exit 1; }
key="$( { echo "$CRATE $VERSION --locked"; rustc -vV; } | sha256sum | cut -c1-16)"
cache="${IQSTREAM_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream/peers}"
mkdir -p bin
if [ "$cache" != off ] && [ -x "$cache/$NAME-$key/$NAME" ]; then
  cp "$cache/$NAME-$key/$NAME" "bin/$NAME.new" && mv "bin/$NAME.new" "bin/$NAME"
  echo "$stamp" > "bin/$NAME.built"
  echo "install-durable-streams.sh: bin/$NAME from $cache/$NAME-$key"; exit 0
fi
procs="${IQSTREAM_PEERS_BUILD_PROCS:-$(nproc 2>/dev/null || echo 1)}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
echo "install-durable-streams.sh: building $CRATE $VERSION (cargo install -j $procs; a few minutes the first time)"
cargo install "$CRATE" --version "$VERSION" --locked -j "$procs" --root "$root"
grep -q "\"$CRATE $VERSION " "$root/.crates.toml" || { echo "install-durable-streams.sh: cargo did not install $CRATE $VERSION" >&2; exit 1; }
mv "$root/bin/$NAME" "bin/$NAME"
echo "$stamp" > "bin/$NAME.built"
if [ "$cache" != off ]; then
  mkdir -p "$cache/$NAME-$key"
  cp "bin/$NAME" "$cache/$NAME-$key/$NAME.$$" && mv "$cache/$NAME-$key/$NAME.$$" "$cache/$NAME-$key/$NAME"
fi

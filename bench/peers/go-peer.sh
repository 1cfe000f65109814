# Sourced by install-mercure.sh and install-centrifugo.sh: builds a Go peer from the Go module proxy into
# bench/peers/<name>/bin/<name>, once per machine.
#   go_peer NAME PACKAGE CHECK BUILD_FLAGS...
# NAME's folder holds the small module (go.mod, go.sum) that pins the peer; CHECK is a shell command that
# succeeds when bin/NAME is the pinned version. Built with CGO_ENABLED=0, -trimpath, -mod=readonly against the
# committed go.sum (the go command refuses a download whose checksum does not match), then kept in a cache
# outside the checkout, keyed by the build's inputs (go.mod, go.sum, the flags, the go version), so a fresh
# clone on the same machine (CI) copies it in instead of building again:
#   ${IQSTREAM_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream/peers}/<NAME>-<key>/<NAME>
# IQSTREAM_PEERS_CACHE=off builds without that cache. GOMAXPROCS and -p default to every CPU (set
# IQSTREAM_PEERS_BUILD_PROCS=1 to be gentler on a shared machine); the compile is the cost, the download
# (about 25 s for both) is not.
go_peer() {
  name="$1"; pkg="$2"; check="$3"; shift 3
  if [ -x "bin/$name" ] && sh -c "$check" >/dev/null 2>&1; then return 0; fi
  command -v go >/dev/null 2>&1 || { echo "install-$name.sh: no go command (Go >= 1.26 needed)" >&2; return 1; }
  key="$( { cat go.mod go.sum; echo "$pkg $*"; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -c1-16)"
  cache="${IQSTREAM_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream/peers}"
  mkdir -p bin
  if [ "$cache" != off ] && [ -x "$cache/$name-$key/$name" ]; then
    cp "$cache/$name-$key/$name" "bin/$name.new" && mv "bin/$name.new" "bin/$name"
    if sh -c "$check" >/dev/null 2>&1; then echo "install-$name.sh: bin/$name from $cache/$name-$key"; return 0; fi
    echo "install-$name.sh: the cached $cache/$name-$key/$name is not the pinned version; building" >&2
  fi
  procs="${IQSTREAM_PEERS_BUILD_PROCS:-$(nproc 2>/dev/null || echo 1)}"
  echo "install-$name.sh: building $pkg (go build -p $procs; a few minutes the first time)"
  CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOMAXPROCS="$procs" \
    go build -p "$procs" -trimpath "$@" -o "bin/$name.new" "$pkg"
  mv "bin/$name.new" "bin/$name"
  sh -c "$check" >/dev/null
  if [ "$cache" != off ]; then
    mkdir -p "$cache/$name-$key"
    cp "bin/$name" "$cache/$name-$key/$name.$$" && mv "$cache/$name-$key/$name.$$" "$cache/$name-$key/$name"
  fi
}

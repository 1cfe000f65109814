#!/bin/sh
# Installs Soketi 1.6.1 from npm into bench/peers/soketi/node_modules. Idempotent.
# Soketi's package.json pins uWebSockets.js to a git URL that does not install here; package.json in
# this folder overrides it with @trufflesuite/uws-js-unofficial 20.30.0 (uWS 20.30.0, not the 20.10.0
# Soketi pins), which ships a binary for Node 20.
set -eu
cd "$(dirname "$0")/soketi"
if [ -f node_modules/@soketi/soketi/dist/cli/index.js ]; then exit 0; fi
command -v npm >/dev/null
npm install --no-audit --no-fund --loglevel=error >/dev/null
[ -f node_modules/@soketi/soketi/dist/cli/index.js ]

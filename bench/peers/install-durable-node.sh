#!/bin/sh
# Installs the Durable Streams protocol's Node reference server, @durable-streams/server 0.3.7 (pinned with its
# dependencies in durable-node/package-lock.json), into bench/peers/durable-node/node_modules. Idempotent.
set -eu
cd "$(dirname "$0")/durable-node"
if [ -f node_modules/@durable-streams/server/package.json ] \
  && grep -q '"version": "0.3.7"' node_modules/@durable-streams/server/package.json; then exit 0; fi
command -v npm >/dev/null
npm ci --no-audit --no-fund --loglevel=error >/dev/null
[ -f node_modules/@durable-streams/server/package.json ]

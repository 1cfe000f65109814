#!/usr/bin/env bash
# Measures what a catch-up of cold durable streams costs in memory (docs/DURABLE-STREAMS.md, "Cold streams"):
# starts a server jar with --durability disk --cold-after 2s on a fresh directory, writes STREAMS streams of 1 MiB
# (four appends of 256 KiB each), waits until every one is cold (iqstream_durable_bytes_held = 0), reads the first
# catch-up page of each (offset -1, one after another), and prints the server's own figures: bytes held, memory
# charged, streams loaded, pages read from files, the process's resident memory, and the wall time of the reads.
# Run it on two jars (one from before a change) to compare them; the figures are counts, not timings, except the
# last. Loopback only.
#   scripts/measure-cold-reads.sh [JAR] [PORT] [STREAMS]   (default server/target/iqstream-server.jar 18111 100)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/find-java.sh"
JAR="${1:-$ROOT/server/target/iqstream-server.jar}"; PORT="${2:-18111}"; STREAMS="${3:-100}"
JAVA="$(find_java)"
[ -n "$JAVA" ] || { echo "measure-cold-reads: no java >= 21 (set JAVA_HOME)"; exit 1; }
[ -f "$JAR" ] || { echo "measure-cold-reads: no jar at $JAR (./iqstream build)"; exit 1; }
DIR="$(mktemp -d)"
"$JAVA" -jar "$JAR" --host 127.0.0.1 --port "$PORT" --warmup 0 --durability disk --data-dir "$DIR/data" \
  --auth none --durable-streams-open true --cold-after 2s > "$DIR/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
head -c 262144 /dev/zero | tr '\0' 'x' > "$DIR/body"
B="http://127.0.0.1:$PORT/v1/stream/measure"
m() { curl -s "http://127.0.0.1:$PORT/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
for s in $(seq "$STREAMS"); do
  curl -sf -o /dev/null -X PUT -H 'Content-Type: text/plain' "$B/s$s"
  for _ in 1 2 3 4; do
    curl -sf -o /dev/null -X POST -H 'Content-Type: text/plain' --data-binary @"$DIR/body" "$B/s$s"
  done
done
for _ in $(seq 120); do [ "$(m iqstream_durable_bytes_held)" = "0" ] && break; sleep 0.5; done
echo "cold: held $(m iqstream_durable_bytes_held) B, charged $(m iqstream_memory_used_bytes) B"
t0=$(date +%s%N)
for s in $(seq "$STREAMS"); do curl -sf -o /dev/null "$B/s$s?offset=-1"; done
t1=$(date +%s%N)
echo "after the first page of each of $STREAMS streams: held $(m iqstream_durable_bytes_held) B," \
  "charged $(m iqstream_memory_used_bytes) B, loaded $(m iqstream_durable_streams_loaded_total)," \
  "pages from files $(m iqstream_durable_cold_reads_total), resident $(awk '/VmRSS/ { print $2 }' /proc/$PID/status) KiB," \
  "reads $(( (t1 - t0) / 1000000 )) ms"

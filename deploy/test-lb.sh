#!/usr/bin/env bash
# Tests the shipped load-balancer configs (deploy/haproxy/haproxy.cfg and
# deploy/nginx/iqstream.conf) in front of three real IQ-Stream nodes.
#
#   bash deploy/test-lb.sh            (env IQSTREAM_JAR, default <repo>/server/target/iqstream-server.jar)
#
# Installs haproxy and nginx from Debian when missing, runs its own instances
# from a temp folder on 127.0.0.1 only (Debian's policy-rc.d keeps the system
# services stopped; this script never touches them), and checks through each
# load balancer:
#   1. placement: 20 runs published through the LB read back complete through
#      the LB, and exactly one node holds each (asked directly), spread over nodes;
#   2. await-run: a subscriber that connects before the publisher gets the run;
#   3. streaming: a subscriber sees the first event while the publish request
#      is still open; a subscriber resumes mid-run with Last-Event-ID;
#   4. resume after the end: Last-Event-ID / ?lastEventId, and 204 at the end;
# then the drain stories:
#   5. nginx: a node marked "down" + reload: new runs avoid it, other nodes'
#      runs stay put, a stream open across the reload finishes;
#   6. haproxy: SIGTERM a node: /readyz turns 503, HAProxy takes it out of the
#      ring, new runs go elsewhere, its open run finishes, then it exits.
# Exits non-zero with a "FAIL:" line on the first failure.
# Env: IQSTREAM_JAR, JAVA_HOME, KEEP_WORK=1 (keep the temp folder and logs).
set -uo pipefail
# the nodes share one working directory and a data directory is one node's: they keep durable streams in memory
export IQSTREAM_DURABILITY="${IQSTREAM_DURABILITY:-memory}"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
JAR=${IQSTREAM_JAR:-$REPO/server/target/iqstream-server.jar}
HELPER="$HERE/test-lb-helper.py"
NODES=3                       # the shipped configs list three nodes
RUNS=20                       # runs per placement check
SECRET="test-lb-secret-$(date +%s)-0123456789abcdef0123456789"

WORK=$(mktemp -d /tmp/iqstream-lb.XXXXXX)
chmod 755 "$WORK"
declare -a NODE_PID NODE_PORT BG_PIDS
declare -A OWNER              # run id -> node that holds it
HAPROXY_PID="" NGINX_PID=""
PASSED=0

say()  { printf '%s\n' "$*"; }
ok()   { PASSED=$((PASSED + 1)); printf 'ok   %s  [%ss]\n' "$*" "$SECONDS"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  printf '      (logs in %s; kept)\n' "$WORK" >&2
  touch "$WORK/.failed"   # also when called inside $(...)
  exit 1
}

cleanup() {
  local pid
  for pid in "${BG_PIDS[@]}" ; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  [ -n "$HAPROXY_PID" ] && kill "$HAPROXY_PID" 2>/dev/null
  [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null
  for pid in "${NODE_PID[@]}" ; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
  if [ "${KEEP_WORK:-0}" = 1 ] || [ -e "$WORK/.failed" ]; then say "work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
BG_PIDS=()
NODE_PID=()

# wait_until TIMEOUT_S COMMAND...: true once COMMAND succeeds, false at the timeout.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" ; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
# wait_pid TIMEOUT_S PID: wait for a background job to end; false if it did not.
wait_pid() { wait_until "$1" dead "$2" || return 1; wait "$2" 2>/dev/null; return 0; }

# ---------------------------------------------------------------- preflight
need_pkgs=()
command -v haproxy >/dev/null || need_pkgs+=(haproxy)
command -v nginx >/dev/null || need_pkgs+=(nginx)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing ${need_pkgs[*]}; run as root or: sudo apt-get install -y ${need_pkgs[*]}"
  say "installing ${need_pkgs[*]} from Debian"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_pkgs[@]}"; } \
    >"$WORK/apt.log" 2>&1 || fail "apt-get install ${need_pkgs[*]} failed (see $WORK/apt.log)"
fi
for tool in curl python3 haproxy nginx; do
  command -v "$tool" >/dev/null || fail "$tool not found"
done

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/find-java.sh"
JAVA="$(find_java)"
[ -n "$JAVA" ] || fail "no Java >= 21 found (set JAVA_HOME)"
[ -f "$JAR" ] || fail "server jar not found: $JAR (build it or set IQSTREAM_JAR)"
say "jar: $JAR"
say "java: $JAVA; $(haproxy -v | head -1); $(nginx -v 2>&1)"

token() { python3 "$HELPER" token "$SECRET" "$1"; }
PUB=$(token '{"publish":["*"]}') || fail "cannot mint token"
SUB=$(token '{"subscribe":["*"]}') || fail "cannot mint token"

# ---------------------------------------------------------------- nodes
start_node() {
  local i=$1
  "$JAVA" -Xmx256m --enable-native-access=ALL-UNNAMED -Dio.netty.leakDetection.level=paranoid -jar "$JAR" serve --host 127.0.0.1 --port 0 --jwt-secret "$SECRET" \
    --workers 2 --retention 10m --drain-timeout 30s >"$WORK/node$i.log" 2>&1 &
  NODE_PID[$i]=$!
}
node_listening() { grep -qE 'listening on http://[^:]+:[0-9]+' "$WORK/node$1.log"; }
for i in $(seq 1 $NODES); do start_node "$i"; done
for i in $(seq 1 $NODES); do
  wait_until 60 node_listening "$i" || {
    alive "${NODE_PID[$i]}" || fail "node $i exited before listening: $(tail -5 "$WORK/node$i.log")"
    fail "node $i printed no 'listening on' line within 60s"
  }
  NODE_PORT[$i]=$(grep -oE 'listening on http://[^:]+:[0-9]+' "$WORK/node$i.log" | head -1 | sed 's/.*://')
  say "node $i: pid ${NODE_PID[$i]} port ${NODE_PORT[$i]}"
done

node_url() { printf 'http://127.0.0.1:%s' "${NODE_PORT[$1]}"; }

# owner RUN_ID [OUT_NODE [OLD_COPY]]: prints the one node that holds the run
# (asked directly, GET /v1/runs/{id}); fails unless exactly one does. OUT_NODE
# (taken out of the LB, maybe draining or gone) must not hold it, unless
# OLD_COPY=1 (it holds an older run of that id); any other answer is fine.
owner() {
  local id=$1 out=${2:-0} old_copy=${3:-0} i code found="" n=0
  for i in $(seq 1 $NODES); do
    if [ "$i" = "$out" ]; then
      [ "$old_copy" = 1 ] && continue
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $SUB" "$(node_url "$i")/v1/runs/$id")
      [ "$code" = 200 ] && fail "run $id: published after node $i left the LB, yet node $i holds it"
      continue
    fi
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $SUB" "$(node_url "$i")/v1/runs/$id")
    case "$code" in
      200) found="$found $i"; n=$((n + 1)) ;;
      404) ;;
      *) fail "GET /v1/runs/$id on node $i: expected 200 or 404, got $code" ;;
    esac
  done
  [ "$n" = 1 ] || fail "run $id: expected exactly one node to hold it, found [${found# }]"
  printf '%s' "${found# }"
}

# ---------------------------------------------------------------- load balancers
HX_PORT=$(python3 "$HELPER" free-port)
NG_PORT=$(python3 "$HELPER" free-port)
HX="http://127.0.0.1:$HX_PORT"
NG="http://127.0.0.1:$NG_PORT"
HX_SOCK="$WORK/haproxy.sock"

export IQS_LB_BIND="127.0.0.1:$HX_PORT" IQS_HAPROXY_SOCK="$HX_SOCK"
export IQS_NODE1="127.0.0.1:${NODE_PORT[1]}" IQS_NODE2="127.0.0.1:${NODE_PORT[2]}" IQS_NODE3="127.0.0.1:${NODE_PORT[3]}"
haproxy -c -q -f "$HERE/haproxy/haproxy.cfg" >"$WORK/haproxy-check.log" 2>&1 \
  || fail "haproxy -c rejects deploy/haproxy/haproxy.cfg: $(cat "$WORK/haproxy-check.log")"
haproxy -db -f "$HERE/haproxy/haproxy.cfg" >"$WORK/haproxy.log" 2>&1 &
HAPROXY_PID=$!

NGDIR="$WORK/nginx"
mkdir -p "$NGDIR/logs" "$NGDIR/tmp"
chmod -R 777 "$NGDIR/tmp"
# write_nginx_conf [DOWN_NODE]: the shipped file with this test's addresses
# (lines marked "# node", "# listen", "# access_log"); DOWN_NODE gets the "down" flag.
write_nginx_conf() {
  python3 - "$HERE/nginx/iqstream.conf" "$NGDIR/iqstream.conf" "$NG_PORT" "${1:-0}" "$NGDIR/logs" \
    "${NODE_PORT[1]}" "${NODE_PORT[2]}" "${NODE_PORT[3]}" <<'PY' || fail "cannot adapt deploy/nginx/iqstream.conf"
import re, sys
src, dst, lb_port, down = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
logs = sys.argv[5]
ports = sys.argv[6:]
out, n, listens = [], 0, 0
for line in open(src):
    if line.rstrip().endswith("# node"):
        n += 1
        flag = " down" if n == down else ""
        line = re.sub(r"server \S+", f"server 127.0.0.1:{ports[n - 1]}", line).replace(";  # node", f"{flag};  # node")
    elif line.rstrip().endswith("# access_log"):
        line = re.sub(r"access_log \S+", f"access_log {logs}/access.log", line)
    elif line.rstrip().endswith("# listen"):
        listens += 1
        line = re.sub(r"listen \S+;", f"listen 127.0.0.1:{lb_port};", line)
    out.append(line)
if n != len(ports) or listens != 1:
    sys.exit(f"expected {len(ports)} '# node' lines and one '# listen' line, found {n} and {listens}")
open(dst, "w").write("".join(out))
PY
}
write_nginx_conf
cat >"$NGDIR/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
pid $NGDIR/nginx.pid;
error_log $NGDIR/logs/error.log info;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $NGDIR/tmp/body;
    proxy_temp_path $NGDIR/tmp/proxy;
    fastcgi_temp_path $NGDIR/tmp/fastcgi;
    uwsgi_temp_path $NGDIR/tmp/uwsgi;
    scgi_temp_path $NGDIR/tmp/scgi;
    include $NGDIR/iqstream.conf;
}
EOF
nginx -t -q -e "$NGDIR/logs/error.log" -p "$NGDIR" -c "$NGDIR/nginx.conf" >"$WORK/nginx-check.log" 2>&1 \
  || fail "nginx -t rejects deploy/nginx/iqstream.conf: $(cat "$WORK/nginx-check.log") $(tail -3 "$NGDIR/logs/error.log")"
nginx -e "$NGDIR/logs/error.log" -p "$NGDIR" -c "$NGDIR/nginx.conf" >"$WORK/nginx.log" 2>&1 &
NGINX_PID=$!

hx_state() { python3 "$HELPER" haproxy-state "$HX_SOCK" iqstream "node$1" 2>/dev/null; }
hx_all_up() { local i; for i in $(seq 1 $NODES); do [ "$(hx_state "$i")" = UP ] || return 1; done; }
wait_until 20 hx_all_up || {
  alive "$HAPROXY_PID" || fail "haproxy exited: $(tail -5 "$WORK/haproxy.log")"
  states=""; for i in $(seq 1 $NODES); do states="$states node$i=$(hx_state "$i")"; done
  fail "haproxy: not all nodes UP after 20s (/readyz health check):$states; node1 /readyz -> $(curl -s -w ' %{http_code}' "$(node_url 1)/readyz")"
}
ok "haproxy up on $HX; all $NODES nodes pass the /readyz check"
http_ok() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1")" = 200 ]; }
wait_until 10 http_ok "$NG/healthz" || fail "nginx: GET /healthz through it never answered 200 ($(tail -3 "$NGDIR/logs/error.log"))"
ok "nginx up on $NG"
http_ok "$HX/healthz" || fail "haproxy: GET /healthz through it is not 200"
ok "haproxy: /healthz (no run id) is routed"

# ---------------------------------------------------------------- helpers for runs
# events_file RUN_ID N_DELTAS: an AG-UI run as NDJSON (2 + N_DELTAS + 2 events).
events_file() {
  local id=$1 n=$2 f="$WORK/events-$1.ndjson" k
  {
    printf '{"type":"RUN_STARTED","threadId":"t-%s","runId":"%s"}\n' "$id" "$id"
    printf '{"type":"TEXT_MESSAGE_START","messageId":"m-%s","role":"assistant"}\n' "$id"
    for k in $(seq 1 "$n"); do
      printf '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m-%s","delta":"part %s of %s"}\n' "$id" "$k" "$id"
    done
    printf '{"type":"TEXT_MESSAGE_END","messageId":"m-%s"}\n' "$id"
    printf '{"type":"RUN_FINISHED","threadId":"t-%s","runId":"%s"}\n' "$id" "$id"
  } >"$f"
  printf '%s' "$f"
}
seq_csv() { seq -s, "$1" "$2"; }

# publish LB RUN_ID EVENTS_FILE EXPECTED_LAST: one POST, expects 200 and the reply JSON.
publish() {
  local lb=$1 id=$2 f=$3 last=$4 code body
  code=$(curl -sS -o "$WORK/pub-$id.json" -w '%{http_code}' --max-time 20 -X POST \
    -H "Authorization: Bearer $PUB" -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$f" "$lb/v1/runs/$id/events") || fail "publish $id via $lb: curl failed"
  body=$(cat "$WORK/pub-$id.json")
  [ "$code" = 200 ] || fail "publish $id via $lb: expected 200, got $code $body"
  [[ "$body" =~ \"runId\":\ ?\"$id\" && "$body" =~ \"lastEventId\":\ ?$last[,}] && "$body" =~ \"ended\":\ ?true ]] \
    || fail "publish $id via $lb: reply $body, expected runId $id, lastEventId $last, ended true"
}

# subscribe LB RUN_ID OUT [curl args...]: reads the stream to its end (max 20s); prints the status.
subscribe() {
  local lb=$1 id=$2 out=$3; shift 3
  curl -sS -N --max-time 20 -o "$out" -w '%{http_code}' "$@" "$lb/v1/runs/$id/events?access_token=$SUB"
}
# check_stream NAME OUT IDS_CSV EVENTS_FILE
check_stream() {
  local err
  err=$(python3 "$HELPER" sse "$2" --ids "$3" --events "$4" 2>&1) || fail "$1: $err"
}

# ---------------------------------------------------------------- the checks, per LB
check_lb() {
  local name=$1 lb=$2 i id f code own counts
  say "--- $name ($lb)"

  # 1. placement + complete read-back
  counts=""
  for i in $(seq 1 $RUNS); do
    id="lbt-$name-$i"
    f=$(events_file "$id" 3)
    publish "$lb" "$id" "$f" 7
    code=$(subscribe "$lb" "$id" "$WORK/sub-$id.sse")
    [ "$code" = 200 ] || fail "$name: read back $id: expected 200, got $code"
    check_stream "$name: read back $id" "$WORK/sub-$id.sse" "$(seq_csv 1 7)" "$f"
    own=$(owner "$id") || exit 1
    OWNER[$id]=$own
    counts="$counts $own"
  done
  local distinct
  distinct=$(tr ' ' '\n' <<<"$counts" | sort -u | grep -c .)
  [ "$distinct" -ge 2 ] || fail "$name: all $RUNS runs landed on one node ($counts): the hash does not spread"
  ok "$name: $RUNS runs published and read back complete through the LB; each on exactly one node (nodes:$counts)"

  # the token reached the node (and was needed): without it, 401 through the LB
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 15 "$lb/v1/runs/lbt-$name-1/events")
  [ "$code" = 401 ] || fail "$name: subscribe without a token through the LB: expected 401, got $code"
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $SUB" "$lb/v1/runs/lbt-$name-1")
  [ "$code" = 200 ] || fail "$name: GET /v1/runs/lbt-$name-1 with a Bearer token through the LB: expected 200, got $code"
  ok "$name: tokens pass through (query and Authorization header; 401 without)"

  # 2. await-run: the subscriber comes first
  id="await-$name"
  f=$(events_file "$id" 2)
  subscribe "$lb" "$id" "$WORK/sub-$id.sse" >"$WORK/sub-$id.code" &
  local sub_pid=$!; BG_PIDS+=("$sub_pid")
  sleep 1   # let the subscriber reach its node and wait there (not a condition: the ordering under test)
  alive "$sub_pid" || fail "$name: a subscriber to a run not yet published ended at once ($(cat "$WORK/sub-$id.code")) instead of awaiting it"
  publish "$lb" "$id" "$f" 6
  wait_pid 15 "$sub_pid" || fail "$name: await-run subscriber still open 15s after the run ended"
  code=$(cat "$WORK/sub-$id.code")
  [ "$code" = 200 ] || fail "$name: await-run subscriber: expected 200, got $code (publisher and subscriber on different nodes?)"
  check_stream "$name: await-run subscriber" "$WORK/sub-$id.sse" "$(seq_csv 1 6)" "$f"
  ok "$name: a subscriber connected before the publisher gets the whole run"

  # 3. streaming: first event seen while the publish request is still open
  id="stream-$name"
  f=$(events_file "$id" 5)
  local go="$WORK/go-$id" pubout="$WORK/pubout-$id"
  python3 "$HELPER" slow-publish "$lb/v1/runs/$id/events" "$PUB" "$f" --first 1 --go "$go" --out "$pubout" \
    2>"$WORK/slowpub-$id.err" &
  local pub_pid=$!; BG_PIDS+=("$pub_pid")
  subscribe "$lb" "$id" "$WORK/sub-$id.sse" >"$WORK/sub-$id.code" &
  sub_pid=$!; BG_PIDS+=("$sub_pid")
  has_first() { grep -qs '^id: 1$' "$1"; }
  wait_until 10 has_first "$WORK/sub-$id.sse" \
    || fail "$name: the subscriber did not get event 1 within 10s while the publisher kept its request open (request or response buffered?) $(cat "$WORK/slowpub-$id.err")"
  [ -e "$pubout" ] && fail "$name: the publish request ended before the rest was sent: $(cat "$pubout")"
  alive "$pub_pid" || fail "$name: slow publisher died: $(cat "$WORK/slowpub-$id.err")"
  # resume mid-run through the LB: starts after event 1
  subscribe "$lb" "$id" "$WORK/sub2-$id.sse" -H 'Last-Event-ID: 1' >"$WORK/sub2-$id.code" &
  local sub2_pid=$!; BG_PIDS+=("$sub2_pid")
  touch "$go"
  wait_pid 20 "$pub_pid" || fail "$name: the slow publish did not finish"
  [ -e "$pubout" ] || fail "$name: slow publisher got no reply: $(cat "$WORK/slowpub-$id.err")"
  grep -q '^200 ' "$pubout" || fail "$name: slow publish: expected 200, got $(cat "$pubout")"
  wait_pid 15 "$sub_pid" || fail "$name: streaming subscriber still open 15s after the run ended"
  wait_pid 15 "$sub2_pid" || fail "$name: resuming subscriber still open 15s after the run ended"
  check_stream "$name: streaming subscriber" "$WORK/sub-$id.sse" "$(seq_csv 1 9)" "$f"
  [ "$(cat "$WORK/sub2-$id.code")" = 200 ] || fail "$name: mid-run resume: expected 200, got $(cat "$WORK/sub2-$id.code")"
  check_stream "$name: mid-run resume (Last-Event-ID: 1)" "$WORK/sub2-$id.sse" "$(seq_csv 2 9)" "$f"
  ok "$name: event 1 reached a subscriber before the publish request ended; Last-Event-ID resume mid-run"

  # 4. resume after the end
  id="lbt-$name-1"; f="$WORK/events-$id.ndjson"
  code=$(subscribe "$lb" "$id" "$WORK/res1-$id.sse" -H 'Last-Event-ID: 2')
  [ "$code" = 200 ] || fail "$name: resume with Last-Event-ID: 2: expected 200, got $code"
  check_stream "$name: resume with Last-Event-ID: 2" "$WORK/res1-$id.sse" "$(seq_csv 3 7)" "$f"
  code=$(curl -sS -N --max-time 20 -o "$WORK/res2-$id.sse" -w '%{http_code}' "$lb/v1/runs/$id/events?lastEventId=5&access_token=$SUB")
  [ "$code" = 200 ] || fail "$name: resume with ?lastEventId=5: expected 200, got $code"
  check_stream "$name: resume with ?lastEventId=5" "$WORK/res2-$id.sse" "6,7" "$f"
  code=$(subscribe "$lb" "$id" "$WORK/res3-$id.sse" -H 'Last-Event-ID: 7')
  [ "$code" = 204 ] || fail "$name: reconnect at the last id of an ended run: expected 204, got $code"
  ok "$name: resume after the end (Last-Event-ID, ?lastEventId, 204 at the last id)"
}

check_lb haproxy "$HX"
check_lb nginx "$NG"

# others_still_reachable NAME LB SKIP_NODE: runs placed on other nodes still resolve through the LB.
others_still_reachable() {
  local name=$1 lb=$2 skip=$3 i id code n=0
  for i in $(seq 1 $RUNS); do
    id="lbt-$name-$i"
    [ "${OWNER[$id]}" = "$skip" ] && continue
    code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 15 -H "Authorization: Bearer $SUB" "$lb/v1/runs/$id")
    [ "$code" = 200 ] || fail "$name: with node $skip out, run $id (on node ${OWNER[$id]}) answers $code through the LB: other nodes' runs moved"
    n=$((n + 1))
  done
  printf '%s' "$n"
}
# new_runs_avoid NAME LB OUT_NODE PREFIX: 20 new runs through the LB all succeed, none on
# OUT_NODE. Then the run ids that hashed to OUT_NODE before are published again: they must
# now land on another node (its share moved; the old runs there are out of reach). Prints
# how many ids moved.
new_runs_avoid() {
  local name=$1 lb=$2 out=$3 prefix=$4 i id f own moved=0
  for i in $(seq 1 $RUNS); do
    id="$prefix-$i"
    f=$(events_file "$id" 1)
    publish "$lb" "$id" "$f" 5
    own=$(owner "$id" "$out") || exit 1
  done
  for i in $(seq 1 $RUNS); do
    id="lbt-$name-$i"
    [ "${OWNER[$id]}" = "$out" ] || continue
    f=$(events_file "$id" 1)
    publish "$lb" "$id" "$f" 5
    own=$(owner "$id" "$out" 1) || exit 1
    moved=$((moved + 1))
  done
  printf '%s' "$moved"
}
# start_live_run NAME LB ID: a run whose publisher streams and holds its request open,
# plus a subscriber through the LB that has seen event 1. Sets LIVE_PUB/LIVE_SUB.
start_live_run() {
  local name=$1 lb=$2 id=$3 f
  f=$(events_file "$id" 3)
  # The body ends 0.5s after the terminal event: the drain must wait for the request, not only the run.
  python3 "$HELPER" slow-publish "$lb/v1/runs/$id/events" "$PUB" "$f" --first 2 --go "$WORK/go-$id" \
    --go-timeout-s 90 --end-delay-s 0.5 --out "$WORK/pubout-$id" 2>"$WORK/slowpub-$id.err" &
  LIVE_PUB=$!; BG_PIDS+=("$LIVE_PUB")
  subscribe "$lb" "$id" "$WORK/sub-$id.sse" --max-time 90 >"$WORK/sub-$id.code" &
  LIVE_SUB=$!; BG_PIDS+=("$LIVE_SUB")
  wait_until 10 grep -qs '^id: 2$' "$WORK/sub-$id.sse" || fail "$name: live run $id: subscriber got no event 2"
}
finish_live_run() {
  local name=$1 id=$2
  touch "$WORK/go-$id"
  wait_pid 20 "$LIVE_PUB" || fail "$name: live run $id: publisher did not finish"
  grep -q '^200 ' "$WORK/pubout-$id" 2>/dev/null \
    || fail "$name: live run $id: the streaming publish request got $(head -1 "$WORK/pubout-$id" 2>/dev/null) $(tail -1 "$WORK/slowpub-$id.err") instead of 200 (a draining node must answer the request before it exits)"
  wait_pid 15 "$LIVE_SUB" || fail "$name: live run $id: subscriber still open"
  check_stream "$name: live run $id subscriber" "$WORK/sub-$id.sse" "$(seq_csv 1 7)" "$WORK/events-$id.ndjson"
}

# ---------------------------------------------------------------- 5. nginx drain: down + reload
say "--- nginx drain (mark down + reload)"
start_live_run nginx "$NG" live-nginx
X=$(owner live-nginx) || exit 1
old_workers=$(pgrep -P "$NGINX_PID" | sort | tr '\n' ' ')
write_nginx_conf "$X"
kill -HUP "$NGINX_PID"
new_worker() { local w; for w in $(pgrep -P "$NGINX_PID"); do grep -qw "$w" <<<"$old_workers" || return 0; done; return 1; }
wait_until 10 new_worker || fail "nginx: no new worker 10s after reload ($(tail -3 "$NGDIR/logs/error.log"))"
# a new worker is not enough: until each old one has taken the signal it still accepts, with the old upstreams
old_shut() { local w; for w in $old_workers; do grep -q "$w#$w: gracefully shutting down" "$NGDIR/logs/error.log" || return 1; done; }
wait_until 10 old_shut || fail "nginx: the old workers ($old_workers) did not stop accepting 10s after reload"
n=$(others_still_reachable nginx "$NG" "$X") || exit 1
m=$(new_runs_avoid nginx "$NG" "$X" moved-nginx) || exit 1
finish_live_run nginx live-nginx
ok "nginx: node $X marked down + reload: $RUNS new runs avoid it, its $m run ids now land elsewhere, $n runs on other nodes stay reachable, the open stream finished"

# ---------------------------------------------------------------- 6. haproxy drain: SIGTERM -> /readyz 503
say "--- haproxy drain (SIGTERM, /readyz)"
start_live_run haproxy "$HX" live-haproxy
X=$(owner live-haproxy) || exit 1
kill -TERM "${NODE_PID[$X]}"
hx_down() { [ "$(hx_state "$X")" != UP ] && [[ "$(hx_state "$X")" != "UP "* ]]; }
wait_until 15 hx_down || fail "haproxy: node $X still '$(hx_state "$X")' 15s after SIGTERM; its /readyz answers $(curl -s -o /dev/null -w '%{http_code}' "$(node_url "$X")/readyz") (expected 503 while draining)"
alive "${NODE_PID[$X]}" || fail "node $X exited at SIGTERM although run live-haproxy was still streaming (no drain)"
n=$(others_still_reachable haproxy "$HX" "$X") || exit 1
m=$(new_runs_avoid haproxy "$HX" "$X" moved-haproxy) || exit 1
finish_live_run haproxy live-haproxy
ok "haproxy: node $X draining is out of the ring ($(hx_state "$X")): $RUNS new runs avoid it, its $m run ids now land elsewhere, $n runs on other nodes stay reachable, its open stream finished"
wait_pid 40 "${NODE_PID[$X]}" || fail "node $X still running 40s after SIGTERM with no run left (drain timeout 30s)"
ok "node $X exited after its drain"

# every node ran with paranoid leak detection: a LEAK: report in any node's log fails the suite
for i in $(seq 1 $NODES); do
  ! grep -q 'LEAK:' "$WORK/node$i.log" || fail "node $i: Netty reported a leaked buffer: $(grep -A8 'LEAK:' "$WORK/node$i.log" | head -20)"
done
ok "no leak reported by the $NODES nodes (Netty leak detection paranoid)"

say "PASS: $PASSED checks (haproxy $(haproxy -v | head -1 | awk '{print $3}'), nginx $(nginx -v 2>&1 | sed 's|.*/||'))"

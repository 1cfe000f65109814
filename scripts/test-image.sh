#!/usr/bin/env bash
# Tests the container image the way a user runs it, on a Docker engine of its own:
#   1. builds the image from the Dockerfile (stage dist-context: the archive of ./iqstream dist, so no Maven/JDK
#      image is pulled) on a Debian base made here with debootstrap (no registry needed), cached in
#      ~/.cache/iqstream/debian-bookworm-minbase.tar;
#   2. checks its config: non-root user, STOPSIGNAL SIGTERM, EXPOSE 8080, HEALTHCHECK on iqstream health, no
#      IQSTREAM_JWT_SECRET baked in;
#   3. `docker run IMAGE --version` prints the archive's version and commit; then runs it as a user would in
#      production: `docker run --network none --memory 256m --read-only --tmpfs /tmp`, the JWT secret in a mounted
#      file (IQSTREAM_JWT_SECRET_FILE): the JVM is sized from the 256m cgroup limit, runs as uid 10001, turns
#      healthy, serves a run end to end and resumes it (scripts/ship-check.py story, run on the host inside the
#      container's network namespace via nsenter);
#   4. `docker stop` drains: /readyz 503, new runs 503, the open run finishes, exit 143 after "stopped".
# Starts its own dockerd (--bridge=none --iptables=false, a data root in a temp folder) and stops it by PID; never
# touches a system engine. Installs docker.io and debootstrap from Debian when missing. When no engine can run,
# prints "test-image: SKIP: <why>" and exits 77, which scripts/test-all.sh reports as skipped (a failure under
# CI=true unless IQSTREAM_TEST_SKIPPABLE names image). Env: KEEP_WORK=1 keeps the temp folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/iqstream"
BASE_TAR="$CACHE/debian-bookworm-minbase.tar"
BASE_IMAGE=iqstream-test-base:bookworm
IMAGE=iqstream:test
t0=$SECONDS
skip() { echo "test-image: SKIP: $*"; exit 77; }
fail() { echo "test-image: FAIL: $*" >&2; [[ -n "${CID:-}" ]] && "${D[@]}" logs "$CID" >&2 2>&1 | tail -30; exit 1; }
ok() { echo "ok   $*  [$((SECONDS - t0)) s]"; }

[[ $(id -u) -eq 0 ]] || skip "needs root to run its own dockerd"
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
[[ -f "$BASE_TAR" ]] || command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
  echo "test-image: installing ${missing[*]} (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >/dev/null 2>&1 \
    || skip "could not install ${missing[*]} with apt-get"
fi
command -v nsenter >/dev/null || skip "nsenter (util-linux) is missing"
# the engine's own CLI (the 20.10 CLI of docker.io talks BuildKit to its daemon without a buildx plugin)
DOCKER_BIN=/usr/bin/docker; [[ -x $DOCKER_BIN ]] || DOCKER_BIN="$(command -v docker)"

WORK="$(mktemp -d /tmp/iqs-img.XXXXXX)"
DPID="" CID=""
D=("$DOCKER_BIN" -H "unix://$WORK/d.sock")
cleanup() {
  local rc=$?
  set +e   # clean up everything, whatever fails
  [[ -n "$CID" ]] && "${D[@]}" rm -f "$CID" >/dev/null 2>&1
  if [[ -n "$DPID" ]]; then
    kill -TERM "$DPID" 2>/dev/null
    for _ in $(seq 1 200); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$DPID" 2>/dev/null || true
  fi
  # anything the engine left mounted under its data root
  grep -o " $WORK/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  if [[ $rc -ne 0 || "${KEEP_WORK:-0}" == 1 ]]; then echo "test-image: work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# 1. the base: Debian bookworm minbase, bootstrapped once and cached (docs, man pages, locales and apt lists removed)
if [[ ! -f "$BASE_TAR" ]]; then
  echo "test-image: bootstrapping the Debian base once (cached in $BASE_TAR)..."
  mkdir -p "$CACHE" "$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$WORK/rootfs" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
    || skip "debootstrap failed (no Debian mirror?): $(tail -1 "$WORK/debootstrap.log")"
  (cd "$WORK/rootfs" && rm -rf usr/share/doc/* usr/share/man/* usr/share/info/* usr/share/locale/* \
     var/lib/apt/lists/* var/cache/apt/*.bin var/cache/apt/archives/*.deb var/log/*.log tmp/*)
  tar --numeric-owner -C "$WORK/rootfs" -cf "$BASE_TAR.tmp" . && mv "$BASE_TAR.tmp" "$BASE_TAR"
  rm -rf "$WORK/rootfs"
fi

dockerd --iptables=false --bridge=none --data-root "$WORK/data" --exec-root "$WORK/x" -H "unix://$WORK/d.sock" \
  --pidfile "$WORK/d.pid" >"$WORK/dockerd.log" 2>&1 &
DPID=$!
for _ in $(seq 1 300); do "${D[@]}" info >/dev/null 2>&1 && break; kill -0 $DPID 2>/dev/null || break; sleep 0.1; done
"${D[@]}" info >/dev/null 2>&1 || skip "dockerd does not start here: $(tail -3 "$WORK/dockerd.log" | tr '\n' ' ')"
"${D[@]}" import "$BASE_TAR" "$BASE_IMAGE" >/dev/null
ok "own dockerd (PID $DPID) up, base imported"

# 2. the image, from the archive in target/dist (made now unless it is up to date: scripts/test-dist.sh makes it)
vfile="$ROOT/target/dist/iqstream/VERSION"
if [[ ! -f "$vfile" ]] || ! cmp -s "$ROOT/server/target/iqstream-server.jar" "$ROOT/target/dist/iqstream/lib/iqstream-server.jar" \
    || [[ -n "$(find "$ROOT/deploy/dist" "$ROOT/scripts/make-dist.sh" "$ROOT/iqstream" -newer "$vfile" -print -quit)" ]]; then
  IQSTREAM_DIST_REUSE_JAR=1 "$ROOT/scripts/make-dist.sh"
fi
# --network none: the engine here has no bridge, and the build needs no network anyway
DOCKER="${D[*]}" IQSTREAM_RUN_IMAGE="$BASE_IMAGE" IQSTREAM_IMAGE_BUILD_ARGS="--network none" IQSTREAM_IMAGE_USE_DIST=1 \
  "$ROOT/scripts/make-image.sh" "$IMAGE" >"$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; fail "docker build"; }
size_mib="$("${D[@]}" image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.1f", $1 / 1048576}')"
base_mib="$("${D[@]}" image inspect -f '{{.Size}}' "$BASE_IMAGE" | awk '{printf "%.1f", $1 / 1048576}')"
ok "image built: $size_mib MiB (base $base_mib MiB)"
cfg="$("${D[@]}" image inspect -f '{{.Config.User}}|{{.Config.StopSignal}}|{{json .Config.ExposedPorts}}|{{json .Config.Healthcheck.Test}}|{{json .Config.Env}}' "$IMAGE")"
IFS='|' read -r user stopsig ports health env <<<"$cfg"
[[ "$user" == 10001:10001 ]] || fail "image user is '$user', not 10001:10001"
[[ "$stopsig" == SIGTERM ]] || fail "STOPSIGNAL is '$stopsig'"
[[ "$ports" == *'"8080/tcp"'* ]] || fail "8080 not exposed: $ports"
[[ "$health" == *'iqstream'*'health'* ]] || fail "no health check: $health"
[[ "$env" != *JWT_SECRET* && "$env" != *SECRET* ]] || fail "a secret is baked in: $env"
ok "config: user $user, STOPSIGNAL $stopsig, ports $ports, healthcheck $health, no secret in Env"

want_version="iqstream $(sed -n 's/^iqstream //p' "$vfile") (commit $(sed -n 's/^commit //p' "$vfile"))"
got_version="$("${D[@]}" run --rm --network none "$IMAGE" --version)"
[[ "$got_version" == "$want_version" ]] || fail "--version in the image: '$got_version', expected '$want_version'"
ok "docker run IMAGE --version: $got_version"

# 3. run it: no network, 256 MiB, read-only root, the secret from a mounted file
secret="image-test-secret-$RANDOM-0123456789abcdef0123456789"
printf '%s\n' "$secret" >"$WORK/jwt-secret" && chmod 644 "$WORK/jwt-secret"
CID="$("${D[@]}" run -d --network none --memory 256m --read-only --tmpfs /tmp \
  -v "$WORK/jwt-secret:/run/secrets/jwt-secret:ro" -e IQSTREAM_JWT_SECRET_FILE=/run/secrets/jwt-secret \
  "$IMAGE" --drain-timeout 30s)"
for _ in $(seq 1 600); do
  "${D[@]}" logs "$CID" 2>/dev/null | grep -q "listening on" && break
  [[ "$("${D[@]}" inspect -f '{{.State.Running}}' "$CID")" == true ]] || fail "container exited"
  sleep 0.1
done
logs="$("${D[@]}" logs "$CID" 2>&1)"
[[ "$logs" == *"listening on"* ]] || fail "not listening after 60 s"
[[ "$logs" =~ warmed\ up\ in\ [0-9]+\ ms:\ [0-9]+\ requests ]] || fail "no completed warm-up: $(grep -i warm <<<"$logs")"
pid="$("${D[@]}" inspect -f '{{.State.Pid}}' "$CID")"
plan="$(grep -o "memory plan:.*" <<<"$logs")"
[[ "$plan" == "memory plan: limit 256m (cgroup "* ]] || fail "not sized from the 256m limit: $plan"
heap="$(sed -n 's/.*heap \([0-9]*\)m.*/\1/p' <<<"$plan")"; direct="$(sed -n 's/.*direct \([0-9]*\)m.*/\1/p' <<<"$plan")"
cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
[[ "$cmdline" == *"-Xmx${heap}m "* && "$cmdline" == *"-XX:MaxDirectMemorySize=${direct}m "* ]] \
  || fail "the JVM (PID 1 of the container) is not run with the plan: $cmdline"
uid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")"
[[ "$uid" == 10001 ]] || fail "runs as uid $uid"
transport="$(grep -o '([a-z_]*, [0-9]* workers' <<<"$logs")"
[[ "$transport" == "(epoll,"* || "$transport" == "(io_uring,"* ]] \
  || fail "native transport not loaded on the read-only root: $transport"
ok "runs as uid $uid, $plan; java is PID 1 with -Xmx${heap}m; $transport"
"${D[@]}" exec "$CID" /opt/iqstream/bin/iqstream health >/dev/null || fail "iqstream health in the container"
budget="$(sed -n 's/.*event-log budget \([0-9]*\)m.*/\1/p' <<<"$plan")"
nsenter -t "$pid" -n python3 "$ROOT/scripts/ship-check.py" story http://127.0.0.1:8080 "$secret" "$budget" || fail "story"
for _ in $(seq 1 400); do
  [[ "$("${D[@]}" inspect -f '{{.State.Health.Status}}' "$CID")" == healthy ]] && break; sleep 0.1
done
[[ "$("${D[@]}" inspect -f '{{.State.Health.Status}}' "$CID")" == healthy ]] || fail "HEALTHCHECK never healthy"
ok "HEALTHCHECK: healthy"

# 4. docker stop drains
nsenter -t "$pid" -n python3 "$ROOT/scripts/ship-check.py" drain http://127.0.0.1:8080 "$secret" -- \
  "${D[@]}" stop -t 60 "$CID" || fail "drain"
code="$("${D[@]}" inspect -f '{{.State.ExitCode}}' "$CID")"
"${D[@]}" logs "$CID" 2>&1 | grep -q "iqstream: stopped" || fail "no clean stop (exit $code)"
[[ "$code" == 143 || "$code" == 0 ]] || fail "exit code $code"
ok "docker stop: drained, stopped, exit $code"
echo "test-image: passed in $((SECONDS - t0)) s (image $size_mib MiB)"

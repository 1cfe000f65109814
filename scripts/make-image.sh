#!/usr/bin/env bash
# ./iqstream image [TAG]: builds the container image from the distribution (./iqstream dist), so the image's
# build needs no Maven or JDK stage and no registry but for its base.
#   TAG                        default iqstream:<version>
#   env DOCKER                 the docker command (default: docker; e.g. "docker -H unix:///run/my.sock")
#   env IQSTREAM_RUN_IMAGE     the base image (default: the Dockerfile's, debian:bookworm-slim)
#   env IQSTREAM_IMAGE_USE_DIST=1  take target/dist/iqstream as it is (no make-dist.sh)
#   env IQSTREAM_IMAGE_BUILD_ARGS  more `docker build` arguments, split at spaces (e.g. --network none)
#   env IQSTREAM_DIST_REUSE_JAR=1 and the other make-dist.sh variables pass through.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
read -r -a docker <<<"${DOCKER:-docker}"
[[ "${IQSTREAM_IMAGE_USE_DIST:-0}" == 1 && -f "$ROOT/target/dist/iqstream/VERSION" ]] || "$ROOT/scripts/make-dist.sh"
version="$(sed -n 's/^iqstream //p' "$ROOT/target/dist/iqstream/VERSION")"
commit="$(sed -n 's/^commit //p' "$ROOT/target/dist/iqstream/VERSION")"
tag="${1:-iqstream:$version}"
args=(--build-arg DIST=context --build-arg GIT_COMMIT="$commit"
      --label org.opencontainers.image.version="$version" --label org.opencontainers.image.revision="$commit")
[[ -n "${IQSTREAM_RUN_IMAGE:-}" ]] && args+=(--build-arg RUN_IMAGE="$IQSTREAM_RUN_IMAGE")
read -r -a extra <<<"${IQSTREAM_IMAGE_BUILD_ARGS:-}"
args+=("${extra[@]}")
DOCKER_BUILDKIT=1 "${docker[@]}" build "${args[@]}" -t "$tag" "$ROOT"
echo "iqstream image: $tag ($("${docker[@]}" image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.1f MiB", $1 / 1048576}'))"

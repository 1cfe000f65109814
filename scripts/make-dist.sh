#!/usr/bin/env bash
# Builds the self-contained distribution: target/dist/iqstream-<version>-linux-x64.tar.gz, holding
#   runtime/          a Java runtime made with jlink (only the modules the server needs)
#   lib/              the server jar, and Netty's native transports unpacked (lib/native)
#   bin/iqstream      the launcher (from deploy/dist/iqstream, JVM flags copied from ./iqstream)
#   VERSION           version and git commit
# and the same tree unpacked in target/dist/iqstream/ (what the Dockerfile copies).
# Called by `./iqstream dist` and by the Dockerfile's build stage. Needs a JDK >= 21 with jlink in JAVA_HOME
# (or PATH) and Maven when the server jar must be (re)built.
# Env: IQSTREAM_COMMIT (default: git rev-parse of this checkout), IQSTREAM_DIST_OUT (default: target/dist),
#      IQSTREAM_DIST_REBUILD=1 (always rebuild the jar), IQSTREAM_DIST_REUSE_JAR=1 (take the jar as built, even
#      from another commit: what the tests do after `mvn verify`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${IQSTREAM_DIST_OUT:-$ROOT/target/dist}"
JAR="$ROOT/server/target/iqstream-server.jar"
JDK_BIN="${JAVA_HOME:+$JAVA_HOME/bin/}"
COMMIT="${IQSTREAM_COMMIT:-$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
# The modules the server needs (jdeps --print-module-deps lists more: java.desktop, java.sql and java.naming are
# only reached by optional Jackson and Netty SSL code the server never runs; jdk.jfr is Netty's optional events).
# java.management is not in jdeps' list but is needed: Netty reads -XX:MaxDirectMemorySize through it, and without
# it takes the heap size as its direct-memory limit, so the event-log budget shrinks (the tests check /metrics).
# jdk.crypto.ec holds the EC signature code on JDK 21 (empty from JDK 22 on); it is added when the JDK has it.
MODULES="java.base,java.management,java.net.http,jdk.unsupported"

jar_props() { # the jar's build.properties (version=, commit=), or nothing
  local d; d="$(mktemp -d)"
  [[ -f "$JAR" ]] && (cd "$d" && "${JDK_BIN}jar" xf "$JAR" io/iqstream/server/build.properties) 2>/dev/null \
    && tr -d '\r' 2>/dev/null <"$d/io/iqstream/server/build.properties"
  rm -rf "$d"
}

built_commit="$(jar_props | sed -n 's/^commit=//p' || true)"
if [[ "${IQSTREAM_DIST_REUSE_JAR:-0}" == 1 && -f "$JAR" ]]; then
  :
elif [[ "${IQSTREAM_DIST_REBUILD:-0}" == 1 || ! -f "$JAR" || "$built_commit" != "$COMMIT" \
      || -n "$(find "$ROOT/server/src" "$ROOT/server/pom.xml" "$ROOT/pom.xml" -newer "$JAR" -type f -print -quit)" ]]; then
  echo "iqstream dist: building the server jar (commit $COMMIT)..." >&2
  (cd "$ROOT" && mvn -B -q -ntp -DskipTests -Diqstream.commit="$COMMIT" -pl server -am package)
fi
props="$(jar_props)"
VERSION="$(sed -n 's/^version=//p' <<<"$props")"
JAR_COMMIT="$(sed -n 's/^commit=//p' <<<"$props")"
[[ -n "$VERSION" && "$VERSION" != *'${'* ]] || { echo "iqstream dist: no version in the jar" >&2; exit 1; }

NAME="iqstream-$VERSION-linux-x64"
STAGE="$OUT/$NAME"
rm -rf "$STAGE" "$OUT/iqstream" "$OUT/$NAME.tar.gz"
mkdir -p "$STAGE/bin" "$STAGE/lib"
if "${JDK_BIN}java" --list-modules 2>/dev/null | grep -q '^jdk.crypto.ec@'; then MODULES="$MODULES,jdk.crypto.ec"; fi
echo "iqstream dist: jlink $MODULES" >&2
# --strip-java-debug-attributes, not --strip-debug: on Linux that also strips native symbols with objcopy, which
# build images (maven:*) lack, for no gain (the JDK's libraries carry no debug info)
"${JDK_BIN}jlink" --add-modules "$MODULES" --strip-java-debug-attributes --no-man-pages --no-header-files --compress=zip-6 \
  --output "$STAGE/runtime"
cp "$JAR" "$STAGE/lib/iqstream-server.jar"
# Netty's native transports, unpacked: the launcher puts lib/native on java.library.path, where Netty looks first,
# so the server needs no writable, exec-able /tmp to extract them (a read-only root filesystem keeps epoll)
mkdir -p "$STAGE/lib/native"
(cd "$STAGE/lib/native" && "${JDK_BIN}jar" xf "$JAR" META-INF/native/ && find META-INF -name '*.so' -exec mv {} . \; \
  && rm -rf META-INF)
printf 'iqstream %s\ncommit %s\njava %s\n' "$VERSION" "$JAR_COMMIT" \
  "$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$STAGE/runtime/release")" >"$STAGE/VERSION"
# the launcher: the template with the JVM flags of ./iqstream (one list of flags for both)
jvm_common="$(sed -n '/^JVM_COMMON=(/,/)$/p' "$ROOT/iqstream")"
[[ -n "$jvm_common" ]] || { echo "iqstream dist: JVM_COMMON not found in ./iqstream" >&2; exit 1; }
awk -v flags="$jvm_common" -v version="$VERSION" -v commit="$JAR_COMMIT" '
  /^# @JVM_COMMON@$/ { print flags; next }
  { gsub(/@VERSION@/, version); gsub(/@COMMIT@/, commit); print }' "$ROOT/deploy/dist/iqstream" >"$STAGE/bin/iqstream"
chmod 755 "$STAGE/bin/iqstream"
cp "$ROOT/LICENSE" "$STAGE/" 2>/dev/null || true

# reproducible tar: fixed owner, order and times (the commit's time when known)
mtime="$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$OUT" -cf - "$NAME" \
  | gzip -9n >"$OUT/$NAME.tar.gz"
cp -a "$STAGE" "$OUT/iqstream"
echo "iqstream dist: $OUT/$NAME.tar.gz ($(du -k "$OUT/$NAME.tar.gz" | cut -f1) KiB; unpacked $(du -sk "$STAGE" | cut -f1) KiB)"

#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (e2e/), once. Idempotent:
# does nothing but say so when a chromium is already on the PATH.
# Needs root (or sudo) and the Debian package mirror the first time.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "install-chromium: already installed: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-chromium: chromium is missing and this user is not root (no sudo): install the Debian package 'chromium' by hand" >&2
    exit 1
  fi
fi

echo "install-chromium: chromium not found; installing Debian's 'chromium' package with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
echo "install-chromium: installed $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"

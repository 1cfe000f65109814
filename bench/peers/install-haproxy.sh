#!/bin/sh
# Installs HAProxy (the TCP floor) from Debian. Idempotent: does nothing when haproxy is on PATH.
# The bench runs its own haproxy with a config in a temp folder; the system service is not used.
set -eu
if command -v haproxy >/dev/null 2>&1; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq haproxy >/dev/null
command -v haproxy >/dev/null || {
  echo "haproxy is installed ($(dpkg -L haproxy 2>/dev/null | grep -m1 '/s\?bin/haproxy$')) but not on PATH ($PATH)" >&2
  exit 1
}

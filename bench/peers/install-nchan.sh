#!/bin/sh
# Installs nginx + the Nchan module from Debian. Idempotent: does nothing when both are present.
# Debian's policy-rc.d keeps the system nginx from starting; the bench runs its own nginx with
# `nginx -p <prefix> -c <conf>` and a config in a temp folder, listening on 127.0.0.1 only.
set -eu
if command -v nginx >/dev/null 2>&1 && [ -f /usr/lib/nginx/modules/ngx_nchan_module.so ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq nginx libnginx-mod-nchan >/dev/null
[ -f /usr/lib/nginx/modules/ngx_nchan_module.so ]
command -v nginx >/dev/null || {
  echo "nginx is installed ($(dpkg -L nginx-core nginx 2>/dev/null | grep -m1 '/s\?bin/nginx$')) but not on PATH ($PATH)" >&2
  exit 1
}

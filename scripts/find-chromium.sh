#!/usr/bin/env bash
# Sourced by the suites that drive a headless Chromium (e2e, copilotkit, aisdk), so they all find it the same way:
#   iqstream_find_chromium   sets and exports CHROMIUM_PATH to the browser, or to "" when there is none:
#     1. CHROMIUM_PATH when it is set (it must be executable: a wrong path is not silently replaced);
#     2. else the first of chromium, chromium-browser on the PATH, then /usr/bin/chromium;
#     3. else, when none is found, scripts/install-chromium.sh (Debian's package; needs root or sudo) and 2 again.
# The caller decides what a missing browser means: a skip (exit 77, scripts/test-all.sh's rule), never a pass.
_iqstream_chromium_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

_iqstream_chromium_on_path() {
  local c
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  if [ -x /usr/bin/chromium ]; then echo /usr/bin/chromium; return 0; fi
  return 1
}

iqstream_find_chromium() {
  if [ -n "${CHROMIUM_PATH:-}" ]; then
    if [ ! -x "$CHROMIUM_PATH" ]; then
      echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable browser" >&2
      CHROMIUM_PATH=""
    fi
    export CHROMIUM_PATH
    return 0
  fi
  CHROMIUM_PATH="$(_iqstream_chromium_on_path || true)"
  if [ -z "$CHROMIUM_PATH" ]; then
    "$_iqstream_chromium_here/install-chromium.sh" || true
    CHROMIUM_PATH="$(_iqstream_chromium_on_path || true)"
  fi
  export CHROMIUM_PATH
}

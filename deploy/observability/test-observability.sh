#!/usr/bin/env bash
# Tests deploy/observability/ against a real Prometheus (Debian's package, installed here when missing):
#   1. promtool check rules alerts.yml;
#   2. three real IQ-Stream nodes (two in a cluster, one with a 64 KiB memory budget) under a little load,
#      scraped by a real Prometheus: every query of iqstream-dashboard.json returns data;
#   3. IqStreamOverBudget fires on the node whose budget is full, and only there.
#   bash deploy/observability/test-observability.sh   (env IQSTREAM_JAR, JAVA_HOME, KEEP_WORK=1)
# Exits 77 with a reason when Prometheus cannot be installed here.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
  echo "installing Debian's prometheus package (promtool, prometheus)"
  if ! { apt-get install -y -q prometheus >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 \
      && apt-get install -y -q prometheus >/dev/null 2>&1; }; }; then
    echo "SKIP: Debian's prometheus package cannot be installed here (apt-get failed)" >&2
    exit 77
  fi
fi
# the package starts its own service where it can; this test runs its own instance and never touches that one
promtool check rules "$HERE/alerts.yml" || { echo "FAIL: promtool check rules" >&2; exit 1; }
source "$REPO/scripts/server-for-tests.sh" >/dev/null || exit 1
exec python3 "$HERE/test_observability.py"

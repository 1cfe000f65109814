#!/usr/bin/env bash
# The packages suite: every client package installs from what it would publish, into a fresh project, as a
# stranger would install it from the registry.
#   JavaScript  `npm pack` of clients/js, clients/resumable-stream, clients/tanstack-ai and clients/copilotkit; the
#               packed manifests name no file:/link: dependency (a registry user cannot resolve one); the tarballs
#               installed together into an empty npm project (their peer dependencies from npm, as npm 7+ installs
#               them), and every entry point of their "exports" imported there by Node.
#   Python      `python -m build` of clients/python (sdist and wheel); the wheel installed into one fresh venv, the
#               sdist into another; from outside the source tree: `import iqstream, iqstream.asgi, iqstream_client`,
#               py.typed shipped, the `iqstream` command and `python -m iqstream_client` answer --help.
# (The Java publisher, clients/java, is published by Maven: `mvn -pl clients/java install` is the maven suite's.)
# Caches: npm's own (~/.npm), pip downloads in $IQSTREAM_PIP_CACHE (default ~/.cache/iqstream-pip).
# Exit 77 (skipped, with the reason) when no Python >= 3.10 with venv is found; node/npm are required.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=$(mktemp -d "${TMPDIR:-/tmp}/iqstream-packages.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null || ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "SKIPPED packages suite: no Python >= 3.10 at '$python' (set PYTHON)" >&2
  exit 77
fi
command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are required"

# ---- JavaScript ----
packages=(js resumable-stream tanstack-ai copilotkit)
mkdir -p "$work/tarballs" "$work/project"
tarballs=()
for dir in "${packages[@]}"; do
  name=$(cd "$ROOT/clients/$dir" && npm pack --silent --pack-destination "$work/tarballs" | tail -1)
  tarball="$work/tarballs/$name"
  [ -f "$tarball" ] || fail "npm pack of clients/$dir made no tarball"
  manifest=$(tar -xOzf "$tarball" package/package.json)
  if grep -Eq '"(file|link):' <<<"$manifest"; then
    fail "clients/$dir's packed package.json names a local path a registry user cannot resolve: $(grep -E '"(file|link):' <<<"$manifest")"
  fi
  echo "packed clients/$dir -> $name ($(tar -tzf "$tarball" | wc -l) files)"
  tarballs+=("$tarball")
done
(cd "$work/project" && npm init -y >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error --prefer-offline "${tarballs[@]}")
# every entry point each package exports, imported by name from the fresh project
cat >"$work/project/check.mjs" <<'EOF'
import { readFileSync } from "node:fs";
const names = ["@iqstream/client", "@iqstream/resumable-stream", "@iqstream/tanstack-ai", "@iqstream/copilotkit"];
for (const name of names) {
  const manifest = JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8"));
  for (const entry of Object.keys(manifest.exports ?? { ".": null })) {
    const specifier = entry === "." ? name : `${name}/${entry.slice(2)}`;
    const module = await import(specifier);
    const exported = Object.keys(module);
    if (exported.length === 0) throw new Error(`${specifier} exports nothing`);
    console.log(`import ${specifier}: ${exported.length} exports (${exported.slice(0, 4).join(", ")}...)`);
  }
  const link = readFileSync(`node_modules/${name}/package.json`, "utf8");
  if (/"(file|link):/.test(link)) throw new Error(`${name} installed with a local-path dependency`);
}
EOF
(cd "$work/project" && node check.mjs) || fail "a packed JavaScript client does not import from a fresh project"
[ ! -L "$work/project/node_modules/@iqstream/client" ] || fail "@iqstream/client was linked, not installed from its tarball"

# ---- Python ----
cache=${IQSTREAM_PIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iqstream-pip}
pip_install() { "$1/bin/python" -m pip install --quiet --disable-pip-version-check --cache-dir "$cache" "${@:2}"; }
"$python" -m venv "$work/build-venv" || { echo "SKIPPED packages suite: '$python -m venv' failed (apt-get install python3-venv)" >&2; exit 77; }
pip_install "$work/build-venv" -c "$ROOT/clients/python/tests/constraints.txt" build
cp -r "$ROOT/clients/python" "$work/python-src"  # build outside the tree: nothing left behind in it
rm -rf "$work/python-src/.venv-test" "$work/python-src/tests/agui-client/node_modules"
"$work/build-venv/bin/python" -m build --outdir "$work/dist" "$work/python-src" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "python -m build of clients/python failed"; }
wheel=$(ls "$work/dist"/iqstream-*-py3-none-any.whl)
sdist=$(ls "$work/dist"/iqstream-*.tar.gz)
echo "built $(basename "$wheel") and $(basename "$sdist")"
listing=$(unzip -l "$wheel")  # (not piped into grep -q: under pipefail its early exit would fail unzip)
grep -q 'iqstream/py.typed' <<<"$listing" || fail "the wheel has no iqstream/py.typed"
if grep -q ' tests/' <<<"$listing"; then fail "the wheel ships the tests"; fi
for artifact in "$wheel" "$sdist"; do
  venv="$work/venv-$(basename "$artifact" | tr -c 'a-zA-Z0-9\n' _)"
  "$python" -m venv "$venv"
  pip_install "$venv" "$artifact"
  (cd "$work" && "$venv/bin/python" - <<'EOF'
import importlib.resources, sys
import iqstream, iqstream.asgi, iqstream_client
from iqstream import AsyncClient, IqStreamClient
from iqstream.asgi import ResumableAGUI
assert iqstream_client.IqStreamClient is IqStreamClient
assert "site-packages" in iqstream.__file__, iqstream.__file__
assert importlib.resources.files("iqstream").joinpath("py.typed").is_file(), "py.typed missing"
print(f"import iqstream {iqstream.__version__} from {iqstream.__file__} (Python {sys.version.split()[0]})")
EOF
  ) || fail "the package installed from $(basename "$artifact") does not import"
  help=$("$venv/bin/iqstream" --help) && grep -q 'publish' <<<"$help" || fail "the iqstream command does not answer --help"
  help=$(cd "$work" && "$venv/bin/python" -m iqstream_client --help) && grep -q 'pipe-agent' <<<"$help" ||
    fail "python -m iqstream_client does not answer --help"
  echo "installed $(basename "$artifact") into a fresh venv: imports, py.typed, iqstream --help"
done
echo "packages: every client package installs from its packed artifact"

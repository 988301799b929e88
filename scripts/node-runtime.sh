#!/usr/bin/env bash
# Prints the bin folder of a Node 24 the project runs on, installing it first if needed.
# The machine's node wins when it is 24 or newer; otherwise the `node-linux-<arch>` package of
# the version in .node-version is installed into .runtime/ (it also ships the headers that
# native modules build against: npm_config_nodedir points at its folder, see the Makefile).
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(cat .node-version)
major=${want%%.*}
have=$(node -p 'process.versions.node' 2>/dev/null || echo 0)
if [ "${have%%.*}" -ge "$major" ] && [ "${NODE_RUNTIME_FORCE:-0}" != 1 ]; then
  dirname "$(command -v node)"; exit 0
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
dir="$(pwd)/.runtime/node-$want-$arch"
pkg="$dir/node_modules/node-linux-$arch"
if [ ! -x "$pkg/bin/node" ]; then
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  npm install --prefix "$dir.tmp" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
    "node-linux-$arch@$want" >&2
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
fi
echo "$pkg/bin"

#!/usr/bin/env bash
# Makes, on this machine, the stand-in for the official node:24-bookworm-slim image that
# deploy/Dockerfile starts from elsewhere (no registry image can be pulled here): a Debian
# bookworm root made by debootstrap from the mirror in /etc/apt/sources.list, plus Node (the
# version in .node-version, from the npm registry's node-linux-<arch> package, headers included)
# and npm in /usr/local, where the official image has them. Prints the image name.
#
# The root file system is cached as .tmp/image-base/<arch>/rootfs.tar; the image is committed to
# buildah's storage (vfs driver) once and reused. `make clean` removes the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
node_version=$(cat .node-version)
case "$(uname -m)" in
  x86_64) arch=x64 debarch=amd64 ;;
  aarch64|arm64) arch=arm64 debarch=arm64 ;;
  *) echo "no bookworm base for $(uname -m)" >&2; exit 1 ;;
esac
image="localhost/toamaisutaa-base:bookworm-node${node_version}-${debarch}"
buildah=(buildah --storage-driver vfs)
if "${buildah[@]}" inspect --type image "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi

cache=".tmp/image-base/$debarch"
tarball="$cache/rootfs.tar"
if [ ! -s "$tarball" ]; then
  mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | awk '{print $2}' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  root="$cache/rootfs"
  rm -rf "$root" && mkdir -p "$root"
  echo "debootstrap bookworm ($debarch) from $mirror" >&2
  debootstrap --variant=minbase --arch="$debarch" bookworm "$root" "$mirror" >&2
  # The same sources the official image has: bookworm, its updates and security.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: ${mirror%/}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/}-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
  # Node and its headers (native modules build against them), then npm, as in the official image.
  node_bin=$(NODE_RUNTIME_FORCE=1 scripts/node-runtime.sh)
  cp -a "$node_bin/../bin" "$node_bin/../include" "$node_bin/../share" "$root/usr/local/"
  npm_version=$(npm --version)
  npm install --global --prefix "$root/usr/local" --no-audit --no-fund "npm@$npm_version" >&2
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  tar -C "$root" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf "$root"
fi

ctr=$("${buildah[@]}" from scratch)
trap '"${buildah[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
"${buildah[@]}" add "$ctr" "$tarball" / >&2
"${buildah[@]}" config --arch "$debarch" --os linux --env NODE_VERSION="$node_version" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
"${buildah[@]}" commit --quiet --format docker "$ctr" "$image" >&2
echo "$image"

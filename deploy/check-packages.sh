#!/usr/bin/env bash
# Checks that the Debian packages deploy/Dockerfile installs, in each of its stages, resolve in
# bookworm (with its updates and security) for every architecture the image is built for:
# apt-get --simulate from an empty system, with the whole dependency closure, against the
# mirror in this machine's sources; and that the npm registry has the Node of .node-version for
# it (the local base's node-linux-<arch>). Needs no emulator and no image: seconds per arch.
#   deploy/check-packages.sh [ARCH ...]   (default: amd64 arm64)
set -euo pipefail
cd "$(dirname "$0")/.."
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64 arm64)
mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
  | awk '{print $2}' | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}

# Each stage's `apt-get install` line(s) of the Dockerfile, continuation lines joined.
mapfile -t stages < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' deploy/Dockerfile \
  | grep -oE 'apt-get install [^&]*' | sed -E 's/apt-get install//; s/(^| )-[^ ]+//g; s/  +/ /g; s/^ //; s/ $//')
[ ${#stages[@]} -gt 0 ] || { echo "no apt-get install in deploy/Dockerfile" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for arch in "${arches[@]}"; do
  dir="$work/$arch"
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts"
  : >"$dir/status"
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
    "$mirror" "$mirror" "$mirror" >"$dir/sources.list"
  apt=(apt-get -q -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "Dir::State::status=$dir/status"
    -o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=$dir/parts"
    -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$dir/parts")
  case "$arch" in amd64) node_arch=x64 ;; arm64) node_arch=arm64 ;; *) node_arch=$arch ;; esac
  node_version=$(cat .node-version)
  if [ "$(npm view "node-linux-$node_arch@$node_version" version 2>/dev/null)" = "$node_version" ]; then
    echo "npm/$arch: node-linux-$node_arch@$node_version"
  else
    echo "npm/$arch: no node-linux-$node_arch@$node_version" >&2; status=1
  fi
  "${apt[@]}" update >"$dir/update.log" 2>&1 || { cat "$dir/update.log" >&2; exit 1; }
  for packages in "${stages[@]}"; do
    # shellcheck disable=SC2086 # a list of package names
    if out=$("${apt[@]}" --simulate --no-install-recommends install $packages 2>&1); then
      echo "bookworm/$arch: $packages: $(grep -c '^Inst' <<<"$out") packages with dependencies"
    else
      echo "bookworm/$arch: $packages: does not resolve" >&2
      grep -E '^E:|has no installation candidate|Depends:' <<<"$out" >&2 || tail -5 <<<"$out" >&2
      status=1
    fi
  done
done
exit $status

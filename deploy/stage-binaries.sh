#!/usr/bin/env bash
# Puts the services of a build made on this machine where the Dockerfile's `prebuilt` binaries come from
# (.local/image/app): every executable product of Package.swift, its resource bundles, and the Swift runtime
# libraries the executables load from the toolchain. Then `SWIFT_BINARIES=prebuilt docker compose build` makes the
# images from them instead of compiling again (scripts/test does so with its own debug build).
#
#   deploy/stage-binaries.sh [debug|release]     (default debug; the build must exist: swift build -c CONFIGURATION)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONFIGURATION=${1:-debug}
cd "$ROOT"

die() { echo "stage-binaries: $*" >&2; exit 1; }

bin=$(swift build -c "$CONFIGURATION" --show-bin-path)
products=$(swift package dump-package |
  python3 -c 'import json, sys; print(" ".join(p["name"] for p in json.load(sys.stdin)["products"] if "executable" in p["type"]))')
stage=$ROOT/.local/image/app
rm -rf "$stage"
mkdir -p "$stage"
for name in $products; do
  [[ -x $bin/$name ]] || die "$bin/$name is missing: run swift build -c $CONFIGURATION first"
  # Without their debug information, which is most of a debug build's size.
  strip --strip-debug -o "$stage/$name" "$bin/$name"
done
cp -R "$bin"/*.resources "$stage/"

# The toolchain's libraries the executables load (Foundation, the Swift runtime, ...): beside them, where their
# run path ($ORIGIN) finds them. Debian's own libraries come from the image's packages.
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
for name in $products; do
  ldd "$stage/$name" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while read -r library; do
  [[ $(readlink -f "$library") == "$toolchain"/* ]] && cp -L "$library" "$stage/"
done
echo "staged $(wc -w <<<"$products") executables ($CONFIGURATION) in $stage" >&2

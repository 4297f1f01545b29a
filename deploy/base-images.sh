#!/usr/bin/env bash
# The two images every Dockerfile here starts from, and where they come from:
#   BASE_IMAGE    Debian bookworm          official: debian:bookworm-slim
#   SWIFT_IMAGE   Swift 6.3 on bookworm    official: swift:6.3-bookworm   (only to compile the services)
# With the official images reachable it only pulls them. Where they cannot be pulled (no Docker Hub) it makes both
# here: Debian with debootstrap from Debian's archive, imported; Swift from that Debian and this machine's own
# toolchain (the one `swift` runs from), with this machine's copies of the Swift packages when git reads GitHub from
# a local folder. Either way it writes the two names into the project's .env, from which docker-compose.yml passes
# them to every build as build arguments: the Dockerfiles stay as they are.
#
#   deploy/base-images.sh [--local] [--rebuild] [PROJECT_DIR]
#     --local     make the local images without trying to pull the official ones
#     --rebuild   make the local images again even if they exist
set -euo pipefail

LOCAL_BASE=tarrare-local/debian:bookworm-slim
LOCAL_SWIFT=tarrare-local/swift:6.3-bookworm
OFFICIAL_BASE=debian:bookworm-slim
OFFICIAL_SWIFT=swift:6.3-bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

local_only=false rebuild=false root=""
for argument in "$@"; do
  case $argument in
    --local) local_only=true ;;
    --rebuild) rebuild=true ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) root=$argument ;;
  esac
done
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# install_packages, as scripts/up installs what it needs (apt-get as root, or through sudo).
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
die() { echo "base-images: $*" >&2; exit 1; }

docker info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd, or check DOCKER_HOST)"

# set_env NAME VALUE: NAME=VALUE in the project's .env, replacing an earlier value.
set_env() {
  local file=$root/.env
  touch "$file"
  if grep -q "^$1=" "$file"; then
    sed -i "s|^$1=.*|$1=$2|" "$file"
  else
    echo "$1=$2" >>"$file"
  fi
}

has_image() { docker image inspect "$1" >/dev/null 2>&1; }

if ! $local_only && docker pull -q "$OFFICIAL_BASE" >/dev/null 2>&1 && docker pull -q "$OFFICIAL_SWIFT" >/dev/null 2>&1; then
  log "the official images are reachable: $OFFICIAL_BASE, $OFFICIAL_SWIFT"
  set_env BASE_IMAGE "$OFFICIAL_BASE"
  set_env SWIFT_IMAGE "$OFFICIAL_SWIFT"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"; docker rm -f tarrare-swift-image >/dev/null 2>&1 || true' EXIT

if $rebuild || ! has_image "$LOCAL_BASE"; then
  command -v debootstrap >/dev/null || install_packages debootstrap ||
    die "debootstrap is needed and could not be installed (apt-get install debootstrap)"
  log "making $LOCAL_BASE with debootstrap from $MIRROR"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap of bookworm failed"; }
  # As the official image: updates and security fixes too, no recommended packages, no documentation kept.
  cat >"$work/rootfs/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$work/rootfs/etc/apt/apt.conf.d/90slim"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | docker import --change 'CMD ["bash"]' - "$LOCAL_BASE" >/dev/null
fi

if $rebuild || ! has_image "$LOCAL_SWIFT"; then
  swift=$(command -v swift) || die "no Swift toolchain on this machine to make $LOCAL_SWIFT from"
  toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$swift")")")")
  [[ -x $toolchain/usr/bin/swiftc ]] || die "cannot find the toolchain of $swift (looked in $toolchain)"
  # A local folder git reads GitHub from (set as url.<folder>.insteadOf): the build inside resolves from it too.
  packages=$(git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null |
    awk '$2 == "https://github.com/" { sub(/^url\./, "", $1); sub(/\.insteadof$/, "", $1); print $1; exit }')
  mounts=(-v "$toolchain:/mnt/toolchain:ro")
  copy_packages=:
  if [[ -n $packages && -d $packages ]]; then
    mounts+=(-v "$packages:/mnt/packages:ro")
    copy_packages="mkdir -p '$packages' && cp -a /mnt/packages/. '$packages/' && git config --system url.'$packages'.insteadOf https://github.com/"
  fi
  log "making $LOCAL_SWIFT from $LOCAL_BASE and the toolchain in $toolchain"
  # The packages the official image installs for its toolchain.
  docker run --name tarrare-swift-image "${mounts[@]}" "$LOCAL_BASE" bash -euc "
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev \
      libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata unzip zlib1g-dev \
      ca-certificates >/dev/null
    rm -rf /var/lib/apt/lists/*
    mkdir -p /opt/swift && cp -a /mnt/toolchain/. /opt/swift/
    $copy_packages
  " >"$work/swift.log" 2>&1 || { tail -n 20 "$work/swift.log" >&2; die "making the Swift image failed"; }
  docker commit --change 'ENV PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' tarrare-swift-image "$LOCAL_SWIFT" >/dev/null
fi

set_env BASE_IMAGE "$LOCAL_BASE"
set_env SWIFT_IMAGE "$LOCAL_SWIFT"
log "base images: $LOCAL_BASE and $LOCAL_SWIFT (named in $root/.env)"

#!/usr/bin/env bash
# Runs deploy/swarm/stack.yml as a Docker Swarm of three hosts, then loses one of them while deliveries and chats go
# on: afterwards every message a sender was told was sent has reached its recipient exactly once, every feed is
# gapless, and deliveries went on after the host was gone.
#
# A host here is a Docker engine in a network namespace of its own (10.213.0.11, .12 and .13 on a bridge of this
# machine), with its own data: the images the compose build made are loaded into each. The three are swarm managers,
# so that two keep the swarm's quorum. Host 1 runs PostgreSQL and a broker node, hosts 2 and 3 a broker node each, and
# every service has a replica on two of them. Host 3 is lost: its link goes down and every process of it is killed.
#
#   deploy/swarm/test.sh           up, the test, down (needs root, a Docker engine with the images, deploy/secrets)
#   deploy/swarm/test.sh up        only start the three hosts and deploy the stack (then TARRARE_GATEWAY=…)
#   deploy/swarm/test.sh down      stop and remove the three hosts and everything of theirs
#   deploy/swarm/test.sh lose N    lose host N now
# TARRARE_TAG picks the images (default latest: docker compose build makes them).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
cd "$ROOT"

NET=10.213.0
BRIDGE=tsw0
STATE=/var/lib/tarrare-swarm
RUNTIME=/run/tarrare-swarm
TAG=${TARRARE_TAG:-latest}
IMAGES=(tarrare tarrare-postgres tarrare-rabbitmq tarrare-gateway tarrare-coturn)
STACK=tarrare

engine() {
  local host=$1
  shift
  docker -H "unix://$RUNTIME/h$host/docker.sock" "$@"
}

# kill_host N: every process of host N killed at once, as when its power goes: its containers, their shims, its
# containerd and its engine.
kill_host() {
  local host=$1 pids
  pids=$(engine "$host" ps -q 2>/dev/null | xargs -r docker -H "unix://$RUNTIME/h$host/docker.sock" inspect \
    --format '{{.State.Pid}}' 2>/dev/null | grep -v '^0$' || true)
  pids+=" $(ip netns pids "tsw-h$host" 2>/dev/null | xargs || true)"
  # shellcheck disable=SC2086 # a list of pids
  [[ -z ${pids// /} ]] || kill -9 $pids 2>/dev/null || true
  # NB: the shims are in this machine's namespace; they are children of the engine's containerd, now gone.
  pkill -9 -f "containerd-shim.*$RUNTIME/h$host/" 2>/dev/null || true
}

down() {
  local host
  for host in 1 2 3; do
    kill_host "$host"
    ip netns del "tsw-h$host" 2>/dev/null || true
    # NB: the pair goes with this end, also while something still holds the namespace of the other.
    ip link del "tsw-h$host" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  while iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; do :; done
  # The engines' mounts (their containers' file systems, their network namespaces), innermost first.
  awk -v state="$STATE" -v runtime="$RUNTIME" 'index($2, state) == 1 || index($2, runtime) == 1 { print $2 }' \
    /proc/mounts | sort -r | xargs -r -n 1 umount -l 2>/dev/null || true
  rm -rf "$STATE" "$RUNTIME"
}

start_host() {
  local host=$1 namespace=tsw-h$1 i
  ip netns add "$namespace"
  ip link add "tsw-h$host" type veth peer name eth0 netns "$namespace"
  ip link set "tsw-h$host" master "$BRIDGE" up
  ip -n "$namespace" addr add "$NET.1$host/24" dev eth0
  ip -n "$namespace" link set eth0 up
  ip -n "$namespace" link set lo up
  ip -n "$namespace" route add default via "$NET.1"
  mkdir -p "$STATE/h$host" "$RUNTIME/h$host"
  # NB: nsenter, not ip netns exec: that remounts /sys, without the cgroups an engine needs.
  nsenter --net="/run/netns/$namespace" setsid dockerd --data-root "$STATE/h$host" --exec-root "$RUNTIME/h$host/exec" \
    -H "unix://$RUNTIME/h$host/docker.sock" --pidfile "$RUNTIME/h$host/docker.pid" --storage-driver overlay2 \
    >"$LOGS/swarm-h$host.log" 2>&1 </dev/null &
  disown
  for ((i = 0; i < 120; i++)); do
    engine "$host" info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  show_log_tail "$LOGS/swarm-h$host.log"
  die "host $host's Docker engine did not start"
}

up() {
  is_root || die "the hosts are network namespaces: run it as root"
  local secret
  for secret in .env deploy/secrets/{jwt-public.pem,jwt-private.pem,turn-secret,vapid-private.pem,erlang-cookie}; do
    [[ -f $secret ]] || die "no $secret: run deploy/make-secrets.sh first"
  done
  start_docker
  local image host
  for image in "${IMAGES[@]}"; do
    docker image inspect "$image:$TAG" >/dev/null 2>&1 ||
      die "no image $image:$TAG: build them first (docker compose build, TARRARE_TAG=$TAG)"
  done
  down
  mkdir -p "$STATE" "$RUNTIME" "$LOGS"
  ip link add "$BRIDGE" type bridge
  ip addr add "$NET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # NB: with the bridge netfilter on, what crosses the bridge meets the FORWARD chain that dockerd closed.
  iptables -I FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
  log "saving the images"
  docker save -o "$STATE/images.tar" "${IMAGES[@]/%/:$TAG}"
  for host in 1 2 3; do
    log "starting host $host ($NET.1$host) and loading the images into it"
    start_host "$host"
    engine "$host" load -q -i "$STATE/images.tar" >/dev/null
  done
  rm -f "$STATE/images.tar"

  log "making the swarm: three managers"
  engine 1 swarm init --advertise-addr "$NET.11" --listen-addr "$NET.11:2377" \
    --default-addr-pool 10.214.0.0/16 >/dev/null
  local token
  token=$(engine 1 swarm join-token -q manager)
  for host in 2 3; do
    engine "$host" swarm join --token "$token" --advertise-addr "$NET.1$host" --listen-addr "$NET.1$host:2377" \
      "$NET.11:2377" >/dev/null
  done
  engine 1 node update --label-add tarrare.postgres=true --label-add tarrare.broker=1 --label-add tarrare.turn=true \
    "$(engine 1 info --format '{{.Swarm.NodeID}}')" >/dev/null
  for host in 2 3; do
    engine 1 node update --label-add "tarrare.broker=$host" "$(engine "$host" info --format '{{.Swarm.NodeID}}')" \
      >/dev/null
  done

  log "deploying the stack"
  (
    set -a
    source .env
    set +a
    # NB: every test client reaches accounts from this machine's one address.
    TARRARE_TAG=$TAG SIGNUP_MAX_PER_ADDRESS=1000000 PUBLIC_URL="http://$NET.11:8080" TURN_EXTERNAL_IP="$NET.11" \
      engine 1 stack deploy --resolve-image never -c deploy/swarm/stack.yml "$STACK" >/dev/null
  )
  log "waiting for every replica, the import and the three gateways"
  local i
  for ((i = 0; i < 600; i++)); do
    if converged && imported && gateways_answer; then
      engine 1 service ls --format '  {{.Name}} {{.Mode}} {{.Replicas}}' >&2
      return 0
    fi
    sleep 1
  done
  engine 1 service ls >&2 || true
  engine 1 service ps --no-trunc "$STACK"_places-import >&2 || true
  die "the stack did not come up within ten minutes"
}

# converged: every replicated service runs all its replicas, and the gateway runs on every host.
converged() {
  engine 1 service ls --format '{{.Name}} {{.Replicas}}' | grep -v "_places-import " |
    awk '{ split($2, r, "/"); if (r[1] != r[2] || r[2] == 0) bad = 1 } END { exit bad }'
}

imported() {
  engine 1 service ps "$STACK"_places-import --format '{{.CurrentState}}' | grep -q '^Complete'
}

gateways_answer() {
  local host
  for host in 1 2 3; do
    curl -fsS -o /dev/null --max-time 3 "http://$NET.1$host:8080/v1/campuses" || return 1
  done
}

run() {
  up
  trap down EXIT
  python3 -m pip install -q --disable-pip-version-check -r Tests/System/requirements.txt
  log "deliveries and chats through host 1's gateway; host 3 lost under them"
  # NB: the system tests' fixtures read the databases' addresses from TARRARE_SYSTEM_ENV; these tests need none.
  echo '{}' >"$STATE/system.json"
  TARRARE_SYSTEM_ENV="$STATE/system.json" TARRARE_GATEWAY="http://$NET.11:8080" SWARM_LOSE_HOST="$0 lose 3" \
    SWARM_STATUS="$0 status" \
    python3 -m pytest -q -p no:cacheprovider -s Tests/System/swarm_lose_a_host.py
  engine 1 node ls >&2
  engine 1 service ls --format '  {{.Name}} {{.Replicas}}' >&2
}

case ${1:-run} in
  run) run ;;
  up) up ;;
  down) down ;;
  lose)
    [[ ${2:-} =~ ^[123]$ ]] || die "usage: $0 lose 1|2|3"
    # The host drops off the network first, then everything on it dies.
    ip link set "tsw-h$2" down
    kill_host "$2"
    log "host $2 lost"
    ;;
  status)
    engine 1 node ls --format '{{.Hostname}} {{.Status}} {{.ManagerStatus}}'
    engine 1 service ls --format '{{.Name}} {{.Replicas}}'
    ;;
  *) die "usage: $0 [run|up|down|lose N|status]" ;;
esac

#!/bin/sh
# Writes coturn's configuration from the environment and starts it; `health` answers whether it answers a STUN
# binding request.
#   TURN_SECRET_FILE      the shared secret (chat's TURN_SECRET_FILE is the same file)
#   TURN_EXTERNAL_IP      the address clients reach the relay at (the host's public address)
#   TURN_MIN_PORT, TURN_MAX_PORT   the relay ports, published by the host as they are
#   TURN_REALM            tarrare
#   TLS_DIR               the gateway's certificate (cert.pem, key.pem; /etc/tarrare/tls): when it is there, TURN over
#                         TLS on 5349 too, for networks that let nothing but HTTPS out
#   TURN_ALLOW_LOOPBACK_PEERS   true: relaying to loopback addresses, where both callers are on one machine (tests only)
set -eu
TLS_DIR=${TLS_DIR:-/etc/tarrare/tls}
if [ "${1:-}" = health ]; then
  # NB: a lost binding request would leave the client waiting forever.
  exec timeout -s KILL 2 turnutils_stunclient 127.0.0.1 >/dev/null
fi
[ -s "${TURN_SECRET_FILE:-}" ] || { echo "coturn: no shared secret at TURN_SECRET_FILE (run deploy/make-secrets.sh)" >&2; exit 1; }
[ -n "${TURN_EXTERNAL_IP:-}" ] || { echo "coturn: TURN_EXTERNAL_IP is not set: the address clients reach the relay at" >&2; exit 1; }
if [ -f "$TLS_DIR/cert.pem" ] && [ -f "$TLS_DIR/key.pem" ] && ! [ -r "$TLS_DIR/key.pem" ]; then
  echo "coturn: $TLS_DIR/key.pem is there but the turnserver user cannot read it" >&2
  exit 1
fi
conf=/run/coturn/turnserver.conf
umask 077
{
  echo "listening-port=3478"
  echo "min-port=${TURN_MIN_PORT:-49160}"
  echo "max-port=${TURN_MAX_PORT:-49199}"
  echo "external-ip=$TURN_EXTERNAL_IP"
  echo "use-auth-secret"
  echo "static-auth-secret=$(cat "$TURN_SECRET_FILE")"
  echo "realm=${TURN_REALM:-tarrare}"
  echo "fingerprint"
  echo "no-cli"
  echo "no-multicast-peers"
  echo "no-dtls"
  # Never a relay into the containers' own networks, but to its own relays: when both callers relay, each one's peer
  # is the other's relay at TURN_EXTERNAL_IP, which coturn takes for its own address in the containers' network.
  echo "denied-peer-ip=10.0.0.0-10.255.255.255"
  echo "denied-peer-ip=172.16.0.0-172.31.255.255"
  echo "denied-peer-ip=192.168.0.0-192.168.255.255"
  for address in $(hostname -i); do echo "allowed-peer-ip=$address"; done
  [ "${TURN_ALLOW_LOOPBACK_PEERS:-false}" = true ] && echo "allow-loopback-peers"
  echo "simple-log"
  echo "log-file=stdout"
  if [ -f "$TLS_DIR/cert.pem" ] && [ -f "$TLS_DIR/key.pem" ]; then
    echo "tls-listening-port=5349"
    echo "cert=$TLS_DIR/cert.pem"
    echo "pkey=$TLS_DIR/key.pem"
  else
    echo "no-tls"
  fi
} >"$conf"
exec turnserver -c "$conf"

#!/usr/bin/env bash
# Creates what docker-compose.yml needs and git must never hold (both paths are in .gitignore):
#   .env                                       passwords; compose fills its ${...} references from them
#   deploy/secrets/jwt-private.pem             the Ed25519 key that signs access tokens (accounts only)
#   deploy/secrets/jwt-public.pem              its public half, with which every service verifies tokens
#   deploy/secrets/vapid-private.pem           the P-256 key of Web Push (notifications only)
#   deploy/secrets/apns-key.p8                 Apple's push key, when there are iOS apps (made empty: no APNs)
#   deploy/secrets/fcm-service-account.json    Google's service account key, when there are Android apps (made empty)
#   deploy/secrets/rabbitmq-definitions.json   the broker's users, one per service, with the passwords of .env
#   deploy/secrets/erlang-cookie               what the nodes of a RabbitMQ cluster share (deploy/rabbitmq-cluster.yml)
#   deploy/secrets/turn-secret                 what chat signs calls' TURN credentials with and coturn checks them with
#   deploy/secrets/tls/{cert,key}.pem          with --tls: a self-signed certificate for the gateway's HTTPS
# Running it again keeps every existing password and key and adds what is missing.
#
#   deploy/make-secrets.sh [--tls NAME[,NAME...]] [PROJECT_DIR]     (default: this checkout)
#     --tls   a self-signed certificate for these host names and IP addresses (and localhost) for HTTPS on a LAN,
#             e.g. --tls tarrare.lan,192.168.1.20; replaces an earlier one. A real certificate goes in the same two
#             files (cert.pem with its chain).
set -euo pipefail

tls_names=""
ROOT=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --tls) tls_names=${2:?--tls needs host names or addresses}; shift 2 ;;
    --tls=*) tls_names=${1#--tls=}; shift ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ROOT=$1; shift ;;
  esac
done
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SECRETS=$ROOT/deploy/secrets
ENV_FILE=$ROOT/.env
SERVICES=(accounts places matching chat notifications media)

command -v openssl >/dev/null || { echo "error: openssl is needed" >&2; exit 1; }

umask 077
mkdir -p "$SECRETS"
chmod 700 "$SECRETS"
if [[ ! -f $ENV_FILE ]]; then
  echo "# Written by deploy/make-secrets.sh for docker compose. Never commit it." >"$ENV_FILE"
fi

upper() { printf '%s' "$1" | tr '[:lower:]' '[:upper:]'; }

# add_password NAME: gives NAME a random value in .env unless it has one.
add_password() {
  grep -qs "^$1=" "$ENV_FILE" || echo "$1=$(openssl rand -hex 24)" >>"$ENV_FILE"
}

# value NAME: NAME's value in .env.
value() { sed -n "s/^$1=//p" "$ENV_FILE" | tail -n 1; }

add_password POSTGRES_PASSWORD
for service in "${SERVICES[@]}"; do
  add_password "$(upper "$service")_DB_PASSWORD"
  add_password "$(upper "$service")_AMQP_PASSWORD"
done

if [[ ! -s $SECRETS/jwt-private.pem ]]; then
  openssl genpkey -algorithm ed25519 -out "$SECRETS/jwt-private.pem"
  rm -f "$SECRETS/jwt-public.pem"
fi
if [[ ! -s $SECRETS/jwt-public.pem ]]; then
  openssl pkey -in "$SECRETS/jwt-private.pem" -pubout -out "$SECRETS/jwt-public.pem"
fi

# The P-256 key that signs this server's Web Push requests (VAPID); browsers subscribe with its public half.
[[ -s $SECRETS/vapid-private.pem ]] ||
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$SECRETS/vapid-private.pem" 2>/dev/null
# The apps' push keys come from Apple's and Google's consoles: put them in place of these empty files.
touch "$SECRETS/apns-key.p8" "$SECRETS/fcm-service-account.json"

[[ -s $SECRETS/erlang-cookie ]] || openssl rand -hex 32 >"$SECRETS/erlang-cookie"
# The secret chat signs calls' TURN credentials with, and coturn checks them with.
[[ -s $SECRETS/turn-secret ]] || openssl rand -hex 32 >"$SECRETS/turn-secret"

if [[ -n $tls_names ]]; then
  alt="DNS:localhost,IP:127.0.0.1"
  IFS=, read -r -a names <<<"$tls_names"
  for name in "${names[@]}"; do
    if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then alt+=",IP:$name"; else alt+=",DNS:$name"; fi
  done
  mkdir -p "$SECRETS/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 -subj "/CN=${names[0]}" \
    -addext "subjectAltName=$alt" -addext "extendedKeyUsage=serverAuth" \
    -keyout "$SECRETS/tls/key.pem" -out "$SECRETS/tls/cert.pem" 2>/dev/null
  chmod 755 "$SECRETS/tls"
  chmod 644 "$SECRETS/tls/key.pem" "$SECRETS/tls/cert.pem"
  echo "a self-signed certificate for $alt is in $SECRETS/tls/"
fi

# Written afresh each time from .env, so that both always agree. The passwords are hex: nothing to escape.
{
  echo '{'
  echo '  "vhosts": [{"name": "/"}],'
  echo '  "users": ['
  separator=","
  for i in "${!SERVICES[@]}"; do
    service=${SERVICES[$i]}
    ((i == ${#SERVICES[@]} - 1)) && separator=""
    printf '    {"name": "%s", "password": "%s", "tags": []}%s\n' \
      "$service" "$(value "$(upper "$service")_AMQP_PASSWORD")" "$separator"
  done
  echo '  ],'
  echo '  "permissions": ['
  separator=","
  for i in "${!SERVICES[@]}"; do
    service=${SERVICES[$i]}
    ((i == ${#SERVICES[@]} - 1)) && separator=""
    printf '    {"user": "%s", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}%s\n' \
      "$service" "$separator"
  done
  echo '  ]'
  echo '}'
} >"$SECRETS/rabbitmq-definitions.json.new"
mv "$SECRETS/rabbitmq-definitions.json.new" "$SECRETS/rabbitmq-definitions.json"

# NB: without swarm, compose mounts a secret with its file's own owner and mode, and the containers run as
# users of their own; so the files are readable by all, and the directory (700) keeps other local users out.
chmod 644 "$SECRETS/jwt-private.pem" "$SECRETS/jwt-public.pem" "$SECRETS/vapid-private.pem" \
  "$SECRETS/rabbitmq-definitions.json" "$SECRETS/erlang-cookie" "$SECRETS/apns-key.p8" \
  "$SECRETS/fcm-service-account.json" "$SECRETS/turn-secret"

echo "secrets are in $ENV_FILE and $SECRETS/"

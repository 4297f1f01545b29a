#!/bin/bash
# On an empty data directory: a cluster whose superuser `postgres` has POSTGRES_PASSWORD, password logins over TCP,
# and the scripts of /docker-entrypoint-initdb.d run once against it before it takes connections. Then the server
# runs in the foreground with the system's settings and the arguments given (`postgres -c name=value ...`).
set -euo pipefail
[[ ${1:-} == postgres ]] && shift

if [[ ! -s $PGDATA/PG_VERSION ]]; then
  [[ -n ${POSTGRES_PASSWORD:-} ]] || { echo "postgres: POSTGRES_PASSWORD must be set to make a new cluster" >&2; exit 1; }
  echo "postgres: making a new cluster in $PGDATA"
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  initdb -D "$PGDATA" -U postgres --pwfile="$password_file" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  {
    echo "listen_addresses = '*'"
    echo "password_encryption = 'scram-sha-256'"
  } >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # Set up on the socket alone: nothing reaches it over TCP until it is ready (the health check asks over TCP).
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  for script in /docker-entrypoint-initdb.d/*.sh; do
    [[ -f $script ]] || continue
    echo "postgres: running $script"
    bash "$script"
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi

# The system's settings (deploy/postgres/tarrare.conf, each with its reason), then those the command gives.
mapfile -t settings < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=[[:space:]]*/=/' -e 's/^/-c\n/' \
  /etc/postgresql/tarrare.conf)
exec postgres -D "$PGDATA" "${settings[@]}" "$@"

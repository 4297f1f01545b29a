#!/usr/bin/env bash
# Runs once, when the postgres container starts on an empty data volume (the image runs the files of
# /docker-entrypoint-initdb.d then): one login role and one database of the same name per service, with the
# password <SERVICE>_DB_PASSWORD from the environment, and the extensions that need a superuser.
# NB: it does not run again on an existing volume; changing a password there takes ALTER ROLE.
set -euo pipefail

SERVICES=(accounts places matching chat notifications media)

admin_psql() {
  psql -X -q -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" "$@"
}

for service in "${SERVICES[@]}"; do
  variable=$(printf '%s' "$service" | tr '[:lower:]' '[:upper:]')_DB_PASSWORD
  password=${!variable:-}
  if [[ -z $password ]]; then
    echo "init.sh: $variable must be set" >&2
    exit 1
  fi
  admin_psql --dbname postgres -v name="$service" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I', :'name') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'name') \gexec
ALTER ROLE :"name" WITH LOGIN PASSWORD :'password';
SELECT format('CREATE DATABASE %I OWNER %I', :'name', :'name')
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'name') \gexec
SQL
done

# postgis is not a trusted extension: the places and matching roles cannot create it themselves.
for database in places matching; do
  admin_psql --dbname "$database" <<'SQL'
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE EXTENSION IF NOT EXISTS citext;
SQL
done
admin_psql --dbname accounts -c 'CREATE EXTENSION IF NOT EXISTS citext'
# pgRouting routes over places' street network; like postgis, only a superuser creates it.
admin_psql --dbname places <<'SQL'
CREATE EXTENSION IF NOT EXISTS pgrouting;
SQL

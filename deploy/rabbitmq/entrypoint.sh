#!/bin/bash
# Writes the broker's configuration and runs it in the foreground as node rabbit@<host name>:
# - the users (one per service, no guest) from the definitions deploy/make-secrets.sh writes, mounted as a secret;
#   NB: with definitions to load RabbitMQ creates neither the guest user nor the default virtual host, so the
#   definitions declare "/" themselves;
# - logs to standard output;
# - the Erlang VM's flags of deploy/rabbitmq/erlang.args;
# - with RABBITMQ_CLUSTER_NODES (node names separated by spaces) a node of that cluster: a new node joins the first
#   of them it reaches (a new node waits for the first, RABBITMQ_SEED_WAIT_SECONDS at most), and a node that comes
#   back rejoins its cluster. The nodes share the Erlang cookie mounted at /run/secrets/erlang-cookie.
set -euo pipefail
DEFINITIONS=${RABBITMQ_DEFINITIONS:-/run/secrets/rabbitmq-definitions.json}
COOKIE=/run/secrets/erlang-cookie

[[ -r $DEFINITIONS ]] || { echo "rabbitmq: no readable definitions at $DEFINITIONS (run deploy/make-secrets.sh)" >&2; exit 1; }
{
  echo "load_definitions = $DEFINITIONS"
  echo "log.console = true"
  echo "log.console.level = info"
  echo "log.file = false"
  # NB: the first node starts the cluster, without asking the others: asking them took a new cluster minutes, since
  # they wait for it (below). Peer discovery is for new nodes only: one with data rejoins its cluster by itself.
  if [[ -n ${RABBITMQ_CLUSTER_NODES:-} && ${RABBITMQ_CLUSTER_NODES%% *} != "rabbit@$HOSTNAME" ]]; then
    echo "cluster_formation.peer_discovery_backend = classic_config"
    index=1
    for node in $RABBITMQ_CLUSTER_NODES; do
      echo "cluster_formation.classic_config.nodes.$index = $node"
      index=$((index + 1))
    done
  fi
} >/etc/rabbitmq/rabbitmq.conf

if [[ -e $COOKIE ]]; then
  [[ -r $COOKIE ]] || { echo "rabbitmq: $COOKIE is not readable" >&2; exit 1; }
  install -m 400 "$COOKIE" "$HOME/.erlang.cookie"
elif [[ -n ${RABBITMQ_CLUSTER_NODES:-} ]]; then
  echo "rabbitmq: a cluster node needs the Erlang cookie at $COOKIE (run deploy/make-secrets.sh)" >&2
  exit 1
fi

# A new node (no data yet) other than the cluster's first waits for the first to take connections, and so joins it:
# nodes started together each find no other yet and form a cluster of their own. Compose starts them in order itself
# (depends_on); a swarm starts them at once.
if [[ -n ${RABBITMQ_CLUSTER_NODES:-} ]]; then
  read -r first _ <<<"$RABBITMQ_CLUSTER_NODES"
  seed=${first#*@}
  if [[ $seed != "$HOSTNAME" && -z $(ls -A "$HOME/mnesia" 2>/dev/null) ]]; then
    for ((waited = 0; waited < ${RABBITMQ_SEED_WAIT_SECONDS:-300}; waited++)); do
      (exec 3<>"/dev/tcp/$seed/5672") 2>/dev/null && break
      sleep 1
    done
  fi
fi

RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="$(sed 's/#.*//' /etc/rabbitmq/erlang.args | xargs)"
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS
exec /usr/lib/rabbitmq/bin/rabbitmq-server

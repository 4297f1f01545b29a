"""The system on a three-node RabbitMQ cluster (deploy/rabbitmq-cluster.yml): every queue a quorum queue on all three
nodes; a node stopped while deliveries go on loses nothing and stops no flow; it comes back and rejoins."""

import json
from datetime import datetime, timezone

import pytest

from stack import Stack, delivery_pairs, eventually, system_modules

NODES = ["rabbit@rabbitmq", "rabbit@rabbitmq-2", "rabbit@rabbitmq-3"]


@pytest.fixture(scope="module")
def cluster():
    stack = Stack("tarrare-cluster", files=["deploy/rabbitmq-cluster.yml"])
    try:
        stack.compose("build", timeout=1800)
        stack.up()
        yield stack
    finally:
        stack.down()


def node_container(stack, service):
    return stack.containers(service)[0]


def running_nodes(stack, service):
    status = json.loads(stack.exec(node_container(stack, service), "rabbitmqctl", "-q", "cluster_status", "--formatter", "json"))
    return sorted(status["running_nodes"])


def queue_members(stack, service):
    """Each quorum queue's members and the nodes of them that are online, by queue name."""
    output = stack.exec(node_container(stack, service), "rabbitmqctl", "-q", "list_queues", "name", "type", "members",
                        "online", "--formatter", "json")
    return {queue["name"]: queue for queue in json.loads(output)}


def test_every_queue_is_a_quorum_queue_on_all_three_nodes(cluster):
    assert running_nodes(cluster, "rabbitmq") == NODES
    queues = queue_members(cluster, "rabbitmq-2")
    assert "chat.matching" in queues and "notifications.chat" in queues, sorted(queues)
    for name, queue in queues.items():
        if name.startswith("amq."):
            continue
        if queue["type"] == "quorum":
            assert sorted(queue["members"]) == NODES, (name, queue)
    services_queues = [q for q in queues.values() if "." in q["name"] and not q["name"].startswith("amq.")]
    durable = [q for q in services_queues if q["type"] == "quorum"]
    assert len(durable) >= 6, services_queues


def test_a_node_stopped_mid_traffic_loses_nothing_and_rejoins(cluster):
    _, traffic = system_modules(cluster)
    pairs = delivery_pairs(cluster)
    since = datetime.now(timezone.utc)
    with traffic.Traffic(pairs) as load:
        assert load.wait_for_deliveries(4, timeout=180), load.errors
        # The first node: the one every service was given first.
        cluster.compose("stop", "rabbitmq")
        assert load.wait_for_deliveries(6, timeout=240), load.errors
        assert running_nodes(cluster, "rabbitmq-2") == NODES[1:]
        cluster.compose("start", "rabbitmq")
        eventually(lambda: running_nodes(cluster, "rabbitmq-3") == NODES, timeout=120, what="the node to rejoin")
        assert load.wait_for_deliveries(4, timeout=180), load.errors
    assert load.errors == []
    traffic.verify(cluster.system_env(), pairs, since, timeout=180)
    eventually(
        lambda: all(sorted(q["online"]) == NODES for q in queue_members(cluster, "rabbitmq").values()
                    if q["type"] == "quorum"),
        timeout=120, what="every quorum queue to be online on all three nodes again")

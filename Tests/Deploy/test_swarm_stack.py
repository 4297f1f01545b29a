"""Checks deploy/swarm/stack.yml against docker-compose.yml and deploy/rabbitmq-cluster.yml, so that the swarm runs
what compose runs: the same services and images, each service's environment, health checks and secrets, a broker
node per host, every service found by DNS (this kernel has no IPVS for virtual IPs) and ports on the hosts' own
addresses. deploy/swarm/test.sh runs the stack itself over three engines and loses one; it is too heavy for every run.

    python3 -m pytest -q Tests/Deploy/test_swarm_stack.py
"""

import re
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
STACK = ROOT / "deploy" / "swarm" / "stack.yml"
SWIFT_SERVICES = ["accounts", "places", "matching", "chat", "notifications", "media"]
# A swarm takes no empty secret, and make-secrets.sh makes these two empty (the stack file says how to add them).
LEFT_OUT = {"APNS_KEY_FILE", "FCM_SERVICE_ACCOUNT_FILE"}


@cache
def stack():
    return yaml.safe_load(STACK.read_text())["services"]


@cache
def compose():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    cluster = yaml.safe_load((ROOT / "deploy" / "rabbitmq-cluster.yml").read_text())["services"]
    for name, overlay in cluster.items():
        base = services.setdefault(name, {})
        for key, value in overlay.items():
            if key == "environment":
                base["environment"] = {**(base.get("environment") or {}), **value}
            elif key != "depends_on":
                base[key] = value
    return services


def secret_names(service):
    return sorted(entry if isinstance(entry, str) else entry["source"] for entry in service.get("secrets") or [])


def test_the_stack_runs_every_service_compose_runs_with_its_image():
    assert sorted(stack()) == sorted(compose())
    for name, service in stack().items():
        assert service["image"] == compose()[name]["image"], name


def test_every_service_is_found_by_dns_and_publishes_on_its_hosts_own_port():
    for name, service in stack().items():
        assert service["deploy"]["endpoint_mode"] == "dnsrr", name
        for port in service.get("ports") or []:
            assert isinstance(port, dict) and port["mode"] == "host", (name, port)


def test_each_swift_service_has_composes_environment_and_knows_every_broker_node():
    for name in SWIFT_SERVICES + ["places-import"]:
        ours, theirs = stack()[name]["environment"], compose()[name]["environment"]
        assert set(theirs) - LEFT_OUT <= set(ours), (name, set(theirs) - LEFT_OUT - set(ours))
        user = "places" if name == "places-import" else name
        nodes = [re.match(rf"amqp://{user}:\$\{{\w+:\?\}}@([\w-]+):5672/%2F$", url) for url in
                 ours["AMQP_URL"].split(",")]
        assert all(nodes) and [node[1] for node in nodes] == ["rabbitmq", "rabbitmq-2", "rabbitmq-3"], name


def test_health_checks_are_composes_asking_whether_alive_rather_than_ready():
    # A swarm restarts what its check finds unhealthy: a service waiting for its database is alive, and the gateway
    # is checked by its own page, not by asking a service through it.
    for name, service in stack().items():
        theirs = (compose()[name].get("healthcheck") or {}).get("test")
        ours = (service.get("healthcheck") or {}).get("test")
        if name in SWIFT_SERVICES:
            theirs = [part.replace("/health/ready", "/health/live") for part in theirs]
        if name == "gateway":
            theirs = ["CMD", "curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/"]
        assert ours == theirs, name


def test_the_secrets_are_composes():
    for name, service in stack().items():
        missing = set(secret_names(compose()[name])) - set(secret_names(service)) - {"apns-key", "fcm-service-account"}
        assert not missing, (name, missing)


def test_each_broker_node_keeps_its_name_on_a_host_of_its_own():
    constraints = {}
    for name in ["rabbitmq", "rabbitmq-2", "rabbitmq-3"]:
        service = stack()[name]
        assert service["hostname"] == name
        assert service["environment"]["RABBITMQ_CLUSTER_NODES"] == compose()[name]["environment"][
            "RABBITMQ_CLUSTER_NODES"]
        constraints[name] = tuple(service["deploy"]["placement"]["constraints"])
    assert len(set(constraints.values())) == 3, constraints


def test_every_service_has_two_replicas_on_different_hosts_and_the_gateway_one_on_each():
    for name in SWIFT_SERVICES:
        deploy = stack()[name]["deploy"]
        assert deploy["replicas"] >= 2 and deploy["placement"]["max_replicas_per_node"] == 1, name
    assert stack()["gateway"]["deploy"]["mode"] == "global"

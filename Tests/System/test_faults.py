"""Faults on the running system while deliveries go on: afterwards every event reached every consumer exactly once
and every student's feed is gapless."""

import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import httpx
import pika
import pytest

from conftest import GATEWAY, ROOT, Student, database, eventually, restart
from traffic import Traffic, pairs_near_campus, verify

PAIRS = 4


@pytest.fixture(scope="module")
def pairs(system):
    return pairs_near_campus(PAIRS)


def infra(*arguments):
    subprocess.run([ROOT / "scripts" / "infra", *arguments], check=True, capture_output=True)


@contextmanager
def mid_flow(system, pairs, more=2 * PAIRS):
    """Deliveries going on: the block runs once some have finished; afterwards `more` must finish, none may fail,
    and `verify` checks what every consumer and every student got."""
    since = datetime.now(timezone.utc)
    with Traffic(pairs) as traffic:
        assert traffic.wait_for_deliveries(PAIRS), traffic.errors
        yield
        assert traffic.wait_for_deliveries(more, timeout=180), traffic.errors
    assert traffic.errors == []
    verify(system, pairs, since)


def pid(service):
    return int((ROOT / ".local" / "run" / f"{service}.pid").read_text())


def test_rabbitmq_stopped_and_started_mid_flow(system, pairs):
    with mid_flow(system, pairs):
        infra("stop", "rabbitmq")
        # NB: not a wait for a condition: how long the broker is down while the deliveries go on.
        time.sleep(5)
        infra("start", "rabbitmq")


@pytest.mark.parametrize("service", ["notifications", "chat", "matching"])
def test_a_consumer_killed_mid_flow_loses_and_repeats_nothing(system, pairs, service):
    with mid_flow(system, pairs):
        # Killed with work in hand: events applied but not yet acknowledged come again and the inbox drops them.
        killed = pid(service)
        os.kill(killed, signal.SIGKILL)
        assert eventually(lambda: not alive(killed), timeout=15), f"{service} did not die"
        restart(service)


def test_postgresql_restarted_mid_flow(system, pairs):
    with mid_flow(system, pairs):
        infra("stop", "postgres")
        # NB: not a wait for a condition: how long the database is down while the deliveries go on.
        time.sleep(3)
        infra("start", "postgres")


def test_a_service_stopped_gracefully_finishes_the_requests_in_flight(system, pairs):
    with mid_flow(system, pairs, more=PAIRS):
        # Sign-ups take a while (a slow password hash): a burst of them is in flight when accounts is told to stop.
        clients = [httpx.Client(base_url=GATEWAY, timeout=60) for _ in range(12)]
        start = threading.Barrier(len(clients) + 1)

        def sign_up(client):
            start.wait()
            email = f"late.{uuid.uuid4().hex[:12]}@helsinki.fi"
            return client.post("/v1/auth/signup", json={"email": email, "password": "correct horse battery", "name": "Late"})

        # NB: a sign-up records its throttle event before its hash: once all have, accounts holds every one of them.
        recorded = "SELECT count(*) FROM throttle_events WHERE starts_with(key, 'signup:') AND happened_at >= %s"
        with ThreadPoolExecutor(max_workers=len(clients)) as pool, database(system, "accounts") as accounts:
            began = accounts.execute("SELECT now()").fetchone()[0]
            signups = [pool.submit(sign_up, client) for client in clients]
            start.wait()
            assert eventually(lambda: accounts.execute(recorded, (began,)).fetchone()[0] >= len(clients),
                              timeout=60, interval=0.02), "the sign-ups never all reached accounts"
            os.kill(pid("accounts"), signal.SIGTERM)
            statuses = [future.result().status_code for future in signups]
        failed = [status for status in statuses if status != 201]
        assert failed == []
        assert eventually(lambda: not alive(pid("accounts")), timeout=15), "accounts did not stop"
        restart("accounts")


def test_a_poison_message_is_dead_lettered_and_the_rest_flows(system, pairs):
    broker = pika.BlockingConnection(pika.URLParameters(system["TEST_AMQP_URL"]))
    channel = broker.channel()
    depth = lambda queue: channel.queue_declare(queue, passive=True).method.message_count
    before = {queue: depth(queue) for queue in ("chat.matching.dead", "notifications.matching.dead")}
    with mid_flow(system, pairs, more=PAIRS):
        channel.basic_publish(
            "matching.events", "match.opened", b'{"match": "not one"',
            pika.BasicProperties(message_id=str(uuid.uuid4()), type="match.opened.v1", delivery_mode=2))
        assert eventually(lambda: all(depth(queue) == count + 1 for queue, count in before.items()), timeout=30), \
            {queue: depth(queue) for queue in before}
        broker.close()


def alive(process):
    try:
        os.kill(process, 0)
        return True
    except ProcessLookupError:
        return False

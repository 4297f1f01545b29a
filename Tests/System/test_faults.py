"""Faults on the running system while deliveries go on: afterwards every event reached every consumer exactly once
and every student's feed is gapless."""

import os
import signal
import subprocess
import time

import pytest

from conftest import ROOT, Student, eventually
from traffic import Pair, Traffic, verify

PAIRS = 4


@pytest.fixture(scope="module")
def pairs(system):
    """Students in pairs, each pair at its own restaurant near the campus heading to a building nearby."""
    scout = Student("Scout")
    centre = scout.get("/v1/places", q="porthania", kind="building", limit=1).json()["places"][0]
    near = lambda kind: scout.get(
        "/v1/places/nearby", lat=centre["latitude"], lon=centre["longitude"], radius=500, kind=kind, limit=20,
    ).json()["places"]
    restaurants, buildings = near("restaurant"), near("building")
    return [Pair(index, restaurants[index]["id"], buildings[index]["id"]) for index in range(PAIRS)]


def infra(*arguments):
    subprocess.run([ROOT / "scripts" / "infra", *arguments], check=True, capture_output=True)


def restart(service):
    subprocess.run([ROOT / "scripts" / "up", service], check=True, capture_output=True)


def pid(service):
    return int((ROOT / ".local" / "run" / f"{service}.pid").read_text())


def test_rabbitmq_stopped_and_started_mid_flow(system, pairs):
    with Traffic(pairs) as traffic:
        assert traffic.wait_for_deliveries(PAIRS), traffic.errors
        infra("stop", "rabbitmq")
        time.sleep(5)
        infra("start", "rabbitmq")
        assert traffic.wait_for_deliveries(2 * PAIRS, timeout=180), traffic.errors
    assert traffic.errors == []
    verify(system, pairs)


@pytest.mark.parametrize("service", ["notifications", "chat", "matching"])
def test_a_consumer_killed_mid_flow_loses_and_repeats_nothing(system, pairs, service):
    with Traffic(pairs) as traffic:
        assert traffic.wait_for_deliveries(PAIRS), traffic.errors
        # Killed with work in hand: events applied but not yet acknowledged come again and the inbox drops them.
        os.kill(pid(service), signal.SIGKILL)
        time.sleep(1)
        restart(service)
        assert traffic.wait_for_deliveries(2 * PAIRS, timeout=180), traffic.errors
    assert traffic.errors == []
    verify(system, pairs)


def test_postgresql_restarted_mid_flow(system, pairs):
    with Traffic(pairs) as traffic:
        assert traffic.wait_for_deliveries(PAIRS), traffic.errors
        infra("stop", "postgres")
        time.sleep(3)
        infra("start", "postgres")
        assert traffic.wait_for_deliveries(2 * PAIRS, timeout=180), traffic.errors
    assert traffic.errors == []
    verify(system, pairs)

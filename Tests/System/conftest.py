"""Shared pieces of the system tests: the running system (started by scripts/up), students who use it through
the gateway, sockets that record every frame they hear, and the mail the system sends (inbox.py)."""

import json
import os
import subprocess
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from websockets.sync.client import connect

from inbox import code_in, mail_to

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = os.environ.get("TARRARE_GATEWAY", "http://127.0.0.1:8080")
SERVICES = {"accounts": 8081, "places": 8082, "matching": 8083, "chat": 8084, "notifications": 8085, "media": 8086}


def eventually(condition, timeout=30.0, interval=0.1):
    """Calls `condition` until it returns something truthy; returns that, or the last falsy answer."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def infra_env():
    """The URLs and secrets of the local stack, as `scripts/infra env` prints them."""
    output = subprocess.run([ROOT / "scripts" / "infra", "env"], check=True, capture_output=True, text=True).stdout
    env = {}
    for line in output.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = value
    return env


def restart(*services, **environment):
    """Starts `services` again as scripts/test built them, with `environment` added and without any OTEL_ setting
    but those in it: a build's planning alone would keep a service down for half a minute."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    subprocess.run([ROOT / "scripts" / "up", *services], check=True, capture_output=True,
                   env={**env, **environment, "BUILD": "false"})


@pytest.fixture(scope="session")
def system():
    """The system the tests drive: the one scripts/up started, or the one whose gateway TARRARE_GATEWAY names with
    TARRARE_SYSTEM_ENV naming a JSON file of its database URLs (Tests/Containers' stacks). The tests refuse to run
    against nothing."""
    stack = os.environ.get("TARRARE_SYSTEM_ENV")
    try:
        if not stack:
            for service, port in SERVICES.items():
                httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=5).raise_for_status()
        httpx.get(f"{GATEWAY}/v1/campuses", timeout=5).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"the system is not running ({error}); start it with scripts/up")
    return json.loads(Path(stack).read_text()) if stack else infra_env()


class Socket:
    """A client's WebSocket on /v1/stream, read on a thread of its own; every text frame is kept, in order."""

    def __init__(self, token, after=0):
        url = GATEWAY.replace("http", "ws", 1) + f"/v1/stream?after={after}"
        self.connection = connect(url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10)
        self.frames = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for message in self.connection:
                if isinstance(message, str):
                    with self.lock:
                        self.frames.append(json.loads(message))
        except Exception:
            pass

    @property
    def entries(self):
        """The feed entries received (frames with a seq; typing hints have none)."""
        with self.lock:
            return [frame for frame in self.frames if "seq" in frame]

    def send(self, frame):
        self.connection.send(json.dumps(frame))

    def wait(self, predicate, timeout=30.0):
        """The first frame that satisfies `predicate`, waiting for it; None when none came."""
        def find():
            with self.lock:
                return next((frame for frame in self.frames if predicate(frame)), None)
        return eventually(find, timeout=timeout)

    def wait_for(self, type_, timeout=30.0, **data):
        """The first entry of `type_` whose data holds every given key and value; `match__matchId` names the key
        `matchId` inside `match`."""
        def holds(frame, path, value):
            found = frame.get("data", {})
            for key in path.split("__"):
                found = found.get(key) if isinstance(found, dict) else None
            return found == value
        return self.wait(
            lambda frame: frame.get("type") == type_ and all(holds(frame, key, value) for key, value in data.items()),
            timeout=timeout)

    def close(self):
        self.connection.close()
        self.thread.join(timeout=5)


class Student:
    """One student signed up through the gateway (their address proved with the code mailed, where the system asks
    for it), holding an access token and a refresh token."""

    password = "correct horse battery"

    def __init__(self, name, campus="helsinki.fi", mode=None):
        self.name = name
        self.email = f"{name.lower()}.{uuid.uuid4().hex[:10]}@{campus}"
        self.http = httpx.Client(base_url=GATEWAY, timeout=30)
        answer = self.http.post("/v1/auth/signup", json={"email": self.email, "password": self.password, "name": name})
        assert answer.status_code == 201, answer.text
        if answer.json().get("verificationRequired"):
            code = code_in(mail_to(self.email, "Confirm your email"))
            verified = self.http.post("/v1/auth/verify", json={"email": self.email, "code": code})
            assert verified.status_code == 200, verified.text
            answer = self.http.post("/v1/auth/login", json={"email": self.email, "password": self.password})
            assert answer.status_code == 200, answer.text
        self.token, self.refresh_token = answer.json()["accessToken"], answer.json()["refreshToken"]
        self.id = answer.json()["user"]["id"]
        self.http.headers["Authorization"] = f"Bearer {self.token}"
        if mode:
            answer = self.http.patch("/v1/me", json={"mode": mode})
            assert answer.status_code == 200, answer.text

    def get(self, path, **params):
        return self.http.get(path, params=params)

    def post(self, path, body=None):
        return self.http.post(path, json=body if body is not None else {})

    def when_known(self, method, path, body=None, expected=201, timeout=30.0):
        """Repeats a request that answers 404 until the other services' events have made its subject known."""
        def attempt():
            answer = self.http.request(method, path, json=body)
            return answer if answer.status_code != 404 else None
        answer = eventually(attempt, timeout=timeout)
        assert answer is not None, f"{method} {path} stayed 404"
        assert answer.status_code == expected, answer.text
        return answer

    def socket(self, after=0):
        return Socket(self.token, after=after)


def database(env, service):
    """A connection to a service's database, with autocommit."""
    import psycopg
    return psycopg.connect(env[f"{service.upper()}_POSTGRES_URL"], autocommit=True)


def find(student, query, kind):
    """The first place a student's search returns while typing `query`."""
    answer = student.get("/v1/places", q=query, kind=kind, limit=5)
    assert answer.status_code == 200, answer.text
    places = answer.json()["places"]
    assert places, f"nothing found for {query!r}"
    return places[0]


def quiet_restaurant(student, near, radius=600, shortest_name=0):
    """A restaurant within `radius` m of the place `near` where nobody is checked in and no order waits (the system may
    be in use), so that what a test orders there is offered to the test's own deliverer only."""
    busy = {entry["restaurant"]["id"] for entry in student.get("/v1/restaurants").json()["restaurants"]}
    eateries = student.get(
        "/v1/places/nearby", lat=near["latitude"], lon=near["longitude"], radius=radius, kind="restaurant", limit=50)
    assert eateries.status_code == 200, eateries.text
    for place in eateries.json()["places"]:
        if place["id"] in busy or len(place["name"]) < shortest_name:
            continue
        if not student.get("/v1/orders/open", restaurantId=place["id"], limit=1).json()["orders"]:
            return place
    raise AssertionError(f"every restaurant near {near['name']} is busy")


@contextmanager
def taken_delivery(deliverer, orderer, items):
    """A delivery under way: `deliverer`'s run at a quiet restaurant near Porthania, and `orderer`'s order there, taken
    from the open requests; as `porthania`, `restaurant`, `run_id`, `order` and `match_id`. The run is checked out at
    the end, however the test went."""
    porthania = find(orderer, "porthania", "building")
    restaurant = quiet_restaurant(deliverer, porthania)
    run_id = None
    try:
        run_id = deliverer.when_known(
            "POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": porthania["id"]}).json()["id"]
        order = orderer.when_known("POST", "/v1/orders", {
            "restaurantId": restaurant["id"], "destinationId": porthania["id"], "items": items}).json()
        taken = deliverer.post(f"/v1/orders/{order['id']}/take", {"runId": run_id})
        assert taken.status_code == 201, taken.text
        yield SimpleNamespace(
            porthania=porthania, restaurant=restaurant, run_id=run_id, order=order, match_id=taken.json()["id"])
    finally:
        if run_id:
            deliverer.http.delete(f"/v1/runs/{run_id}")

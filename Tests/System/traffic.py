"""Deliveries going on in the background while a test breaks something: pairs of students check in, order, accept,
chat and complete, over and over, retrying as a client would. Afterwards `verify` checks what every student
received and what every service consumed."""

import json
import threading
import time
import uuid

import httpx

from conftest import Student, database, eventually

# Which consumer takes which producer's events, as the services declare them; None is every type the producer
# publishes on its exchange (notifications takes every event and keeps those that name recipients).
BINDINGS = {
    ("matching", "accounts"): ["user.registered", "user.updated"],
    ("matching", "places"): ["place.upserted", "place.retired"],
    ("chat", "accounts"): ["user.registered", "user.updated"],
    ("chat", "matching"): ["match.opened", "match.closed"],
    ("notifications", "matching"): None,
    ("notifications", "chat"): None,
}

RETRYABLE = {429, 500, 502, 503, 504}


class Feed:
    """A polling client's view of one student's feed: entries after the last seq seen, page by page."""

    def __init__(self, student):
        self.student = student
        self.entries = []

    def poll(self):
        while True:
            after = self.entries[-1]["seq"] if self.entries else 0
            try:
                answer = self.student.http.get("/v1/notifications", params={"after": after, "limit": 500})
            except httpx.HTTPError:
                return
            if answer.status_code != 200:
                return
            page = answer.json()["entries"]
            self.entries.extend(page)
            if len(page) < 500:
                return

    def wait_for(self, type_, key, value, timeout=90.0):
        def find():
            self.poll()
            return next((e for e in self.entries if e["type"] == type_ and e["data"].get(key) == value), None)
        return eventually(find, timeout=timeout, interval=0.2)


class Pair:
    """An orderer and a deliverer doing one delivery after another at one restaurant."""

    def __init__(self, index, restaurant, destination):
        self.orderer = Student(f"Orderer{index}", mode="ordering")
        self.deliverer = Student(f"Deliverer{index}", mode="delivering")
        self.restaurant, self.destination = restaurant, destination
        self.feeds = {self.orderer.id: Feed(self.orderer), self.deliverer.id: Feed(self.deliverer)}
        # (recipient id, text) of every message whose sending the service confirmed.
        self.sent = []
        self.deliveries = 0
        self.missed = 0
        self.failures = []

    def call(self, student, method, path, body=None, done=(200, 201), deadline=120.0):
        """Sends a request until it gets an answer in `done`, retrying what a client retries (no answer, 5xx,
        429, and 404 while other services' events are still on their way). Returns the answer; records every
        failed attempt."""
        give_up = time.monotonic() + deadline
        while True:
            try:
                answer = student.http.request(method, path, json=body)
                if answer.status_code in done:
                    return answer
                failure = f"{method} {path}: {answer.status_code} {answer.text[:200]}"
                if answer.status_code not in RETRYABLE | {404}:
                    raise AssertionError(failure)
            except httpx.HTTPError as error:
                failure = f"{method} {path}: {type(error).__name__}"
            self.failures.append(failure)
            if time.monotonic() > give_up:
                raise AssertionError(f"gave up: {failure}")
            time.sleep(0.25)

    def deliver_once(self):
        orderer, deliverer = self.orderer, self.deliverer
        run = self.call(deliverer, "POST", "/v1/runs", {
            "id": str(uuid.uuid4()), "restaurantId": self.restaurant, "destinationId": self.destination}).json()
        order = self.call(orderer, "POST", "/v1/orders", {
            "id": str(uuid.uuid4()), "restaurantId": self.restaurant, "destinationId": self.destination,
            "items": "Soup of the day", "runId": run["id"]}).json()
        offer = self.feeds[deliverer.id].wait_for("offer.made", "orderId", order["id"])
        assert offer is not None, f"no offer for order {order['id']}"
        # A 409 is an accept whose first answer was lost (the order is matched) or an offer heard after its window
        # closed, as happens while the broker is away (the order is not): then this delivery is off.
        accepted = self.call(deliverer, "POST", f"/v1/offers/{offer['data']['offerId']}/accept", done=(200, 409))
        match_id = accepted.json()["id"] if accepted.status_code == 200 else \
            self.call(orderer, "GET", f"/v1/orders/{order['id']}").json().get("matchId")
        if match_id is None:
            self.call(orderer, "POST", f"/v1/orders/{order['id']}/cancel", done=(200, 409))
            self.call(deliverer, "DELETE", f"/v1/runs/{run['id']}", done=(200, 204, 404, 409))
            self.missed += 1
            return
        chat = f"/v1/conversations/{match_id}/messages"
        for sender, recipient in [(deliverer, orderer), (orderer, deliverer), (deliverer, orderer)]:
            text = f"{sender.name} says {uuid.uuid4().hex[:8]}"
            self.call(sender, "POST", chat, {"id": str(uuid.uuid4()), "text": text})
            self.sent.append((recipient.id, text))
        for student in (orderer, deliverer):
            self.call(student, "POST", f"/v1/matches/{match_id}/complete", done=(200, 409))
        self.call(deliverer, "DELETE", f"/v1/runs/{run['id']}", done=(200, 204, 404, 409))
        self.deliveries += 1


def pairs_near_campus(count):
    """`count` pairs of students, each pair at its own restaurant near the campus heading to a building nearby."""
    scout = Student("Scout")
    centre = scout.get("/v1/places", q="porthania", kind="building", limit=1).json()["places"][0]
    near = lambda kind: scout.get(
        "/v1/places/nearby", lat=centre["latitude"], lon=centre["longitude"], radius=500, kind=kind, limit=20,
    ).json()["places"]
    restaurants, buildings = near("restaurant"), near("building")
    return [Pair(index, restaurants[index]["id"], buildings[index]["id"]) for index in range(count)]


class Traffic:
    """`pairs` pairs delivering on threads until stopped."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.stopping = threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self._loop, args=(pair,), daemon=True) for pair in pairs]

    def _loop(self, pair):
        while not self.stopping.is_set():
            try:
                pair.deliver_once()
            except Exception as error:  # noqa: BLE001 - reported by stop()
                self.errors.append(f"{pair.deliverer.name}: {error}")
                return

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=300)

    def deliveries(self):
        return sum(pair.deliveries for pair in self.pairs)

    def wait_for_deliveries(self, count, timeout=120.0):
        """Waits until `count` more deliveries have finished; False if they did not."""
        target = self.deliveries() + count
        return eventually(lambda: self.deliveries() >= target or self.errors, timeout=timeout) and not self.errors


def feed_problems(entries):
    """What is wrong with one student's feed: a gap or repeat of seq, or the same entry twice."""
    problems = []
    seqs = [entry["seq"] for entry in entries]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"seqs are not 1...{len(seqs)}: {seqs}")
    seen = set()
    for entry in entries:
        key = (entry["type"], json.dumps(entry["data"], sort_keys=True))
        if key in seen:
            problems.append(f"entry repeated: {key}")
        seen.add(key)
    return problems


def verify(env, pairs, since, timeout=120.0):
    """Every event a producer wrote from `since` on reached each consumer bound to it, and each service applied it
    once; every student's feed is gapless with no repeats; every confirmed message reached its recipient exactly
    once."""
    def undelivered():
        missing = {}
        for (consumer, producer), types in BINDINGS.items():
            with database(env, producer) as source, database(env, consumer) as target:
                unsent = source.execute("SELECT count(*) FROM outbox_unsent u JOIN outbox o USING (seq) WHERE exchange IS NULL").fetchone()[0]
                ids = [row[0] for row in source.execute(
                    "SELECT id FROM outbox WHERE (%s::text[] IS NULL OR type = ANY(%s)) AND exchange IS NULL"
                    " AND created_at >= %s", (types, types, since))]
                received = {row[0] for row in target.execute("SELECT message_id FROM inbox WHERE message_id = ANY(%s)", (ids,))}
                lost = sorted(str(id) for id in set(ids) - received)
                if unsent or lost:
                    missing[f"{consumer}.{producer}"] = {"unsent": unsent, "not received": lost[:10]}
        return missing
    consumed = eventually(lambda: not undelivered(), timeout=timeout, interval=1)
    assert consumed, f"events not consumed: {undelivered()}"

    with database(env, "notifications") as feed:
        gaps = feed.execute(
            "SELECT user_id FROM feed GROUP BY user_id HAVING count(*) <> max(seq) OR min(seq) <> 1").fetchall()
        repeats = feed.execute(
            # NB: entries that quoted a person who deleted their account are all alike, with no data.
            "SELECT user_id, type, data FROM feed WHERE type <> 'entry.removed'"
            " GROUP BY user_id, type, data HAVING count(*) > 1").fetchall()
    assert gaps == [], f"feeds with gaps: {gaps}"
    assert repeats == [], f"feed entries applied twice: {repeats}"
    verify_feeds(pairs)


def verify_feeds(pairs):
    """Every student's feed, read through the gateway, is gapless with no repeats, and every confirmed message
    reached its recipient exactly once."""
    for pair in pairs:
        for student_id, feed in pair.feeds.items():
            feed.poll()
            assert feed_problems(feed.entries) == [], f"{student_id}: {feed_problems(feed.entries)}"
        for recipient, text in pair.sent:
            arrived = [e for e in pair.feeds[recipient].entries if e["type"] == "message.sent" and e["data"]["text"] == text]
            assert len(arrived) == 1, f"{text!r} reached its recipient {len(arrived)} times"

"""Account deletion through the gateway of the system scripts/up started: a student who used all four apps deletes
their account, and afterwards no database of any service (outbox and inbox included) and no queue of the broker holds
their email, their name, their bio, the text of a message they wrote, or their photo; the others keep their own."""

import urllib.parse
import uuid

import httpx

from conftest import GATEWAY, ROOT, Student, database, eventually, find, quiet_restaurant

SERVICES = ["accounts", "places", "matching", "chat", "notifications", "media"]


def rows_containing(system, traces):
    """Every row of every service's tables whose text holds one of `traces`, as `service.table: row`."""
    found = []
    for service in SERVICES:
        with database(system, service) as connection:
            tables = [row[0] for row in connection.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")]
            for table in tables:
                rows = connection.execute(
                    f'SELECT t::text FROM "{table}" t WHERE EXISTS ('
                    " SELECT 1 FROM unnest(%s::text[]) AS x(trace) WHERE strpos(lower(t::text), lower(x.trace)) > 0)",
                    (traces,))
                found += [f"{service}.{table}: {row[0][:300]}" for row in rows]
    return found


def queued_containing(system, traces):
    """Every message waiting in any queue of the broker whose body holds one of `traces` (read and put back)."""
    api = system["TEST_RABBITMQ_API"]
    url = urllib.parse.urlparse(system["TEST_AMQP_URL"])
    auth = (urllib.parse.unquote(url.username), urllib.parse.unquote(url.password))
    found = []
    with httpx.Client(auth=auth, timeout=30) as client:
        for queue in client.get(f"{api}/queues").json():
            if not queue.get("messages"):
                continue
            vhost, name = urllib.parse.quote(queue["vhost"], safe=""), urllib.parse.quote(queue["name"], safe="")
            messages = client.post(f"{api}/queues/{vhost}/{name}/get", json={
                "count": queue["messages"], "ackmode": "ack_requeue_true", "encoding": "auto"}).json()
            for message in messages if isinstance(messages, list) else []:
                body = str(message.get("payload", ""))
                found += [f"{queue['name']}: {body[:300]}" for trace in traces if trace.lower() in body.lower()]
    return found


def test_a_student_who_used_every_app_deletes_their_account_and_no_service_or_queue_keeps_a_trace(system):
    assert "TEST_RABBITMQ_API" in system, "the queue scan needs the broker's management API (scripts/infra env)"
    tag = uuid.uuid4().hex[:8]
    ada = Student(f"Adaline{tag}", mode="delivering")
    bio = f"Collects vintage slide rules {tag}"
    assert ada.http.patch("/v1/me", json={"bio": bio}).status_code == 200
    olli, bea, rosa = Student("Olli"), Student("Bea"), Student("Rosa")
    written = []

    def say(match_id, text):
        chat = f"/v1/conversations/{match_id}"
        ada.when_known("GET", f"{chat}/messages", expected=200)
        answer = ada.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": text})
        assert answer.status_code == 201, answer.text
        written.append(text)

    # Delivery: Ada's run, Olli's order, taken; she writes in its chat.
    porthania = find(olli, "porthania", "building")
    restaurant = quiet_restaurant(ada, porthania, radius=800)
    run = ada.when_known("POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": porthania["id"]}).json()
    order = olli.when_known("POST", "/v1/orders", {
        "restaurantId": restaurant["id"], "destinationId": porthania["id"], "items": "Lohikeitto"}).json()
    taken = ada.post(f"/v1/orders/{order['id']}/take", {"runId": run["id"]})
    assert taken.status_code == 201, taken.text
    delivery_match = taken.json()["id"]
    say(delivery_match, f"On my way with your soup {tag}")

    # Tutoring: Ada tutors Bea; they match and she writes.
    course = f"ERASE-{tag}"
    for student, role, description in ((ada, "tutor", f"Slide rules explained {tag}"), (bea, "student", "Logarithms")):
        answer = student.http.put("/v1/tutoring/profile", json={
            "role": role, "courses": [course], "description": description, "rateCents": 1000})
        assert answer.status_code == 200, answer.text
    assert bea.post("/v1/tutoring/swipes", {"userId": ada.id, "like": True}).status_code == 201
    matched = ada.when_known("POST", "/v1/tutoring/swipes", {"userId": bea.id, "like": True}).json()
    assert matched["matched"], matched
    say(matched["matchId"], f"Bring your calculator {tag}")

    # Exchange: a photo on a listing Bea agrees to; they chat, complete and review each other.
    photo = (ROOT / "Tests/MediaTests/Fixtures/phone-photo.jpg").read_bytes()
    uploaded = ada.http.post("/v1/media", content=photo, headers={"Content-Type": "image/jpeg"})
    assert uploaded.status_code == 201, uploaded.text
    photo_id = uploaded.json()["id"]
    assert ada.when_known("PATCH", "/v1/me", {"photoId": photo_id}, expected=200)
    listing = ada.when_known("POST", "/v1/listings", {
        "offered": f"Salmiakki {tag}", "category": "sweet", "place": {"placeId": porthania["id"]},
        "photoId": photo_id, "note": f"Ask for Adaline {tag}"}).json()
    spare = ada.post("/v1/listings", {"offered": f"Spare mints {tag}", "category": "sweet",
                                      "place": {"placeId": porthania["id"]}})
    assert spare.status_code == 201, spare.text
    exchange = bea.post(f"/v1/listings/{listing['id']}/agree", {"offering": "oat milk"})
    assert exchange.status_code == 201, exchange.text
    exchange = exchange.json()
    say(exchange["id"], f"Meet at the door {tag}")
    for student in (ada, bea):
        assert student.post(f"/v1/exchanges/{exchange['id']}/complete").status_code == 200
    assert bea.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 5, "text": "Kind and on time"}).status_code == 201
    assert ada.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 4, "text": "Nice oat milk"}).status_code == 201

    # Rides: Ada drives Rosa; they chat.
    pickup = {"lat": 60.1695 + (uuid.uuid4().int % 1000) / 1e6, "lon": 24.9410}
    assert ada.http.put("/v1/rides/driver", json={"car": f"Red Saab {tag}", "seats": 2}).status_code == 200
    assert ada.http.put("/v1/rides/driver/location", json={"lat": pickup["lat"], "lon": pickup["lon"]}).status_code in (200, 204)
    ride = rosa.post("/v1/rides", {"pickup": pickup, "note": "By the fountain"})
    assert ride.status_code == 201, ride.text
    ride = ride.json()
    accepted = ada.post(f"/v1/rides/{ride['id']}/accept")
    assert accepted.status_code == 200, accepted.text
    say(accepted.json()["matchId"], f"Two minutes away {tag}")
    rosa_socket = rosa.socket()
    try:
        # A wrong password deletes nothing; then the account goes.
        wrong = ada.http.request("DELETE", "/v1/me", json={"password": "not the password"})
        assert wrong.status_code == 401 and wrong.json()["field"] == "password", wrong.text
        assert ada.get("/v1/me").status_code == 200
        assert ada.http.request("DELETE", "/v1/me", json={"password": "correct horse battery"}).status_code == 204
        assert ada.get("/v1/me").status_code == 404
        login = httpx.post(f"{GATEWAY}/v1/auth/login", json={"email": ada.email, "password": "correct horse battery"})
        assert login.status_code == 401

        # What was open with her closes for the others, and they are told.
        assert rosa_socket.wait_for("ride.cancelled", rideId=ride["id"]) is not None
        assert eventually(lambda: olli.get(f"/v1/matches/{delivery_match}").json()["status"] == "cancelled")
        assert eventually(lambda: bea.get("/v1/tutoring/matches").json()["matches"] == [])

        traces = [ada.email, ada.name, bio, *written, f"Slide rules explained {tag}", f"Red Saab {tag}",
                  f"Ask for Adaline {tag}", "Nice oat milk"]
        left = eventually(lambda: not rows_containing(system, traces), timeout=60, interval=1)
        assert left, "\n".join(rows_containing(system, traces))
        assert not queued_containing(system, traces)
        with database(system, "media") as connection:
            assert connection.execute("SELECT count(*) FROM image_blobs WHERE media_id = %s", (photo_id,)).fetchone()[0] == 0
        assert bea.get(f"/v1/media/{photo_id}", size="small").status_code == 404
    finally:
        rosa_socket.close()

    # The others keep their own: their accounts, the finished exchange, the chats (her messages shown as removed).
    assert bea.get("/v1/me").json()["name"] == "Bea"
    finished = bea.get(f"/v1/exchanges/{exchange['id']}")
    assert finished.status_code == 200 and finished.json()["status"] == "exchanged", finished.text
    assert ada.name not in finished.text
    messages = bea.get(f"/v1/conversations/{exchange['id']}/messages").json()["messages"]
    assert [message.get("removed") for message in messages] == [True] and messages[0]["text"] == ""
    # The email signs up again as a new person.
    again = httpx.post(f"{GATEWAY}/v1/auth/signup", json={
        "email": ada.email, "password": "correct horse battery", "name": "Adaline Again"})
    assert again.status_code == 201 and again.json()["user"]["id"] != ada.id, again.text

"""Two campuses on one system, through the gateway: scripts/test starts the system with Aalto University at Otaniemi
(Tests/TestSupport/campuses.json) beside Helsinki. A student of one campus neither sees nor changes anything of the
other, by list, by id or by event, and every point a student gives lies on their own campus."""

import json
import uuid

import httpx
import pytest

from conftest import GATEWAY, ROOT, Student, find, quiet_restaurant

OTANIEMI = {"lat": 60.1865, "lon": 24.8275}
HELSINKI = {"lat": 60.1699, "lon": 24.9488}


@pytest.fixture(scope="module")
def campuses(system):
    listed = {campus["domain"] for campus in httpx.get(f"{GATEWAY}/v1/campuses").json()["campuses"]}
    assert {"helsinki.fi", "aalto.fi"} <= listed, "the system runs with Aalto's campus (scripts/test gives CAMPUSES_FILE)"
    return listed


def test_a_look_alike_domain_is_refused_and_each_campus_signs_up_its_own(campuses):
    for email in (f"mallory.{uuid.uuid4().hex[:8]}@evilhelsinki.fi", f"mallory.{uuid.uuid4().hex[:8]}@aalto.fi.evil.com"):
        answer = httpx.post(f"{GATEWAY}/v1/auth/signup", json={"email": email, "password": "correct horse battery", "name": "M"})
        assert answer.status_code == 400 and answer.json()["field"] == "email", answer.text
    otto = Student("Otto", campus="aalto.fi")
    assert otto.get("/v1/me").json()["campus"] == "aalto.fi"
    sub = Student("Sanna", campus="cs.aalto.fi")
    assert sub.get("/v1/me").json()["campus"] == "aalto.fi"


def test_a_student_of_otaniemi_neither_sees_nor_changes_anything_of_helsinki(campuses):
    tag = uuid.uuid4().hex[:8]
    otto = Student("Otto", campus="aalto.fi")
    aino, olli = Student("Aino", mode="delivering"), Student("Olli")
    heli, liisa, rosa = Student("Heli"), Student("Liisa"), Student("Rosa")
    otto_socket, olli_socket = otto.socket(), olli.socket()
    run_id = ride = None
    try:
        # Helsinki lives its life: a run and an order taken, a tutor, a listing with a photo, a ride asked for.
        porthania = find(olli, "porthania", "building")
        restaurant = quiet_restaurant(aino, porthania)
        run_id = aino.when_known("POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": porthania["id"]}).json()["id"]
        order = olli.when_known("POST", "/v1/orders", {
            "restaurantId": restaurant["id"], "destinationId": porthania["id"], "items": "Pulla"}).json()
        course = f"CAMPUS-{tag}"
        assert heli.http.put("/v1/tutoring/profile", json={
            "role": "tutor", "courses": [course], "description": "Helsinki tutor", "rateCents": 1000}).status_code == 200
        photo = (ROOT / "Tests/MediaTests/Fixtures/phone-photo.jpg").read_bytes()
        photo_id = liisa.http.post("/v1/media", content=photo, headers={"Content-Type": "image/jpeg"}).json()["id"]
        listing = liisa.when_known("POST", "/v1/listings", {
            "offered": f"Helsinki buns {tag}", "category": "sweet", "place": HELSINKI, "photoId": photo_id}).json()
        ride = rosa.post("/v1/rides", {"pickup": {"lat": HELSINKI["lat"] + (uuid.uuid4().int % 1000) / 1e6, "lon": HELSINKI["lon"]}})
        assert ride.status_code == 201, ride.text
        ride = ride.json()
        match = aino.post(f"/v1/orders/{order['id']}/take", {"runId": run_id})
        assert match.status_code == 201, match.text
        match_id = match.json()["id"]
        assert olli.when_known("GET", f"/v1/conversations/{match_id}/messages", expected=200)

        # Otto, at Otaniemi, finds none of it in any list.
        assert otto.get("/v1/places", q="porthania", limit=5).json()["places"] == []
        assert otto.get("/v1/restaurants").json()["restaurants"] == []
        assert order["id"] not in [entry["id"] for entry in otto.get("/v1/orders/open").json()["orders"]]
        assert otto.http.put("/v1/tutoring/profile", json={
            "role": "student", "courses": [course], "description": "Otaniemi student", "rateCents": 0}).status_code == 200
        assert otto.get("/v1/tutoring/feed", course=course).json()["cards"] == []
        assert listing["id"] not in [entry["id"] for entry in otto.get("/v1/listings", q=f"buns {tag}").json()["listings"]]
        assert listing["id"] not in [entry["id"] for entry in otto.get("/v1/listings").json()["listings"]]
        assert otto.http.put("/v1/rides/driver", json={"car": "Otaniemi van", "seats": 4}).status_code == 200
        requests = otto.get("/v1/rides/requests", lat=OTANIEMI["lat"], lon=OTANIEMI["lon"], radius=5000)
        assert requests.status_code == 200, requests.text
        assert ride["id"] not in [entry["id"] for entry in requests.json()["requests"]]
        assert match_id.lower() not in [entry["id"].lower() for entry in otto.get("/v1/conversations").json()["conversations"]]

        # Nor by id, and nothing he asks of it happens.
        reads = [f"/v1/places/{porthania['id']}", f"/v1/restaurants/{restaurant['id']}/runs", f"/v1/orders/{order['id']}",
                 f"/v1/matches/{match_id}", f"/v1/tutoring/profiles/{heli.id}", f"/v1/listings/{listing['id']}",
                 f"/v1/rides/{ride['id']}", f"/v1/conversations/{match_id}/messages", f"/v1/media/{photo_id}"]
        for path in reads:
            answer = otto.get(path)
            assert answer.status_code == 404, f"{path}: {answer.status_code} {answer.text}"
        writes = [(f"/v1/orders/{order['id']}/take", {}), ("/v1/tutoring/swipes", {"userId": heli.id, "like": True}),
                  (f"/v1/listings/{listing['id']}/agree", {}), (f"/v1/rides/{ride['id']}/accept", {}),
                  (f"/v1/conversations/{match_id}/messages", {"id": str(uuid.uuid4()), "text": "hi"}),
                  ("/v1/blocks", {"userId": heli.id}), ("/v1/reports", {"userId": heli.id, "reason": "spam"})]
        for path, body in writes:
            answer = otto.post(path, body)
            assert answer.status_code in (404, 409), f"{path}: {answer.status_code} {answer.text}"
        assert rosa.get(f"/v1/rides/{ride['id']}").json()["status"] == "open"
        assert liisa.get(f"/v1/listings/{listing['id']}").json()["status"] == "active"
        assert heli.post("/v1/tutoring/swipes", {"userId": otto.id, "like": True}).status_code == 404

        # Nor by event: once Helsinki's own sockets have heard of all of it, Otaniemi's has heard of none of it.
        assert aino.post(f"/v1/conversations/{match_id}/messages", {"id": str(uuid.uuid4()), "text": "Ring twice"}).status_code == 201
        assert olli_socket.wait_for("message.sent", text="Ring twice") is not None
        helsinki = [order["id"], match_id, listing["id"], ride["id"], run_id, heli.id, aino.id, olli.id]
        heard = json.dumps(otto_socket.frames).lower()
        assert not [thing for thing in helsinki if thing.lower() in heard], heard[:2000]
    finally:
        otto_socket.close()
        olli_socket.close()
        if run_id:
            aino.http.delete(f"/v1/runs/{run_id}")
        if ride:
            rosa.post(f"/v1/rides/{ride['id']}/cancel")


def test_every_point_a_student_gives_lies_on_their_campus(campuses):
    otto = Student("Otto", campus="aalto.fi")
    refused = [
        ("POST", "/v1/listings", {"offered": "Salmiakki", "category": "sweet", "place": HELSINKI}, "place"),
        ("POST", "/v1/rides", {"pickup": HELSINKI}, "pickup"),
        ("POST", "/v1/rides", {"pickup": OTANIEMI, "dropoff": {"lat": 60.55, "lon": 24.83}}, "dropoff"),
        ("GET", "/v1/orders/open", {"lat": HELSINKI["lat"], "lon": HELSINKI["lon"]}, "lat"),
        ("GET", "/v1/rides/requests", {"lat": HELSINKI["lat"], "lon": HELSINKI["lon"]}, "lat"),
    ]
    for method, path, body, field in refused:
        if method == "GET":
            answer = otto.http.get(path, params=body)
        else:
            answer = otto.http.request(method, path, json=body)
        assert answer.status_code == 400, f"{path} {body}: {answer.status_code} {answer.text}"
        problem = answer.json()
        assert problem["field"] == field and "Aalto University" in problem["detail"], problem
    assert otto.get("/v1/listings", mine="true").json()["listings"] == []
    assert otto.get("/v1/rides/current").status_code == 404
    # A drop-off off the campus but within its reach (Helsinki's centre is 7 km away) is fine.
    ride = otto.post("/v1/rides", {"pickup": OTANIEMI, "dropoff": HELSINKI})
    assert ride.status_code == 201, ride.text
    assert otto.post(f"/v1/rides/{ride.json()['id']}/cancel").status_code == 200

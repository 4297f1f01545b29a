"""The story Tarrare exists for, told through the gateway of the system that scripts/up started."""

import re
import uuid

from conftest import ROOT, Student, eventually, find, quiet_restaurant, taken_delivery


def test_two_deliverers_one_orderer_from_search_to_a_finished_delivery(system):
    aino = Student("Aino", mode="delivering")
    eero = Student("Eero", mode="delivering")
    olli = Student("Olli", mode="ordering")

    # The deliverers meet at a restaurant near Porthania where nobody else is checked in (the system may be in use),
    # and each heads to a different building near Porthania.
    porthania = find(olli, "porthania", "building")
    assert porthania["name"] == "Porthania"
    restaurant = quiet_restaurant(aino, porthania, shortest_name=6)
    nearby = aino.get(
        "/v1/places/nearby", lat=porthania["latitude"], lon=porthania["longitude"], radius=250, kind="building", limit=50)
    assert nearby.status_code == 200, nearby.text
    others = [place for place in nearby.json()["places"] if place["id"] != porthania["id"] and place["distanceMeters"] > 20]
    assert len(others) >= 2, "the campus data has buildings around Porthania"
    closer, farther = others[0], others[-1]
    assert closer["distanceMeters"] < farther["distanceMeters"]

    aino_socket, eero_socket, olli_socket = aino.socket(), eero.socket(), olli.socket()
    try:
        # Matching learns of the new users and the places through events: until then it answers 404.
        aino_run = aino.when_known("POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": closer["id"]})
        eero_run = eero.when_known("POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": farther["id"]})

        # The orderer types part of the name, sees the restaurant among those with deliverers, and both runs.
        typed = olli.get("/v1/places", q=restaurant["name"][:6].lower(), kind="restaurant", limit=5)
        assert restaurant["id"] in [place["id"] for place in typed.json()["places"]], typed.text
        with_deliverers = olli.get("/v1/restaurants")
        assert with_deliverers.status_code == 200, with_deliverers.text
        counts = {entry["restaurant"]["id"]: entry["openRuns"] for entry in with_deliverers.json()["restaurants"]}
        assert counts.get(restaurant["id"], 0) >= 2
        runs = olli.get(f"/v1/restaurants/{restaurant['id']}/runs", lat=porthania["latitude"], lon=porthania["longitude"])
        assert runs.status_code == 200, runs.text
        listed = {run["id"]: run for run in runs.json()["runs"]}
        assert {aino_run.json()["id"], eero_run.json()["id"]} <= listed.keys()
        assert listed[aino_run.json()["id"]]["delivererName"] == "Aino"
        assert listed[eero_run.json()["id"]]["delivererName"] == "Eero"
        assert listed[aino_run.json()["id"]]["distanceMeters"] < listed[eero_run.json()["id"]]["distanceMeters"]

        # The order goes to Porthania without choosing a run: the better-placed deliverer hears of it first.
        order = olli.post("/v1/orders", {"restaurantId": restaurant["id"], "destinationId": porthania["id"], "items": "Lunch of the day"})
        assert order.status_code == 201, order.text
        order_id = order.json()["id"]
        first = aino_socket.wait_for("offer.made", orderId=order_id)
        assert first is not None, "Aino's socket heard no offer"
        assert aino.post(f"/v1/offers/{first['data']['offerId']}/decline").status_code == 200

        second = eero_socket.wait_for("offer.made", orderId=order_id)
        assert second is not None, "Eero's socket heard no offer after Aino declined"
        accepted = eero.post(f"/v1/offers/{second['data']['offerId']}/accept")
        assert accepted.status_code == 200, accepted.text
        match_id = accepted.json()["id"]
        assert olli_socket.wait_for("match.accepted", match__matchId=match_id) is not None
        # Either side finds the match from any device.
        for student in (olli, eero):
            assert [match["id"] for match in student.get("/v1/delivery/current").json()["matches"]] == [match_id]
        assert [entry for entry in aino_socket.entries if entry["type"] == "offer.made" and entry["data"]["orderId"] == order_id] == [first]

        # The deliverer's position reaches the orderer's socket live (a frame outside the feed), and nobody else's.
        position = {"lat": porthania["latitude"] + 0.0003, "lon": porthania["longitude"]}
        assert olli.http.put(f"/v1/matches/{match_id}/location", json=position).status_code == 404
        assert eero.http.put(f"/v1/matches/{match_id}/location", json=position).status_code in (200, 204)
        frame = olli_socket.wait(lambda frame: frame.get("type") == "location" and frame["data"]["lat"] == position["lat"])
        assert frame is not None and "seq" not in frame and frame["data"]["matchId"].lower() == match_id.lower()
        assert olli.get(f"/v1/matches/{match_id}").json()["delivererPosition"]["lat"] == position["lat"]
        assert aino_socket.wait(lambda frame: frame.get("type") == "location", timeout=0.5) is None

        # They chat, each hearing the other live.
        chat = f"/v1/conversations/{match_id}"
        for student in (olli, eero):
            assert student.when_known("GET", f"{chat}/messages", expected=200)
        listed = olli.get("/v1/conversations").json()["conversations"]
        assert [(entry["id"].lower(), entry["otherMember"]["name"]) for entry in listed] == [(match_id.lower(), "Eero")]
        for sender, receiver, text in [
            (eero, olli_socket, f"Hei! I'm at {restaurant['name']}, your lunch is coming"),
            (olli, eero_socket, "Kiitos! Porthania, second floor lobby"),
        ]:
            sent = sender.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": text})
            assert sent.status_code == 201, sent.text
            assert receiver.wait_for("message.sent", text=text) is not None, f"{text!r} not heard live"

        # Both mark the delivery complete; the chat leaves both lists and takes no more messages.
        assert olli.post(f"/v1/matches/{match_id}/complete").status_code == 200
        assert eero.post(f"/v1/matches/{match_id}/complete").status_code == 200
        assert olli_socket.wait_for("match.completed", match__matchId=match_id) is not None
        for student, socket in [(olli, olli_socket), (eero, eero_socket)]:
            assert socket.wait_for("conversation.closed") is not None
            assert student.get("/v1/conversations").json()["conversations"] == []
        assert olli.get(f"/v1/matches/{match_id}").json().get("delivererPosition") is None
        assert olli.get("/v1/delivery/current").json() == {"runs": [], "orders": [], "matches": []}
        assert eero.http.put(f"/v1/matches/{match_id}/location", json=position).status_code == 409
        late = olli.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": "Thanks again"})
        assert late.status_code == 409
        assert late.headers["content-type"].startswith("application/problem+json")

        # Every socket heard its feed gapless and without repeats.
        for socket in (aino_socket, eero_socket, olli_socket):
            seqs = [entry["seq"] for entry in socket.entries]
            assert seqs == list(range(1, len(seqs) + 1))
    finally:
        for socket in (aino_socket, eero_socket, olli_socket):
            socket.close()
        for student in (aino, eero):
            for run in olli.get(f"/v1/restaurants/{restaurant['id']}/runs").json().get("runs", []):
                if run["delivererId"] == student.id:
                    student.http.delete(f"/v1/runs/{run['id']}")


def test_an_open_request_naming_two_restaurants_is_taken_by_a_deliverer_at_the_second(system):
    aino = Student("Aino", mode="delivering")
    olli = Student("Olli", mode="ordering")
    porthania = find(olli, "porthania", "building")
    eateries = aino.get(
        "/v1/places/nearby", lat=porthania["latitude"], lon=porthania["longitude"], radius=600, kind="restaurant", limit=50)
    first, second = eateries.json()["places"][:2]
    # Aino heads far from the order's point: nothing offers her the order, she finds it in the open requests.
    buildings = aino.get(
        "/v1/places/nearby", lat=porthania["latitude"], lon=porthania["longitude"], radius=1500, kind="building", limit=50)
    far = max(buildings.json()["places"], key=lambda place: place["distanceMeters"])
    assert far["distanceMeters"] > 450
    here = {"lat": porthania["latitude"] + 0.0002, "lon": porthania["longitude"]}

    olli_socket = olli.socket()
    run_id = None
    try:
        run = aino.when_known("POST", "/v1/runs", {"restaurantId": second["id"], "destinationId": far["id"]})
        run_id = run.json()["id"]
        order = olli.when_known("POST", "/v1/orders", {
            "restaurantIds": [first["id"], second["id"]], "destination": here, "items": "Two cinnamon buns"})
        order_id = order.json()["id"]
        assert [place["id"] for place in order.json()["restaurants"]] == [first["id"], second["id"]]
        assert order.json()["destination"]["name"].startswith("Near ")
        assert olli_socket.wait_for("order.opened", orderId=order_id) is not None

        listed = aino.get("/v1/orders/open", lat=here["lat"], lon=here["lon"], restaurantId=second["id"])
        assert listed.status_code == 200, listed.text
        mine = next(entry for entry in listed.json()["orders"] if entry["id"] == order_id)
        assert mine["ordererFirstName"] == "Olli" and mine["distanceMeters"] < 5
        assert "email" not in str(mine).lower()
        assert order_id not in [entry["id"] for entry in olli.get("/v1/orders/open").json()["orders"]]

        taken = aino.post(f"/v1/orders/{order_id}/take", {"runId": run_id})
        assert taken.status_code == 201, taken.text
        match_id = taken.json()["id"]
        assert taken.json()["restaurant"]["id"] == second["id"]
        assert olli_socket.wait_for("order.taken", orderId=order_id) is not None
        assert olli_socket.wait_for("match.accepted", match__matchId=match_id) is not None
        again = aino.post(f"/v1/orders/{order_id}/take", {"runId": run_id})
        assert again.status_code == 409 and again.headers["content-type"].startswith("application/problem+json")
        assert order_id not in [entry["id"] for entry in aino.get("/v1/orders/open").json()["orders"]]
        assert aino.when_known("GET", f"/v1/conversations/{match_id}/messages", expected=200)
        assert olli.post(f"/v1/matches/{match_id}/cancel").status_code == 200
    finally:
        olli_socket.close()
        if run_id:
            aino.http.delete(f"/v1/runs/{run_id}")


def test_a_block_through_the_gateway_hides_each_from_the_other_and_ends_their_delivery(system):
    aino = Student("Aino", mode="delivering")
    olli = Student("Olli", mode="ordering")
    with taken_delivery(aino, olli, "Soup") as delivery:
        restaurant, run_id, order, match_id = delivery.restaurant, delivery.run_id, delivery.order, delivery.match_id
        assert aino.when_known("GET", f"/v1/conversations/{match_id}/messages", expected=200)

        # Olli blocks Aino: the match ends with its chat, and neither sees the other's run or request.
        assert olli.post("/v1/blocks", {"userId": aino.id}).status_code == 201
        assert [entry["userId"].lower() for entry in olli.get("/v1/blocks").json()["blocks"]] == [aino.id.lower()]
        assert eventually(lambda: olli.get(f"/v1/matches/{match_id}").json()["status"] == "cancelled")
        assert eventually(lambda: match_id.lower() not in [
            entry["id"].lower() for entry in olli.get("/v1/conversations").json()["conversations"]])
        runs = olli.get(f"/v1/restaurants/{restaurant['id']}/runs").json()["runs"]
        assert run_id not in [entry["id"] for entry in runs]
        assert order["id"] not in [entry["id"] for entry in aino.get("/v1/orders/open").json()["orders"]]
        assert olli.post("/v1/blocks", {"userId": olli.id}).status_code == 400
        assert olli.http.delete(f"/v1/blocks/{aino.id}").status_code == 204
        assert olli.post(f"/v1/orders/{order['id']}/cancel").status_code == 200


def test_a_student_deletes_their_account_through_the_gateway_and_their_delivery_ends_for_the_other(system):
    aino = Student("Aino", mode="delivering")
    olli = Student("Olli", mode="ordering")
    with taken_delivery(aino, olli, "Karjalanpiirakka") as delivery:
        match_id = delivery.match_id
        chat = f"/v1/conversations/{match_id}"
        assert olli.when_known("GET", f"{chat}/messages", expected=200)
        assert olli.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": "Ring twice"}).status_code == 201

        # A wrong password deletes nothing; the right one ends the account at once.
        wrong = olli.http.request("DELETE", "/v1/me", json={"password": "not it"})
        assert wrong.status_code == 401 and wrong.json()["field"] == "password", wrong.text
        assert olli.http.request("DELETE", "/v1/me", json={"password": "correct horse battery"}).status_code == 204
        assert olli.get("/v1/me").status_code == 404
        login = aino.http.post("/v1/auth/login", json={"email": olli.email, "password": "correct horse battery"})
        assert login.status_code == 401

        # Aino's delivery ends, its chat closes, and what Olli wrote shows as removed.
        assert eventually(lambda: aino.get(f"/v1/matches/{match_id}").json()["status"] == "cancelled")
        assert eventually(lambda: match_id.lower() not in [
            entry["id"].lower() for entry in aino.get("/v1/conversations").json()["conversations"]])
        messages = eventually(lambda: [m for m in aino.get(f"{chat}/messages").json()["messages"] if m.get("removed")])
        assert messages and messages[0]["text"] == "", messages
        shown = aino.get(f"/v1/matches/{match_id}").text
        assert "Olli" not in shown and "Karjalanpiirakka" not in shown, shown


def test_a_student_and_a_tutor_find_each_other_by_swiping_and_talk_until_one_unmatches(system):
    """Tutoring (MentorMate) through the gateway: profiles, the feed, a mutual like, the chat, and an unmatch."""
    course = f"STORY-{uuid.uuid4().int % 100000}"
    saara = Student("Saara")
    matti = Student("Matti")
    kemal = Student("Kemal")
    assert saara.http.patch("/v1/me", json={"bio": "Second-year physics"}).status_code == 200
    profiles = [
        (saara, {"role": "student", "courses": [course, "MAT-101"], "description": "Stuck on integrals", "rateCents": 1500}),
        (matti, {"role": "tutor", "courses": [course.lower().replace("-", " ")], "description": "Calculus, patiently",
                 "rateCents": 2500, "availability": "Evenings", "preferences": "Kaisa-talo"}),
        (kemal, {"role": "tutor", "courses": ["CHEM-201"], "description": "Organic chemistry", "rateCents": 2000}),
    ]
    for student, profile in profiles:
        answer = student.http.put("/v1/tutoring/profile", json=profile)
        assert answer.status_code == 200, answer.text

    saara_socket, matti_socket = saara.socket(), matti.socket()
    try:
        # Saara's feed, filtered by the course as she types it, shows Matti and not the chemist; no card has an email.
        feed = saara.get("/v1/tutoring/feed", course=course.lower())
        assert feed.status_code == 200, feed.text
        cards = feed.json()["cards"]
        assert [card["name"] for card in cards] == ["Matti"]
        assert "email" not in cards[0] and cards[0]["courses"] == [{"code": course, "shared": True}]
        assert kemal.get(f"/v1/tutoring/profiles/{matti.id}").status_code == 404

        first = saara.post("/v1/tutoring/swipes", {"userId": matti.id, "like": True})
        assert first.status_code == 201 and first.json() == {"matched": False}, first.text
        assert saara.post("/v1/tutoring/swipes", {"userId": matti.id, "like": True}).status_code == 409
        second = matti.post("/v1/tutoring/swipes", {"userId": saara.id, "like": True})
        assert second.status_code == 201 and second.json()["matched"], second.text
        match_id = second.json()["matchId"]

        # Both hear of the match on their socket; the chat opens with the course as its subject.
        for socket in (saara_socket, matti_socket):
            assert socket.wait_for("tutoring.matched", matchId=match_id) is not None
        chat = f"/v1/conversations/{match_id}"
        assert saara.when_known("GET", f"{chat}/messages", expected=200)
        listed = {entry["id"].lower(): entry for entry in saara.get("/v1/conversations").json()["conversations"]}
        assert listed[match_id.lower()]["otherMember"]["name"] == "Matti"
        text = "Could we meet at Kaisa-talo on Tuesday?"
        assert saara.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": text}).status_code == 201
        assert matti_socket.wait_for("message.sent", text=text) is not None
        full = saara.get(f"/v1/tutoring/profiles/{matti.id}")
        assert full.status_code == 200 and full.json()["preferences"] == "Kaisa-talo", full.text
        assert eventually(lambda: matti.get(f"/v1/tutoring/profiles/{saara.id}").json().get("bio") == "Second-year physics")

        # Matti unmatches: both are told, the chat closes, and neither sees the other again.
        assert matti.http.delete(f"/v1/tutoring/matches/{match_id}").status_code == 204
        for socket in (saara_socket, matti_socket):
            assert socket.wait_for("tutoring.unmatched", matchId=match_id) is not None
            assert socket.wait_for("conversation.closed") is not None
        assert saara.get(f"/v1/tutoring/profiles/{matti.id}").status_code == 404
        assert saara.get("/v1/tutoring/matches").json()["matches"] == []
        assert saara.get("/v1/tutoring/feed", course=course).json()["cards"] == []
        assert saara.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": "Hello?"}).status_code == 409
    finally:
        saara_socket.close()
        matti_socket.close()


def test_two_students_swap_snacks_from_a_photo_to_a_review(system):
    """Snack Exchange through the gateway: a photo, a listing at a building, found by typing, agreed, chatted about,
    completed by both and reviewed by both; the owner's rating shows on their listings."""
    word = f"Fazer{uuid.uuid4().hex[:6]}"
    liisa = Student("Liisa")
    tuomas = Student("Tuomas")
    liisa_socket, tuomas_socket = liisa.socket(), tuomas.socket()
    try:
        photo = (ROOT / "Tests/MediaTests/Fixtures/phone-photo.jpg").read_bytes()
        uploaded = liisa.http.post("/v1/media", content=photo, headers={"Content-Type": "image/jpeg"})
        assert uploaded.status_code == 201, uploaded.text
        photo_id = uploaded.json()["id"]
        building = find(liisa, "porthania", "building")

        # The listing takes the photo once matching has heard it is Liisa's, and the building's point.
        listing = liisa.when_known("POST", "/v1/listings", {
            "offered": f"{word} Sininen chocolate bars", "wanted": ["Karl Fazer mints", "oat milk"],
            "category": "sweet", "place": {"placeId": building["id"]}, "photoId": photo_id,
        }).json()
        assert listing["status"] == "active" and listing["place"]["placeId"].lower() == building["id"].lower()
        assert tuomas.post("/v1/listings", {"offered": "Chips", "category": "crisps", "place": {"lat": 60.17, "lon": 24.95}}
                           ).status_code == 400

        # Tuomas finds it by typing with a typo, then sees the photo.
        found = tuomas.get("/v1/listings", q=word[:-1].lower() + "x")
        assert found.status_code == 200, found.text
        assert listing["id"] in [entry["id"] for entry in found.json()["listings"]]
        assert tuomas.get(f"/v1/media/{photo_id}", size="small").status_code == 200

        agreed = tuomas.post(f"/v1/listings/{listing['id']}/agree", {"offering": "a bag of mints"})
        assert agreed.status_code == 201, agreed.text
        exchange = agreed.json()
        retried = tuomas.post(f"/v1/listings/{listing['id']}/agree", {"offering": "a bag of mints"})
        assert retried.status_code in (200, 201) and retried.json()["id"] == exchange["id"], retried.text
        assert Student("Aada").post(f"/v1/listings/{listing['id']}/agree", {}).status_code == 409
        assert liisa_socket.wait_for("exchange.agreed", exchangeId=exchange["id"]) is not None

        # They chat to meet, then both mark it done and review each other once.
        chat = f"/v1/conversations/{exchange['id']}"
        assert tuomas.when_known("GET", f"{chat}/messages", expected=200)
        text = "At Porthania's door at noon?"
        assert tuomas.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": text}).status_code == 201
        assert liisa_socket.wait_for("message.sent", text=text) is not None
        assert liisa.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 5}).status_code == 409
        for student in (liisa, tuomas):
            assert student.post(f"/v1/exchanges/{exchange['id']}/complete").status_code == 200
        assert liisa.get(f"/v1/exchanges/{exchange['id']}").json()["status"] == "exchanged"
        assert liisa.get(f"/v1/listings/{listing['id']}").json()["status"] == "exchanged"
        for socket in (liisa_socket, tuomas_socket):
            assert socket.wait_for("conversation.closed") is not None
        assert tuomas.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 4, "text": "Tasty, on time"}).status_code == 201
        assert tuomas.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 1}).status_code == 409
        assert liisa.post(f"/v1/exchanges/{exchange['id']}/review", {"stars": 5}).status_code == 201

        mine = liisa.get("/v1/listings", mine="true").json()["listings"]
        assert mine[0]["owner"]["rating"] == 4 and mine[0]["owner"]["reviews"] == 1
    finally:
        liisa_socket.close()
        tuomas_socket.close()


def test_a_rider_asks_the_nearest_driver_hears_it_accepts_and_drives_them(system):
    """My Driver through the gateway: a driver online near the rider hears the request on their socket, accepts,
    the rider hears it with the driver's car and position and the ride's code, they chat, the driver starts the ride
    with the code the rider tells them (never shown to the driver), and the ride goes to its end."""
    pickup = {"lat": 60.1690 + (uuid.uuid4().int % 1000) / 1e6, "lon": 24.9400}
    ville = Student("Ville")
    rosa = Student("Rosa")
    assert ville.http.put("/v1/rides/driver", json={"car": "Blue Toyota Yaris, ABC-123", "seats": 3}).status_code == 200
    online = ville.http.put("/v1/rides/driver/location", json={"lat": pickup["lat"] + 0.0004, "lon": pickup["lon"]})
    assert online.status_code in (200, 204), online.text
    ville_socket, rosa_socket = ville.socket(), rosa.socket()
    try:
        asked = rosa.post("/v1/rides", {"pickup": pickup, "note": "By the station's clock"})
        assert asked.status_code == 201, asked.text
        ride = asked.json()
        assert rosa.post("/v1/rides", {"pickup": pickup}).status_code == 409
        assert ville_socket.wait_for("ride.offered", rideId=ride["id"]) is not None

        near = ville.get("/v1/rides/requests", lat=pickup["lat"] + 0.0004, lon=pickup["lon"], radius=1000).json()
        mine = [request for request in near["requests"] if request["id"] == ride["id"]]
        assert mine and 30 < mine[0]["distanceMeters"] < 60
        assert rosa.post(f"/v1/rides/{ride['id']}/accept").status_code in (400, 409)
        accepted = ville.post(f"/v1/rides/{ride['id']}/accept")
        assert accepted.status_code == 200, accepted.text
        heard = rosa_socket.wait_for("ride.accepted", rideId=ride["id"])
        assert heard is not None and heard["data"]["driver"]["car"] == "Blue Toyota Yaris, ABC-123"
        shown = rosa.get(f"/v1/rides/{ride['id']}").json()
        assert shown["status"] == "accepted" and shown["driver"]["position"]["lat"] == pickup["lat"] + 0.0004
        code = shown["code"]
        assert re.fullmatch(r"[0-9]{4}", code) and heard["data"]["code"] == code
        assert "code" not in accepted.json()
        # Either side finds the ride from any device; only the rider sees its code.
        assert rosa.get("/v1/rides/current").json()["id"] == ride["id"]
        assert rosa.get("/v1/rides/current").json()["code"] == code
        driving = ville.get("/v1/rides/current").json()
        assert driving["id"] == ride["id"] and "code" not in driving
        assert "code" not in ville.get(f"/v1/rides/{ride['id']}").json()

        # The driver's position reaches the rider's socket live, as a frame outside the feed.
        moved = {"lat": pickup["lat"] + 0.0002, "lon": pickup["lon"]}
        assert ville.http.put("/v1/rides/driver/location", json=moved).status_code in (200, 204)
        frame = rosa_socket.wait(lambda frame: frame.get("type") == "location" and frame["data"]["lat"] == moved["lat"])
        assert frame is not None and "seq" not in frame and frame["data"]["rideId"].lower() == ride["id"].lower()
        assert ville_socket.wait(lambda frame: frame.get("type") == "location", timeout=0.5) is None

        chat = f"/v1/conversations/{shown['matchId']}"
        assert ville.when_known("GET", f"{chat}/messages", expected=200)
        assert ville.post(f"{chat}/messages", {"id": str(uuid.uuid4()), "text": "Two minutes away"}).status_code == 201
        assert rosa_socket.wait_for("message.sent", text="Two minutes away") is not None
        arrived = ville.post(f"/v1/rides/{ride['id']}/arrived")
        assert arrived.status_code == 200 and "code" not in arrived.json(), arrived.text
        assert rosa_socket.wait_for("ride.arrived", rideId=ride["id"]) is not None
        # The driver starts the ride with the code the rider tells them: none or a malformed one is 400 naming it, a
        # wrong one 409 with the tries left.
        for body in ({}, {"code": "12"}, {"code": "abcd"}):
            refused = ville.post(f"/v1/rides/{ride['id']}/started", body)
            assert refused.status_code == 400 and refused.json()["field"] == "code", refused.text
        wrong = ville.post(f"/v1/rides/{ride['id']}/started", {"code": f"{(int(code) + 1) % 10000:04d}"})
        assert wrong.status_code == 409 and "4 tries left" in wrong.json()["detail"], wrong.text
        assert ville.get(f"/v1/rides/{ride['id']}").json()["status"] == "arrived"
        started = ville.post(f"/v1/rides/{ride['id']}/started", {"code": code})
        assert started.status_code == 200 and started.json()["status"] == "started", started.text
        assert "code" not in started.json()
        assert rosa_socket.wait_for("ride.started", rideId=ride["id"]) is not None
        completed = ville.post(f"/v1/rides/{ride['id']}/completed")
        assert completed.status_code == 200, completed.text
        assert rosa_socket.wait_for("ride.completed", rideId=ride["id"]) is not None
        assert rosa_socket.wait_for("conversation.closed") is not None
        # No entry of the driver's feed carries the code.
        assert not [entry for entry in ville_socket.entries if "code" in entry.get("data", {})]
        finished = rosa.get(f"/v1/rides/{ride['id']}").json()
        assert finished["status"] == "completed" and finished["driver"].get("position") is None
        assert rosa.get("/v1/rides/current").status_code == 404
    finally:
        ville_socket.close()
        rosa_socket.close()
        ville.http.delete("/v1/rides/driver/location")


def test_a_student_walks_between_two_buildings_and_a_driver_follows_the_one_way_streets(system):
    """Routes through the gateway: a walk between two buildings found by search, along the streets; a drive against a
    one-way street goes around the block; a point in the bay has no street near it."""
    aino = Student("Aino")
    porthania = find(aino, "porthania", "building")
    metsatalo = find(aino, "metsatalo", "building")

    walk = aino.get(
        "/v1/routes", **{"from": f"{porthania['latitude']},{porthania['longitude']}"},
        to=f"{metsatalo['latitude']},{metsatalo['longitude']}", mode="walk")
    assert walk.status_code == 200, walk.text
    route = walk.json()
    assert route["path"]["type"] == "LineString" and len(route["path"]["coordinates"]) > 3
    assert route["path"]["coordinates"][0] == [porthania["longitude"], porthania["latitude"]]
    assert 250 < route["meters"] < 900 and route["seconds"] > route["meters"] / 2

    # Vuorikatu is one-way from Kaisaniemenkatu south to Vilhonkatu.
    north, south = "60.1729772,24.9473444", "60.1723981,24.9474158"
    along = aino.get("/v1/routes", **{"from": north}, to=south, mode="drive")
    against = aino.get("/v1/routes", **{"from": south}, to=north, mode="drive")
    assert along.status_code == 200 and against.status_code == 200, (along.text, against.text)
    assert against.json()["meters"] > 3 * along.json()["meters"]

    bay = aino.get("/v1/routes", **{"from": "60.1787,24.9353"}, to=north, mode="walk")
    assert bay.status_code == 404 and bay.json()["field"] == "from", bay.text
    bad = aino.get("/v1/routes", **{"from": north}, to=north, mode="fly")
    assert bad.status_code == 400 and bad.json()["field"] == "mode", bad.text

"""Push through the gateway (DESIGN.md, "Push: reaching a phone in a pocket"): web devices registered, listed, moved
and deleted; a message to a student with no socket open reaches their device once, signed (VAPID) and encrypted
(aes128gcm) so that an independent implementation verifies and decrypts it (pushservice.py, a Web Push service on
loopback); an endpoint that is gone loses its device, a throttled one gets its push later and once, and a student whose
socket is open gets none."""

import json
import os
import uuid
from datetime import datetime

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import GATEWAY, Student, eventually
from pushservice import PushService, base64url, from_base64url, new_subscription

# The system stack waits PUSH_GRACE_SECONDS (5 s by default) for a socket before it pushes, and may retry: the tests
# poll this long and assume nothing shorter.
PUSH_TIMEOUT = 60.0


def elsewhere():
    """An endpoint nobody pushes to in these tests (its entries go to the stand-in's paths only): for registrations."""
    return new_subscription(f"https://push.example.org/{uuid.uuid4().hex}")[0]


def devices(student):
    answer = student.get("/v1/devices")
    assert answer.status_code == 200, answer.text
    return answer.json()["devices"]


def ids(listed):
    return [device["id"].lower() for device in listed]


def register(student, subscription):
    answer = student.post("/v1/devices", {"platform": "web", "subscription": subscription})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"].lower()


def matched(tutor, *students):
    """Tutoring matches of `tutor` with each of `students` (mutual likes on a course of their own), their chats open
    to both: the conversations' ids, in order."""
    course = f"PUSH-{uuid.uuid4().int % 100000}"
    for person, role in ((tutor, "tutor"), *((student, "student") for student in students)):
        answer = person.http.put("/v1/tutoring/profile", json={
            "role": role, "courses": [course], "description": "Push tests", "rateCents": 1000})
        assert answer.status_code == 200, answer.text
    conversations = []
    for student in students:
        student.when_known("POST", "/v1/tutoring/swipes", {"userId": tutor.id, "like": True})
        match = tutor.when_known("POST", "/v1/tutoring/swipes", {"userId": student.id, "like": True}).json()
        assert match["matched"], match
        for person in (student, tutor):
            person.when_known("GET", f"/v1/conversations/{match['matchId']}/messages", expected=200)
        conversations.append(match["matchId"])
    return conversations


def say(sender, conversation, text):
    answer = sender.post(f"/v1/conversations/{conversation}/messages", {"id": str(uuid.uuid4()), "text": text})
    assert answer.status_code == 201, answer.text


def about(text):
    """Whether a push carries the message `text`."""
    return lambda push: (push.payload is not None and push.payload.get("type") == "message.sent"
                         and push.payload.get("body") == text[:100])


@pytest.fixture(scope="module")
def push_service(system):
    """The stand-in Web Push service, expecting the VAPID key the backend publishes."""
    if os.environ.get("TARRARE_SYSTEM_ENV"):
        pytest.skip("a stack in containers cannot reach this process's loopback, where the stand-in listens")
    answer = Student("Vera").get("/v1/push/web")
    assert answer.status_code == 200, answer.text
    with PushService(answer.json()["publicKey"]) as service:
        yield service


def test_the_vapid_public_key_is_published_to_students_as_an_uncompressed_p256_point(system):
    answer = Student("Vera").get("/v1/push/web")

    assert answer.status_code == 200, answer.text
    key = from_base64url(answer.json()["publicKey"])
    assert len(key) == 65 and key[0] == 4, answer.text
    ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
    assert httpx.get(f"{GATEWAY}/v1/push/web", timeout=30).status_code == 401


def test_a_web_device_is_registered_listed_and_deleted_by_its_owner_alone(system):
    aino, bea = Student("Aino"), Student("Bea")

    device = register(aino, elsewhere())

    listed = devices(aino)
    assert ids(listed) == [device] and listed[0]["platform"] == "web", listed
    datetime.fromisoformat(listed[0]["createdAt"])
    assert bea.http.delete(f"/v1/devices/{device}").status_code == 404
    assert ids(devices(aino)) == [device]
    assert aino.http.delete(f"/v1/devices/{device}").status_code == 204
    assert devices(aino) == []


@pytest.fixture(scope="module")
def holder(system):
    """A student with one web device already."""
    student = Student("Hilla")
    register(student, elsewhere())
    return student


def web(**changes):
    """A valid web registration with parts of its subscription changed (`keys` merged into the keys)."""
    subscription = elsewhere()
    subscription["keys"].update(changes.pop("keys", {}))
    return {"platform": "web", "subscription": {**subscription, **changes}}


# (1, 1) satisfies no P-256 equation: 65 bytes shaped like an uncompressed point that is not one.
OFF_THE_CURVE = base64url(b"\x04" + (1).to_bytes(32, "big") + (1).to_bytes(32, "big"))


@pytest.mark.parametrize("body, field", [
    ({"platform": "pager", "token": "a-pager-number"}, "platform"),
    ({"platform": "web"}, "subscription"),
    (web(endpoint="http://push.example.org/x"), "subscription.endpoint"),
    (web(keys={"p256dh": OFF_THE_CURVE}), "subscription.keys.p256dh"),
    (web(keys={"auth": base64url(bytes(15))}), "subscription.keys.auth"),
    ({"platform": "apns"}, "token"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_a_device_that_cannot_be_pushed_to_is_a_problem_naming_the_field_and_nothing_is_stored(holder, body, field):
    before = devices(holder)

    answer = holder.post("/v1/devices", body)

    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["field"] == field, answer.text
    assert devices(holder) == before


def test_a_subscription_registered_by_another_student_moves_to_them(system):
    aino, bea = Student("Aino"), Student("Bea")
    subscription = elsewhere()
    first = register(aino, subscription)

    second = register(bea, subscription)

    assert first not in ids(devices(aino)) and devices(aino) == []
    assert ids(devices(bea)) == [second]


def test_a_message_to_a_student_with_no_socket_open_reaches_their_web_device_once(push_service):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    path = f"aino-{uuid.uuid4().hex}"
    register(aino, push_service.subscription(path))
    text = "Kaisa-talo, third floor, the long table by the windows; I'll bring the old exams and two pens for us both"

    say(bea, chat, text)

    pushed = push_service.wait_for(about(text), path, timeout=PUSH_TIMEOUT)
    assert pushed is not None, f"no push of the message in {PUSH_TIMEOUT:.0f} s: {push_service.pushes(path)}"
    assert pushed.is_valid, pushed.errors
    assert pushed.status == 201
    payload = pushed.payload
    assert len(text) > 100 and payload["title"] == "Bea" and payload["body"] == text[:100], payload
    assert isinstance(payload["seq"], int) and chat.lower() in json.dumps(payload["open"]).lower(), payload
    assert int(pushed.headers["ttl"]) > 0

    # Once: a later message's push has come, and the first one's entry was sent in one request.
    later = "See you at six"
    say(bea, chat, later)
    second = push_service.wait_for(about(later), path, timeout=PUSH_TIMEOUT)
    assert second is not None, f"no push of the later message: {push_service.pushes(path)}"
    assert second.payload["seq"] > payload["seq"]
    sent = [push.payload["seq"] for push in push_service.pushes(path) if push.payload]
    assert sent.count(payload["seq"]) == 1 and len(list(filter(about(text), push_service.pushes(path)))) == 1


def test_an_endpoint_that_answers_410_loses_its_device(push_service):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    path = f"gone-{uuid.uuid4().hex}"
    push_service.gone(path)
    device = register(aino, push_service.subscription(path))

    say(bea, chat, "Are you still coming?")

    pushed = push_service.wait_for(lambda push: True, path, timeout=PUSH_TIMEOUT)
    assert pushed is not None, f"nothing pushed to the device in {PUSH_TIMEOUT:.0f} s"
    assert pushed.status == 410 and pushed.is_valid, pushed.errors
    assert eventually(lambda: device not in ids(devices(aino)), timeout=PUSH_TIMEOUT), devices(aino)


def test_an_endpoint_that_answers_429_twice_gets_the_push_on_the_third_try_and_once(push_service):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    path = f"busy-{uuid.uuid4().hex}"
    push_service.throttle(path, 2, only=lambda payload: payload.get("type") == "message.sent")
    register(aino, push_service.subscription(path))
    text = "Running ten minutes late"

    say(bea, chat, text)

    taken = push_service.wait_for(lambda push: about(text)(push) and push.status == 201, path, timeout=PUSH_TIMEOUT)
    assert taken is not None, f"the push was not taken in {PUSH_TIMEOUT:.0f} s: {push_service.pushes(path)}"
    later = "Here now"
    say(bea, chat, later)
    assert push_service.wait_for(about(later), path, timeout=PUSH_TIMEOUT) is not None
    tries = [push for push in push_service.pushes(path) if about(text)(push)]
    assert [push.status for push in tries] == [429, 429, 201], tries
    assert all(push.is_valid for push in tries), [push.errors for push in tries]
    assert len({push.payload["seq"] for push in tries}) == 1


def test_a_student_with_a_socket_open_gets_no_push(push_service):
    aino, bea, cai = Student("Aino"), Student("Bea"), Student("Cai")
    aino_chat, cai_chat = matched(bea, aino, cai)
    aino_path, cai_path = f"online-{uuid.uuid4().hex}", f"offline-{uuid.uuid4().hex}"
    register(aino, push_service.subscription(aino_path))
    register(cai, push_service.subscription(cai_path))
    socket = aino.socket()
    try:
        text = "Heard live, not pushed"
        say(bea, aino_chat, text)
        assert socket.wait_for("message.sent", text=text) is not None, "Aino's socket did not hear the message"

        # The dispatcher has gone past Aino's entry once it has pushed Cai's, written after it.
        later = "Pushed, Cai has no socket"
        say(bea, cai_chat, later)

        assert push_service.wait_for(about(later), cai_path, timeout=PUSH_TIMEOUT) is not None, \
            f"no push to Cai in {PUSH_TIMEOUT:.0f} s: {push_service.pushes(cai_path)}"
        assert list(filter(about(text), push_service.pushes(aino_path))) == []
    finally:
        socket.close()

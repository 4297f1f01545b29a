"""Push to phones through the gateway (DESIGN.md, "Push: reaching a phone in a pocket"): apps register their APNs and
FCM tokens, and an entry no socket took reaches each device as its platform shows it, through stand-ins of Apple's and
Google's services that check the provider token, the access token and every header and field as the real ones do
(pushproviders.py, which scripts/test starts and points the system at): a message once, titled with its sender's first
name and collapsing into its conversation's newest; an offer urgent and dying with its window; the badge the number of
conversations with unread messages. A device its service no longer knows is deleted, a throttled push is tried again
with a longer pause each time and taken once (a socket open means no push on any platform: test_push.py), and nobody
who blocked the sender and nobody who was suspended or deleted their account is pushed, nor pushed about someone who
was."""

import os
import time
import uuid
from contextlib import contextmanager
from datetime import datetime

import jwt
import pytest

from conftest import Student, database, eventually, find, quiet_restaurant
from pushinbox import providers, received, wait_for
from test_push import PUSH_TIMEOUT, devices, ids, matched, say

# The system stack waits PUSH_GRACE_SECONDS (5 s by default) for a socket before it pushes an entry: what should stop
# a push must happen sooner.
PUSH_GRACE = 5.0
LONG_TEXT = ("Kaisa-talo, third floor, the long table by the windows; I'll bring the old exams and two pens for us both"
             " and some coffee")


@pytest.fixture(scope="module")
def stand_ins(system):
    """How scripts/test started the APNs and FCM stand-ins, and the settings the system was given to reach them."""
    if os.environ.get("TARRARE_SYSTEM_ENV"):
        pytest.skip("a stack in containers cannot reach this machine's loopback, where the stand-ins listen")
    described = providers()
    if described is None:
        pytest.skip("the APNs and FCM stand-ins are not this run's (TARRARE_PUSH_PROVIDERS, set by scripts/test)")
    return described


@pytest.fixture(scope="module")
def moderator(stand_ins, system):
    """A moderator of the students' campus, made one in accounts' database as `accounts moderator add EMAIL` does."""
    student = Student("Moderator")
    with database(system, "accounts") as accounts:
        accounts.execute("UPDATE users SET is_moderator = true WHERE id = %s::uuid", (student.id,))
    return student


def new_token(word=""):
    """A device token of the test's own; `word` (gone, bad, busy) says how the stand-ins answer pushes to it."""
    return f"{word}{uuid.uuid4().hex}"


def register(student, platform, token):
    answer = student.post("/v1/devices", {"platform": platform, "token": token})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"].lower()


def about(text):
    """Whether a request is a push of the message `text`."""
    return lambda push: (push.said is not None and push.said["type"] == "message.sent"
                         and push.said["body"] == text[:100])


def issued_at(authorization):
    """The `iat` of a bearer JWT (its signature the stand-in checked)."""
    return jwt.decode(authorization.split(" ", 1)[1], options={"verify_signature": False})["iat"]


def summary(pushes):
    return [(push.status, push.reason, push.said) for push in pushes]


def arrived(platform, token, predicate, what):
    """The first request to the device `token` that satisfies `predicate`, waited for."""
    found = wait_for(predicate, platform, token, timeout=PUSH_TIMEOUT)
    assert found is not None, \
        f"no {what} reached the {platform} device in {PUSH_TIMEOUT:.0f} s: {summary(received(platform, token))}"
    return found


def messages_pushed(platform, token):
    """The texts of the messages pushed to a device, and of what they became (a removed entry), oldest first."""
    return [push.said["body"] for push in received(platform, token)
            if push.said is not None and push.said["type"] in ("message.sent", "entry.removed")]


def unread(student):
    """The student's open conversations, by id, and how many unread messages each holds."""
    answer = student.get("/v1/conversations")
    assert answer.status_code == 200, answer.text
    return {conversation["id"].lower(): conversation["unreadCount"] for conversation in answer.json()["conversations"]}


def devices_kept(system, tokens):
    """How many of the devices with these tokens notifications keeps, whoever they belong to."""
    with database(system, "notifications") as notifications:
        return notifications.execute(
            "SELECT count(*) FROM devices WHERE token = ANY(%s)", (list(tokens),)).fetchone()[0]


def collapse_key(conversation):
    return conversation.lower().replace("-", "")


@contextmanager
def before_the_push():
    """Steps that must all be done before the push they would stop is due; on a machine too slow for that within the
    grace, the test cannot tell and is skipped."""
    started = time.monotonic()
    yield
    taken = time.monotonic() - started
    if taken >= PUSH_GRACE:
        pytest.skip(f"the steps took {taken:.1f} s, past the push grace ({PUSH_GRACE:.0f} s): the push was due")


def leave(student, how, moderator):
    """`student` leaves: `suspended` by a moderator, or `deleted` (their account, by themselves)."""
    if how == "suspended":
        answer = moderator.post(f"/v1/users/{student.id}/suspend", {"reason": "Spam, in the push tests"})
    else:
        answer = student.http.request("DELETE", "/v1/me", json={"password": Student.password})
    assert answer.status_code == 204, answer.text


@pytest.mark.parametrize("platform", ["apns", "fcm"])
def test_a_message_to_a_student_with_no_socket_open_reaches_their_app_once_as_its_platform_shows_it(
        stand_ins, platform):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    token = new_token()
    register(aino, platform, token)

    say(bea, chat, LONG_TEXT)

    push = arrived(platform, token, about(LONG_TEXT), "push of the message")
    assert push.status == 200, summary([push])
    said = push.said
    assert len(LONG_TEXT) > 100 and said["title"] == "Bea" and said["body"] == LONG_TEXT[:100], said
    assert isinstance(said["seq"], int) and said["open"].lower() == f"#/chats/{chat.lower()}", said
    assert said["badge"] == 1, said
    if platform == "apns":
        headers = push.headers
        assert headers["apns-topic"] == stand_ins["apns"]["topic"] and headers["apns-push-type"] == "alert", headers
        assert headers["apns-priority"] == "5", headers
        assert headers["apns-collapse-id"].lower() == collapse_key(chat), headers
        assert int(headers["apns-expiration"]) > push.at.timestamp(), headers
        assert push.payload["aps"]["sound"] == "default", push.payload
    else:
        android = push.payload["message"]["android"]
        assert android["priority"] == "NORMAL" and android["collapse_key"].lower() == collapse_key(chat), android
        assert float(android["ttl"][:-1]) > 0, android
        assert android["notification"]["notification_count"] == 1, android

    # Once: a later message's push has come, and the first one's entry was sent in one request. Still one
    # conversation with unread messages, however many messages.
    later = "See you at six"
    say(bea, chat, later)
    second = arrived(platform, token, about(later), "push of the later message")
    assert second.status == 200 and second.said["seq"] > said["seq"] and second.said["badge"] == 1, second.said
    pushes = received(platform, token)
    assert [p.said["seq"] for p in pushes if p.said].count(said["seq"]) == 1, summary(pushes)
    assert len(list(filter(about(LONG_TEXT), pushes))) == 1, summary(pushes)
    # The credential is kept, not made anew for each push: Apple refuses a provider token renewed more often than every
    # 20 minutes; Google's access token lasts an hour.
    if platform == "apns":
        issued = [issued_at(p.headers["authorization"]) for p in (push, second)]
        assert issued[0] == issued[1] or issued[1] - issued[0] >= 20 * 60, issued
    else:
        assert second.headers["authorization"] == push.headers["authorization"]
        bearer = push.headers["authorization"].split(" ", 1)[1]
        grants = [grant for grant in received("fcm-token") if grant.payload.get("accessToken") == bearer]
        assert len(grants) == 1 and grants[0].status == 200, summary(grants)


@pytest.mark.parametrize("platform", ["apns", "fcm"])
def test_an_offer_is_pushed_urgent_and_expires_with_its_window(stand_ins, platform):
    aino, olli = Student("Aino", mode="delivering"), Student("Olli", mode="ordering")
    porthania = find(olli, "porthania", "building")
    restaurant = quiet_restaurant(aino, porthania)
    token = new_token()
    register(aino, platform, token)
    run_id = order_id = None
    try:
        run_id = aino.when_known(
            "POST", "/v1/runs", {"restaurantId": restaurant["id"], "destinationId": porthania["id"]}).json()["id"]
        ordered_at = time.time()
        order_id = olli.when_known("POST", "/v1/orders", {
            "restaurantId": restaurant["id"], "destinationId": porthania["id"], "items": "Lunch of the day",
        }).json()["id"]

        push = arrived(platform, token, lambda p: p.said is not None and p.said["type"] == "offer.made",
                       "push of the offer")

        socket = aino.socket()
        try:
            offer = socket.wait_for("offer.made", orderId=order_id)
        finally:
            socket.close()
        assert offer is not None, "Aino's feed holds no offer of the order"
        expires_at = datetime.fromisoformat(offer["data"]["expiresAt"]).timestamp()
        assert push.status == 200 and push.said["seq"] == offer["seq"], summary([push])
        # "Olli's order: falafel from Unicafe to Porthania: 60 s to answer" (DESIGN.md).
        assert push.said["title"] == "Olli's order", push.said
        assert push.said["body"].startswith("Lunch of the day from ") and push.said["body"].endswith(" s to answer") \
            and porthania["name"] in push.said["body"], push.said
        if platform == "apns":
            assert push.headers["apns-priority"] == "10", push.headers
            assert abs(int(push.headers["apns-expiration"]) - expires_at) <= 2, (push.headers, expires_at)
        else:
            android = push.payload["message"]["android"]
            ttl = float(android["ttl"][:-1])
            assert android["priority"] == "HIGH", android
            # Reckoned between the order and the push's arrival: what was left of the window then.
            assert expires_at - push.at.timestamp() - 1 <= ttl <= expires_at - ordered_at, (android, expires_at)
    finally:
        if order_id:
            olli.post(f"/v1/orders/{order_id}/cancel")
        if run_id:
            aino.http.delete(f"/v1/runs/{run_id}")


@pytest.mark.parametrize("platform, word, reason", [
    ("apns", "gone", "Unregistered"), ("apns", "bad", "BadDeviceToken"), ("fcm", "gone", "UNREGISTERED"),
], ids=["apns-unregistered", "apns-bad-device-token", "fcm-unregistered"])
def test_a_device_its_service_no_longer_knows_is_deleted_and_pushed_nothing_more(stand_ins, platform, word, reason):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    token = new_token(word)
    other = new_token()
    device, kept = register(aino, platform, token), register(aino, platform, other)

    say(bea, chat, "Are you still coming?")

    refused = arrived(platform, token, lambda push: True, "push")
    assert refused.reason == reason, summary([refused])
    assert eventually(lambda: device not in ids(devices(aino)), timeout=PUSH_TIMEOUT), devices(aino)
    assert kept in ids(devices(aino))
    tried = len(received(platform, token))
    later = "I'm at the door"
    say(bea, chat, later)
    arrived(platform, other, about(later), "push of the later message to the device kept")
    assert len(received(platform, token)) == tried, summary(received(platform, token))


@pytest.mark.parametrize("platform", ["apns", "fcm"])
def test_a_throttled_push_is_tried_again_with_a_longer_pause_each_time_and_taken_once(stand_ins, platform):
    aino, bea = Student("Aino"), Student("Bea")
    [chat] = matched(bea, aino)
    token = new_token("busy")
    register(aino, platform, token)
    text = "Running ten minutes late"

    say(bea, chat, text)

    arrived(platform, token, lambda push: about(text)(push) and push.status == 200, "push of the message, taken")
    later = "Here now"
    say(bea, chat, later)
    arrived(platform, token, lambda push: about(later)(push) and push.status == 200, "push of the later message")
    tries = [push for push in received(platform, token) if about(text)(push)]
    assert [push.status for push in tries] == [429, 429, 200], summary(tries)
    assert len({push.said["seq"] for push in tries}) == 1, summary(tries)
    # A pause of a second or more, then of two or more (lower bounds only: a slow machine lengthens pauses).
    first, second = [(after.at - before.at).total_seconds() for before, after in zip(tries, tries[1:])]
    assert first >= 0.9 and second >= 1.9, (first, second)


@pytest.mark.parametrize("platform", ["apns", "fcm"])
def test_the_badge_is_the_number_of_conversations_with_unread_messages(stand_ins, platform):
    bea, aino, cai = Student("Bea"), Student("Aino"), Student("Cai")
    with_aino, with_cai = matched(bea, aino, cai)
    token = new_token()
    register(bea, platform, token)
    first, second, third = "Room 12 at four?", "Did you get the notes?", "Never mind, found them"

    say(aino, with_aino, first)
    one = arrived(platform, token, about(first), "push of Aino's message")
    say(cai, with_cai, second)
    two = arrived(platform, token, about(second), "push of Cai's message")
    last = next(c for c in bea.get("/v1/conversations").json()["conversations"] if c["id"].lower() == with_aino.lower())
    marked = bea.post(f"/v1/conversations/{with_aino}/read", {"messageId": last["lastMessage"]["id"]})
    assert marked.status_code == 204, marked.text
    assert eventually(lambda: unread(bea).get(with_aino.lower()) == 0), unread(bea)
    say(cai, with_cai, third)
    three = arrived(platform, token, about(third), "push of Cai's second message")

    assert [push.said["badge"] for push in (one, two, three)] == [1, 2, 1], summary([one, two, three])
    if platform == "fcm":
        androids = [push.payload["message"]["android"] for push in (one, two, three)]
        assert [android["notification"]["notification_count"] for android in androids] == [1, 2, 1], androids


def test_a_student_who_blocks_the_sender_at_once_is_not_pushed_the_message(stand_ins):
    bea, aino, cai = Student("Bea"), Student("Aino"), Student("Cai")
    with_aino, with_cai = matched(bea, aino, cai)
    token = new_token()
    register(bea, "apns", token)
    text = "Why did you not answer?"

    with before_the_push():
        say(aino, with_aino, text)
        blocked = bea.post("/v1/blocks", {"userId": aino.id})

    assert blocked.status_code == 201, blocked.text
    # The dispatcher has gone past Aino's message once it has pushed Cai's, written after it.
    later = "The library closes at eight today"
    say(cai, with_cai, later)
    arrived("apns", token, about(later), "push of Cai's message")
    assert messages_pushed("apns", token) == [later], summary(received("apns", token))


@pytest.mark.parametrize("how", ["suspended", "deleted"])
def test_a_student_who_leaves_loses_their_devices_and_is_pushed_nothing_more(stand_ins, system, moderator, how):
    aino, bea, dan = Student("Aino"), Student("Bea"), Student("Dan")
    with_bea, with_dan = matched(aino, bea, dan)
    tokens = {"apns": new_token(), "fcm": new_token()}
    for platform, token in tokens.items():
        register(bea, platform, token)
    dans = new_token()
    register(dan, "fcm", dans)
    text = "Are we still on for Thursday?"

    with before_the_push():
        say(aino, with_bea, text)
        leave(bea, how, moderator)

    assert eventually(lambda: devices_kept(system, tokens.values()) == 0, timeout=PUSH_TIMEOUT), \
        f"{devices_kept(system, tokens.values())} of Bea's devices are still kept"
    # The dispatcher has gone past Aino's message to Bea once it has pushed one to Dan, written after it.
    later = "Thursday at five, then"
    say(aino, with_dan, later)
    arrived("fcm", dans, about(later), "push of Aino's message to Dan")
    assert {platform: messages_pushed(platform, token) for platform, token in tokens.items()} == \
        {"apns": [], "fcm": []}


@pytest.mark.parametrize("how", ["suspended", "deleted"])
def test_nobody_is_pushed_the_message_of_a_student_who_leaves_before_it_goes(stand_ins, moderator, how):
    bea, aino, cai = Student("Bea"), Student("Aino"), Student("Cai")
    with_aino, with_cai = matched(bea, aino, cai)
    token = new_token()
    register(bea, "fcm", token)
    text = "Last chance to buy my old textbooks"

    with before_the_push():
        say(aino, with_aino, text)
        leave(aino, how, moderator)

    # The dispatcher has gone past Aino's message once it has pushed Cai's, written after it.
    later = "Want to study together tomorrow?"
    say(cai, with_cai, later)
    arrived("fcm", token, about(later), "push of Cai's message")
    assert messages_pushed("fcm", token) == [later], summary(received("fcm", token))

"""Chats in the page: live messages both ways, and a socket cut while messages arrive that shows each of them once
when it comes back."""

import time
import uuid

import httpx

from conftest import GATEWAY, signed_up


class Partner:
    """The other side of the chat, using the API as another app would."""

    def __init__(self, name):
        self.http = httpx.Client(base_url=GATEWAY, timeout=30)
        session = signed_up(self.http, f"{name.lower()}.{uuid.uuid4().hex[:10]}@helsinki.fi", name)
        self.id = session["user"]["id"]
        self.http.headers["Authorization"] = f"Bearer {session['accessToken']}"


def tutoring_match(browser, partner):
    """Matches the browser's person with `partner` by a mutual like on a course of their own, through the API with
    the page's own token; answers the match id (which is the chat's)."""
    session = browser.js("return JSON.parse(localStorage.getItem('tarrare.session'))")
    mine = httpx.Client(base_url=GATEWAY, timeout=30, headers={"Authorization": f"Bearer {session['accessToken']}"})
    course = f"WEB-{uuid.uuid4().int % 100000}"
    for client, role in ((mine, "student"), (partner.http, "tutor")):
        answer = client.put("/v1/tutoring/profile", json={"role": role, "courses": [course], "description": "Chat test"})
        assert answer.status_code == 200, answer.text
    first = mine.post("/v1/tutoring/swipes", json={"userId": partner.id, "like": True})
    assert first.status_code == 201, first.text
    second = partner.http.post("/v1/tutoring/swipes", json={"userId": session["user"]["id"], "like": True})
    assert second.status_code == 201 and second.json()["matched"], second.text
    return second.json()["matchId"]


def send(partner, match_id, text, timeout=30.0):
    """Posts `text` as the partner, again while chat answers 404: it learns of the match from matching's event."""
    path = f"/v1/conversations/{match_id}/messages"
    deadline = time.monotonic() + timeout
    while True:
        answer = partner.http.post(path, json={"id": str(uuid.uuid4()), "text": text})
        if answer.status_code != 404 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert answer.status_code != 404, f"chat did not learn of match {match_id} within {timeout:g} s"
    assert answer.status_code == 201, answer.text


def shown_messages(browser):
    return [element.text.split("\n")[0] for element in browser.all("ol.messages li")]


def test_messages_arrive_live_and_a_cut_socket_shows_what_was_missed_once(browsers):
    hanna = browsers("Hanna").sign_up()
    hanna.wait_live()
    partner = Partner("Joonas")
    match_id = tutoring_match(hanna, partner)

    # The chat shows in the list with its unread count once Joonas writes.
    send(partner, match_id, "Hei Hanna!")
    hanna.tab("chats")
    entry = hanna.find(f"a.conversation[data-id='{match_id.lower()}']")
    assert "Joonas" in entry.text
    hanna.wait(lambda: hanna.find("#unread").text == "1")
    hanna.accessible("the chats with an unread one")
    hanna.screenshot("chats")
    entry.click()
    hanna.wait(lambda: shown_messages(hanna) == ["Hei Hanna!"])
    # Reading it clears the badge.
    hanna.wait(lambda: not hanna.find("nav#tabs").find_elements("css selector", "#unread:not([hidden])"))

    hanna.type("Message", "Moi! Kaisa-talo at two?")
    hanna.click("Send")
    hanna.wait(lambda: shown_messages(hanna) == ["Hei Hanna!", "Moi! Kaisa-talo at two?"])
    history = partner.http.get(f"/v1/conversations/{match_id}/messages").json()["messages"]
    assert [message["text"] for message in history][:1] == ["Moi! Kaisa-talo at two?"]
    send(partner, match_id, "Sounds good")
    hanna.wait(lambda: shown_messages(hanna)[-1:] == ["Sounds good"])
    hanna.accessible("a conversation")
    hanna.screenshot("conversation")

    # The network goes; the socket drops; three messages come meanwhile.
    hanna.driver.execute_cdp_cmd("Network.enable", {})
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    hanna.driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    hanna.js("tarrare.feed.drop()")
    hanna.wait(lambda: hanna.connection() != "live")
    hanna.accessible("a conversation offline")
    hanna.screenshot("offline")
    missed = ["Are you there?", "I'll wait by the door", "See you"]
    for text in missed:
        send(partner, match_id, text)
    assert shown_messages(hanna)[-1] == "Sounds good"

    # Back online, the socket resumes after the last seq it saw: each missed message shows once, in order.
    hanna.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
    hanna.wait_live()
    expected = ["Hei Hanna!", "Moi! Kaisa-talo at two?", "Sounds good", *missed]
    hanna.wait(lambda: shown_messages(hanna) == expected)
    hanna.screenshot("after-reconnect")
    # A reload replays nothing either: the page remembers the last seq.
    hanna.driver.refresh()
    hanna.wait(lambda: shown_messages(hanna) == expected)

"""Calls between the two members of a match, in two real Chromiums with fake cameras and microphones, through the
gateway and coturn with relayed candidates only: connected over a relay pair and decoding each other's video; a
declined call; an unanswered one missed; a stranger who cannot ring; a rider who calls the driver of an accepted ride."""

import uuid

import httpx
from selenium.webdriver.common.by import By

from conftest import GATEWAY, signed_up
from test_rides import sign_up_and_accept
from test_tutoring import matched_in_chat


def matched(browsers):
    """Tomas (a tutor) and Sofia (a student) who liked each other's cards, each on their chat with the other."""
    tomas, sofia = matched_in_chat(browsers, "CALL")
    match_id = sofia.driver.current_url.rsplit("/", 1)[1]
    tomas.driver.get(f"{GATEWAY}/#/chats/{match_id}")
    tomas.wait(lambda: tomas.text_of("#chat-title") == "Sofia")
    return tomas, sofia, match_id


def relayed_and_decoding(browser, kind="video"):
    """Whether the call's connection is up over a pair of relay candidates and has received media of `kind` (decoded
    frames of video; packets of audio)."""
    return browser.driver.execute_async_script("""
        const [kind, done] = arguments;
        const pc = document.getElementById("call").pc;
        if (!pc || pc.connectionState !== "connected") return done(false);
        pc.getStats().then((stats) => {
          let pair = null, received = 0;
          stats.forEach((s) => {
            if (s.type === "transport" && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId);
            if (s.type === "inbound-rtp" && s.kind === kind) {
              received += (kind === "video" ? s.framesDecoded : s.packetsReceived) || 0;
            }
          });
          const local = pair && stats.get(pair.localCandidateId), remote = pair && stats.get(pair.remoteCandidateId);
          done(Boolean(local && remote && local.candidateType === "relay" && remote.candidateType === "relay"
            && received > 0));
        }, () => done(false));
    """, kind)


def lines(browser):
    return [bubble.text.split("\n")[0] for bubble in browser.all("ol.messages li")]


def test_a_video_call_through_the_relay_then_a_declined_one_then_a_missed_one(browsers):
    tomas, sofia, match_id = matched(browsers)

    # Sofia calls with video; Tomas's page rings, he answers; both connect through coturn and see each other.
    sofia.click("Video call")
    sofia.sees("Calling Tomas")
    tomas.sees("Sofia is calling (video)")
    tomas.accessible("calls: a call ringing")
    tomas.click("Answer")
    for browser in (tomas, sofia):
        browser.wait(lambda b=browser: relayed_and_decoding(b), timeout=60, message="a relayed call decoding video")
    sofia.sees("In a call with Tomas")
    sofia.accessible("calls: a call under way")
    sofia.screenshot("video-call")
    sofia.click("Mute")
    assert sofia.js("return document.querySelector('#call .local').srcObject.getAudioTracks()[0].enabled") is False
    sofia.click("Camera off")
    assert sofia.js("return document.querySelector('#call .local').srcObject.getVideoTracks()[0].enabled") is False
    tomas.click("Hang up")
    sofia.wait(lambda: sofia.js("return document.getElementById('call').hidden"))
    for browser in (tomas, sofia):
        browser.wait(lambda b=browser: "Call, under a minute" in lines(b))

    # A call Tomas declines.
    sofia.click("Call")
    tomas.sees("Sofia is calling")
    tomas.click("Decline")
    sofia.sees("Tomas declined the call.")
    sofia.wait(lambda: lines(sofia)[-1:] == ["Declined call"])

    # A call nobody answers: missed after its ring's time, and shown to both.
    tomas.driver.get(f"{GATEWAY}/#/me")
    sofia.click("Call")
    tomas.sees("Sofia is calling")
    sofia.sees("No answer.", timeout=60)
    tomas.driver.get(f"{GATEWAY}/#/chats/{match_id}")
    tomas.wait(lambda: lines(tomas)[-1:] == ["Missed call"])

    # A stranger cannot ring either of them.
    with httpx.Client(base_url=GATEWAY, timeout=30) as http:
        token = signed_up(http, f"s{uuid.uuid4().hex[:8]}@helsinki.fi", "Stranger")["accessToken"]
        refused = http.post("/v1/calls", json={"matchId": match_id}, headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 404, refused.text


def test_a_rider_calls_the_driver_of_an_accepted_ride_and_the_driver_hangs_up(browsers):
    ville, rosa = sign_up_and_accept(browsers)
    rosa.click("Call driver")
    rosa.sees(f"Calling {ville.name}")
    ville.sees("is calling")
    ville.click("Answer")
    for browser in (ville, rosa):
        browser.wait(lambda b=browser: relayed_and_decoding(b, "audio"), timeout=60, message="a relayed call's audio")
    # An audio call: no camera to turn off.
    assert not rosa.find("#call").find_element(By.XPATH, ".//button[text()='Camera off']").is_displayed()
    ville.click("Hang up")
    rosa.sees("The call ended.")
    # The driver calls back from the ride's screen.
    ville.click("Call rider")
    rosa.sees("is calling")
    rosa.click("Decline")
    ville.sees("declined the call.")

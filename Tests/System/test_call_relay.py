"""A call between the two members of a match, made as an app makes it: credentials, ring, answer and the WebRTC offer
and answer through the gateway, and the media through the system's own TURN server only (coturn under scripts/up, or
the compose stack's when the container tests run this module). aiortc stands for the two apps."""

import asyncio

from aiortc import RTCConfiguration, RTCIceServer, RTCIceTransportPolicy, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack

from conftest import Student, taken_delivery


def peer(ice_servers):
    """A connection that gathers relayed candidates only, with a microphone's worth of silence to send."""
    servers = [RTCIceServer(urls=server["urls"], username=server.get("username"), credential=server.get("credential"))
               for server in ice_servers]
    connection = RTCPeerConnection(RTCConfiguration(iceServers=servers, iceTransportPolicy=RTCIceTransportPolicy.RELAY))
    connection.addTrack(AudioStreamTrack())
    return connection


def candidates(sdp):
    return [line for line in sdp.splitlines() if line.startswith("a=candidate:")]


async def frames_heard(connection, count=5):
    """Waits for the other side's track and reads `count` audio frames from it."""
    heard = asyncio.get_running_loop().create_future()
    connection.on("track", lambda track: heard.done() or heard.set_result(track))
    for receiver in connection.getReceivers():
        if receiver.track and not heard.done():
            heard.set_result(receiver.track)
    track = await heard
    return [await track.recv() for _ in range(count)]


async def call(caller, callee, caller_socket, callee_socket, match_id):
    def wait(socket, type_, call_id):
        """The frame of `type_` about the call (ids compared as ids: any case)."""
        about = lambda frame: frame.get("type") == type_ and frame["data"]["callId"].lower() == call_id.lower()
        return asyncio.to_thread(socket.wait, about, timeout=60)

    servers = {}
    for student in (caller, callee):
        answer = student.get("/v1/calls/ice-servers")
        assert answer.status_code == 200, answer.text
        servers[student.id] = answer.json()["iceServers"]
        assert any(url.startswith("turn:") for server in servers[student.id] for url in server["urls"])

    # NB: chat opens the match's conversation when it hears of the match: until then the call is 404.
    started = caller.when_known("POST", "/v1/calls", {"matchId": match_id, "video": False})
    call_id = started.json()["id"]
    assert await wait(callee_socket, "call.ringing", call_id)
    answered = callee.post(f"/v1/calls/{call_id}/answer")
    assert answered.status_code == 200, answered.text
    assert await wait(caller_socket, "call.answered", call_id)

    offering, answering = peer(servers[caller.id]), peer(servers[callee.id])
    try:
        # aiortc gathers every candidate before it gives its description: one signal each way, as an app may send.
        def send(student, description):
            """Passes a description on through the gateway: relayed candidates only, or the relay was not reached."""
            found = candidates(description.sdp)
            assert found and all(" typ relay" in line for line in found), description.sdp
            body = {"description": {"type": description.type, "sdp": description.sdp}}
            sent = student.post(f"/v1/calls/{call_id}/signals", body)
            assert sent.status_code == 202, sent.text

        await offering.setLocalDescription(await offering.createOffer())
        send(caller, offering.localDescription)
        signal = await wait(callee_socket, "call.signal", call_id)
        assert signal["data"]["description"]["sdp"] == offering.localDescription.sdp

        await answering.setRemoteDescription(RTCSessionDescription(**signal["data"]["description"]))
        await answering.setLocalDescription(await answering.createAnswer())
        send(callee, answering.localDescription)
        signal = await wait(caller_socket, "call.signal", call_id)
        await offering.setRemoteDescription(RTCSessionDescription(**signal["data"]["description"]))

        # Each hears the other: audio frames decoded on both sides, over relayed candidates alone.
        heard = await asyncio.wait_for(asyncio.gather(frames_heard(offering), frames_heard(answering)), timeout=60)
        assert all(len(frames) == 5 for frames in heard)
        assert offering.iceConnectionState in ("connected", "completed"), offering.iceConnectionState
        assert answering.iceConnectionState in ("connected", "completed"), answering.iceConnectionState
    finally:
        await offering.close()
        await answering.close()

    hung_up = caller.post(f"/v1/calls/{call_id}/hangup")
    assert hung_up.status_code == 200, hung_up.text
    ended = await wait(callee_socket, "call.ended", call_id)
    assert ended["data"]["status"] == "ended", ended


def test_a_matched_pair_talks_through_the_systems_own_turn_server(system):
    eila, oskari = Student("Eila", mode="delivering"), Student("Oskari", mode="ordering")
    with taken_delivery(eila, oskari, "Two coffees") as delivery:
        eila_socket, oskari_socket = eila.socket(), oskari.socket()
        try:
            asyncio.run(call(oskari, eila, oskari_socket, eila_socket, delivery.match_id))
        finally:
            eila_socket.close()
            oskari_socket.close()

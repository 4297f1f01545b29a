// Calls between the two members of an open match: WebRTC in the page, chat's API for the call's state and the
// signals, coturn for the media. Every call goes through the relay (iceTransportPolicy "relay"), so that neither side
// learns the other's network address. One call at a time; its screen sits above every view (#call).

import { describe, h, replace, sameId, toast } from "./dom.js";

/** The page's calls: `start(matchId, name, video)` rings the other member; rings heard on the feed show an incoming
 *  call. */
export function callDesk({ api, feed }) {
  const screen = document.getElementById("call");
  let current = null;

  /** The call under way in this page, with its connection, media and the signals that came before they could go in. */
  function session(call, otherName, video) {
    const pc = new RTCPeerConnection({ iceServers: [], iceTransportPolicy: "relay" });
    const remote = h("video", { class: "remote", autoplay: true, playsinline: true, "aria-label": `${otherName}'s video` });
    const local = h("video", { class: "local", autoplay: true, playsinline: true, muted: true, "aria-label": "Your video" });
    const status = h("p", { class: "status", role: "status" });
    const mute = h("button", { type: "button", "aria-pressed": "false" }, "Mute");
    const camera = h("button", { type: "button", "aria-pressed": "false", hidden: !video }, "Camera off");
    const hangUp = h("button", { type: "button", class: "danger" }, "Hang up");
    const state = { call, otherName, video, pc, status, localVideo: local, local: null, early: [], ended: false };
    pc.ontrack = (event) => {
      remote.srcObject = event.streams[0];
    };
    pc.onicecandidate = (event) => {
      if (event.candidate) signal({ candidate: event.candidate.toJSON() });
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === "connected") status.textContent = `In a call with ${otherName}`;
      if (pc.connectionState === "failed") status.textContent = "The connection failed.";
    };
    mute.addEventListener("click", () => toggle(mute, "audio", "Mute", "Unmute"));
    camera.addEventListener("click", () => toggle(camera, "video", "Camera off", "Camera on"));
    hangUp.addEventListener("click", () => act("hangup"));
    replace(screen, h("h2", {}, video ? `Video call with ${otherName}` : `Call with ${otherName}`), status, remote, local,
      h("div", { class: "actions" }, mute, camera, hangUp));
    screen.hidden = false;
    screen.pc = pc;
    hangUp.focus();

    function toggle(button, kind, on, off) {
      const pressed = button.getAttribute("aria-pressed") !== "true";
      for (const track of state.local?.getTracks() ?? []) if (track.kind === kind) track.enabled = !pressed;
      button.setAttribute("aria-pressed", String(pressed));
      button.textContent = pressed ? off : on;
    }
    return state;
  }

  /** Sends a signal to the other party; one lost is ICE's to make up for (it sends candidates again). */
  function signal(body) {
    if (!current || current.ended) return;
    api.post(`/v1/calls/${current.call.id}/signals`, body).catch(() => {});
  }

  async function act(verb) {
    if (!current) return;
    const call = current.call;
    try {
      await api.post(`/v1/calls/${call.id}/${verb}`, {});
    } catch (error) {
      toast(describe(error));
    }
    end();
  }

  /** Brings in the camera and microphone and the relay's credentials. */
  async function prepare(state) {
    const { iceServers } = await api.get("/v1/calls/ice-servers");
    state.pc.setConfiguration({ iceServers, iceTransportPolicy: "relay" });
    state.local = await navigator.mediaDevices.getUserMedia({ audio: true, video: state.video });
    state.localVideo.srcObject = state.local;
    for (const track of state.local.getTracks()) state.pc.addTrack(track, state.local);
  }

  function end(text) {
    if (!current) return;
    current.ended = true;
    current.pc.close();
    for (const track of current.local?.getTracks() ?? []) track.stop();
    current = null;
    screen.hidden = true;
    screen.pc = null;
    replace(screen);
    if (text) toast(text);
  }

  async function start(matchId, otherName, video) {
    if (current) return toast("You are in a call already.");
    const call = await api.post("/v1/calls", { matchId, video });
    current = session(call, otherName, video);
    current.status.textContent = `Calling ${otherName}…`;
    // NB: the offer waits for the camera and microphone (call.answered may come first).
    current.prepared = prepare(current);
    try {
      await current.prepared;
    } catch (error) {
      toast(describe(error));
      await act("hangup");
    }
  }

  /** A ring heard on the feed: shown when it still rings (a replayed entry of an old call is not). */
  async function ringing(data) {
    if (current || Date.parse(data.expiresAt) <= Date.now()) return;
    const call = await api.get(`/v1/calls/${data.callId}`).catch(() => null);
    if (!call || call.status !== "ringing" || current) return;
    const name = data.callerName;
    current = session(call, name, call.video);
    current.status.textContent = `${name} is calling${call.video ? " (video)" : ""}`;
    const answer = h("button", { type: "button", class: "primary" }, "Answer");
    const decline = h("button", { type: "button" }, "Decline");
    const choice = h("div", { class: "actions incoming" }, answer, decline);
    screen.querySelector(".actions").before(choice);
    screen.classList.add("ringing");
    answer.focus();
    decline.addEventListener("click", () => act("decline"));
    answer.addEventListener("click", async () => {
      current.answered = true;
      choice.remove();
      screen.classList.remove("ringing");
      const state = current;
      try {
        await prepare(state);
        await api.post(`/v1/calls/${call.id}/answer`, {});
        state.status.textContent = `Connecting to ${name}…`;
        // The caller's offer may have come while the camera was being asked for.
        for (const early of state.early.splice(0)) await received(early);
      } catch (error) {
        toast(describe(error));
        await act("hangup");
      }
    });
  }

  /** The other party's offer, answer or candidate. */
  async function received(data) {
    const state = current;
    if (!state || !sameId(data.callId, state.call.id)) return;
    const { pc } = state;
    if (!state.local) {
      state.early.push(data);
      return;
    }
    if (data.description) {
      await pc.setRemoteDescription(data.description);
      if (data.description.type === "offer") {
        await pc.setLocalDescription(await pc.createAnswer());
        signal({ description: { type: pc.localDescription.type, sdp: pc.localDescription.sdp } });
      }
      for (const candidate of state.early.splice(0)) await received(candidate);
    } else if (data.candidate) {
      if (!pc.remoteDescription) state.early.push(data);
      else await pc.addIceCandidate(data.candidate).catch(() => {});
    }
  }

  feed.on("call.ringing", (data) => ringing(data).catch(() => {}));
  feed.on("call.signal", (data) => received(data).catch((error) => console.error(error)));
  // The callee answered: the caller offers. On the callee's other devices it stops ringing.
  feed.on("call.answered", async (data) => {
    const state = current;
    if (!state || !sameId(data.callId, state.call.id)) return;
    if (!sameId(state.call.callerId, api.user?.id)) {
      if (!state.answered) end("Answered on another device.");
      return;
    }
    state.status.textContent = `Connecting to ${state.otherName}…`;
    await state.prepared;
    if (state.ended) return;
    await state.pc.setLocalDescription(await state.pc.createOffer());
    signal({ description: { type: state.pc.localDescription.type, sdp: state.pc.localDescription.sdp } });
  });
  feed.on("call.ended", (data) => {
    if (!current || !sameId(data.callId, current.call.id)) return;
    const words = { declined: `${current.otherName} declined the call.`, missed: "No answer.", cancelled: "The call was cancelled.", ended: "The call ended." };
    end(words[data.status] ?? "The call ended.");
  });

  return { start };
}

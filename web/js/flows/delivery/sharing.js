// The deliverer's position on a match's map: the deliverer shares it (their device's, or where they click the map),
// the orderer follows it.

import { clock, describe } from "../../dom.js";
import { positionSender } from "../../position.js";
import { markers } from "./shared.js";

// A moving position of the deliverer's device goes at most this often (ms); a point they click goes at once.
const sharingPace = 2000;

/** The deliverer's position on `map` and in `position`, shared from the deliverer's device while `share` is pressed; a
 *  failure to send it shows in `problem`. `current()` is the match shown (null until read), `isDeliverer()` whether
 *  the person is its deliverer. Answers {show(point, at), end()}: `end` stops sharing and takes the position away. */
export function delivererPosition(api, life, matchId, { map, position, share, problem }, { current, isDeliverer }) {
  let delivererMarker = null;

  const sender = positionSender({
    send: (point) => api.put(`/v1/matches/${matchId}/location`, point),
    pace: sharingPace,
    sent: (answer) => {
      if (answer?.delivererPosition) show(answer.delivererPosition, answer.delivererPosition.at);
    },
    failed: (error) => {
      problem.textContent = describe(error);
      if (error.status === 409 || error.status === 404) stopSharing();
    },
  });

  function show(point, at) {
    const match = current();
    if (delivererMarker) delivererMarker.moveTo(point);
    else delivererMarker = map.marker(point, isDeliverer() ? markers.me : markers.deliverer, isDeliverer() ? "You" : match.delivererName);
    position.textContent = isDeliverer()
      ? `Your position, sent ${clock(at)}.`
      : `${match.delivererName} was here at ${new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })}.`;
  }

  function startSharing() {
    share.textContent = "Stop sharing";
    share.setAttribute("aria-pressed", "true");
    position.textContent = "Sharing your position. Click the map to set where you are.";
    sender.start();
    sender.follow(() => {
      if (sender.isRunning) position.textContent = "Your browser does not tell your position: click the map where you are.";
    });
  }

  function stopSharing() {
    share.textContent = "Share my position";
    share.setAttribute("aria-pressed", "false");
    sender.stop();
  }
  life.add(stopSharing);

  share.addEventListener("click", () => (sender.isRunning ? stopSharing() : startSharing()));
  map.onClick((point) => {
    const match = current();
    if (!match || !isDeliverer() || match.status !== "active") return;
    if (!sender.isRunning) {
      position.textContent = "Press “Share my position” first, then click the map where you are.";
      return;
    }
    // Shown at once; the server's answer confirms it.
    show(point, new Date().toISOString());
    sender.set(point, true);
  });

  return {
    show,
    end() {
      stopSharing();
      delivererMarker?.remove();
      delivererMarker = null;
      position.textContent = "";
    },
  };
}

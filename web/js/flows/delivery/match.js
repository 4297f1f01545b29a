// The match, for both sides: what is brought from where to where, the deliverer's position on the map (shared by the
// deliverer, followed by the orderer, sharing.js), the chat, completing and cancelling.

import { chatLink, confirmButton, describe, h, replace, sameId } from "../../dom.js";
import { delivererPosition } from "./sharing.js";
import { attempt, choiceMarkers, errorPlace, facts, key, markers } from "./shared.js";

// The other side marking it complete has no event of its own until both have.
const fallbackPoll = 10_000;

/** What the match screen says of `match` to its deliverer (`deliverer`) or its orderer: its title, its status, and
 *  who brings whose order. */
function matchWords(match, deliverer) {
  const other = deliverer ? match.ordererName : match.delivererName;
  const active = match.status === "active";
  const mineDone = deliverer ? match.delivererCompleted : match.ordererCompleted;
  const theirsDone = deliverer ? match.ordererCompleted : match.delivererCompleted;
  const verb = { active: ["bring", "brings"], completed: ["brought", "brought"] }[match.status] ?? ["were to bring", "was to bring"];
  return {
    title: { active: "Delivery under way", completed: "Delivery complete", cancelled: "Delivery cancelled" }[match.status] ?? "Delivery",
    status: !active
      ? (match.status === "completed" ? "Both of you marked it complete. Thanks!" : "This delivery was cancelled.")
      : mineDone
        ? `You marked it complete. Waiting for ${other}.`
        : theirsDone
          ? `${other} marked it complete. Mark it too when you have ${deliverer ? "handed it over" : "your food"}.`
          : deliverer ? `Bring it to ${match.destination.name}, then mark it complete.` : "Follow it on the map; mark it complete when you have your food.",
    who: deliverer ? `You ${verb[0]} ${match.ordererName}'s order.` : `${match.delivererName} ${verb[1]} your order.`,
  };
}

export function matchScreen(root, context, matchId, life) {
  const { api, feed, campus, go } = context;
  const problem = errorPlace();
  const title = h("h2", { id: "match-title" }, "Delivery");
  const status = h("p", { class: "notice", role: "status" }, "Loading…");
  const who = h("p", { class: "who" });
  const details = h("div", {});
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of the delivery" });
  const position = h("p", { class: "hint position", "aria-live": "polite" });
  const share = h("button", { type: "button", "aria-pressed": "false" }, "Share my position");
  const shareRow = h("div", { class: "actions", hidden: true }, share);
  const chat = chatLink(matchId, "Chat", { class: "chat-link", hidden: true });
  const complete = h("button", { type: "button", class: "primary", hidden: true }, "Complete");
  const cancel = confirmButton("Cancel", { hidden: true }, {
    question: "Cancel this delivery?",
    yes: "Yes, cancel",
    act: async () => {
      problem.textContent = "";
      await afterCancel(await api.post(`/v1/matches/${matchId}/cancel`));
    },
    failed: (error) => (problem.textContent = describe(error)),
  });
  const back = h("button", { type: "button", hidden: true }, "Back to delivery");
  const actions = h("div", { class: "actions" }, complete, cancel, back);
  replace(root, h("section", { class: "card delivery match", "aria-labelledby": "match-title", dataset: { matchId: key(matchId) } },
    title, status, who, details, mapElement, position, shareRow, h("p", {}, chat), problem, actions));
  const map = life.map(mapElement, campus.center);
  const places = choiceMarkers(map);
  let match = null;
  let backTo = "delivery";

  const isDeliverer = () => match && sameId(match.delivererId, api.user.id);
  const sharing = delivererPosition(api, life, matchId, { map, position, share, problem }, { current: () => match, isDeliverer });

  function show(next) {
    if (!life.alive) return;
    const first = !match;
    match = next;
    const deliverer = isDeliverer();
    const active = match.status === "active";
    const mineDone = deliverer ? match.delivererCompleted : match.ordererCompleted;
    const words = matchWords(match, deliverer);
    title.textContent = words.title;
    status.dataset.status = match.status;
    status.textContent = words.status;
    who.textContent = words.who;
    replace(details, facts([["What", match.items], ["From", match.restaurant.name], ["To", match.destination.name]]));
    chat.textContent = `Chat with ${deliverer ? match.ordererName : match.delivererName}`;
    chat.hidden = !active;
    complete.hidden = !active || mineDone;
    cancel.hidden = !active;
    back.hidden = active;
    shareRow.hidden = !active || !deliverer;
    if (!active) {
      // A question still asked is moot.
      replace(actions, complete, cancel, back);
      sharing.end();
    } else if (match.delivererPosition) {
      sharing.show(match.delivererPosition, match.delivererPosition.at);
    }
    if (first) {
      places.show("restaurant", match.restaurant, markers.restaurant);
      places.show("destination", match.destination, markers.building);
      position.textContent ||= deliverer
        ? "Share your position so that the orderer can follow you."
        : `${match.delivererName} has not shared a position yet.`;
    }
  }

  async function afterCancel(cancelled) {
    show(cancelled);
    if (isDeliverer()) return;
    // A deliverer's cancel puts the order back to dispatch: the orderer waits again.
    const order = await api.get(`/v1/orders/${match.orderId}`);
    if (order.status === "waiting" || order.status === "offered") {
      status.textContent = `${match.delivererName} cancelled. Your order goes to other deliverers.`;
      back.textContent = "See your order";
      backTo = `delivery/order/${order.id}`;
    }
  }

  complete.addEventListener("click", () => attempt(problem, complete, async () => {
    show(await api.post(`/v1/matches/${matchId}/complete`));
  }));
  back.addEventListener("click", () => go(backTo));

  const load = () => api.get(`/v1/matches/${matchId}`).then(show);
  load().catch((error) => {
    status.textContent = describe(error);
    back.hidden = false;
  });
  life.add(feed.on("location", (data) => {
    if (match && sameId(data.matchId, matchId) && match.status === "active" && !isDeliverer()) {
      sharing.show({ lat: data.lat, lon: data.lon }, data.at);
    }
  }));
  life.add(feed.on("match.completed", (data) => {
    if (sameId(data.match?.matchId, matchId)) load().catch(() => {});
  }));
  life.add(feed.on("match.cancelled", (data) => {
    if (!sameId(data.match?.matchId, matchId)) return;
    api.get(`/v1/matches/${matchId}`).then(afterCancel).catch(() => {});
  }));
  life.every(fallbackPoll, () => {
    if (match?.status === "active") load().catch(() => {});
  });
}

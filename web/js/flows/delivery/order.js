// The orderer's order while it waits for a deliverer; it turns into the match as soon as one accepts.

import { clock, describe, h, replace, sameId } from "../../dom.js";
import { attempt, choiceMarkers, errorPlace, facts, key, markers } from "./shared.js";

// The orderer hears of a match and of expiry; whether a deliverer is being asked meanwhile has no event.
const fallbackPoll = 10_000;

export function orderScreen(root, context, orderId, life) {
  const { api, feed, campus, go } = context;
  const problem = errorPlace();
  const title = h("h2", { id: "order-title" }, "Your order");
  const status = h("p", { class: "notice", role: "status" }, "Loading…");
  const details = h("div", {});
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of your order" });
  const cancel = h("button", { type: "button", class: "danger", hidden: true }, "Cancel order");
  const again = h("button", { type: "button", class: "primary", hidden: true, onclick: () => go("delivery") }, "Order again");
  replace(root, h("section", { class: "card delivery order", "aria-labelledby": "order-title", dataset: { orderId: key(orderId) } },
    title, status, details, mapElement, problem, h("div", { class: "actions" }, cancel, again)));
  const shown = choiceMarkers(life.map(mapElement, campus.center));
  let placed = false;
  let over = false;

  cancel.addEventListener("click", () => attempt(problem, cancel, async () => {
    show(await api.post(`/v1/orders/${orderId}/cancel`));
  }));

  function show(order) {
    if (!life.alive) return;
    if (order.status === "matched" && order.matchId) {
      location.replace(`#/delivery/match/${order.matchId}`);
      return;
    }
    const waiting = order.status === "waiting" || order.status === "offered";
    const texts = {
      waiting: "Waiting for a deliverer…",
      offered: "Asking a deliverer…",
      cancelled: "You cancelled this order.",
      expired: "Nobody took this order in time.",
      completed: "This order was delivered.",
    };
    status.textContent = texts[order.status] ?? order.status;
    status.dataset.status = order.status;
    title.textContent = waiting ? "Finding a deliverer" : "Your order";
    replace(details, facts([
      ["From", order.restaurants.map((place) => place.name).join(" or ")],
      ["To", order.destination.name],
      ["What", order.items],
      ["Ordered", clock(order.createdAt)],
      waiting && !order.requestedRunId ? ["Seen by", "Deliverers at these restaurants, in their open requests"] : [],
      waiting ? ["Waits until", clock(order.expiresAt)] : [],
    ]));
    over = !waiting;
    cancel.hidden = !waiting;
    again.hidden = waiting;
    if (!placed) {
      placed = true;
      order.restaurants.forEach((place, index) => shown.show(`restaurant${index}`, place, markers.restaurant));
      shown.show("destination", order.destination, markers.building);
    }
  }

  const load = () => api.get(`/v1/orders/${orderId}`).then(show);
  load().catch((error) => {
    status.textContent = describe(error);
    again.hidden = false;
  });
  life.add(feed.on("match.accepted", (data) => {
    if (!sameId(data.match?.orderId, orderId)) return;
    location.replace(`#/delivery/match/${data.match.matchId}`);
  }));
  life.add(feed.on("order.expired", (data) => {
    if (sameId(data.orderId, orderId)) load().catch(() => {});
  }));
  life.every(fallbackPoll, () => over || load().catch(() => {}));
}

// The Delivery tab: what the person has under way (asked of the server, so any device comes back to it), else the
// side they choose, ordering or delivering, saved as their mode.

import { describe, h, replace, toast } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { delivererSide } from "./delivering.js";
import { openOffer } from "./offer.js";
import { ordererSide } from "./ordering.js";

/** Where the person left off: an active match, else an order waiting for a deliverer, else an offer to their open
 *  run; null when none. */
async function underWay(api, feed) {
  const { runs, orders, matches } = await api.get("/v1/delivery/current");
  const match = matches.find((entry) => entry.status === "active");
  if (match) return `match/${match.id}`;
  const order = orders.find((entry) => entry.status === "waiting" || entry.status === "offered");
  if (order) return `order/${order.id}`;
  if (runs.length) {
    const offer = await openOffer(api, feed);
    if (offer) return `offer/${offer.offerId}`;
  }
  return null;
}

export function home(root, context, life) {
  const { api } = context;
  let side = api.user.mode === "delivering" ? "delivering" : "ordering";
  let sideLife = null;
  life.add(() => sideLife?.end());
  const content = h("div", { class: "delivery-side" });
  const sides = { ordering: "Ordering", delivering: "Delivering" };
  const switches = Object.entries(sides).map(([value, text]) =>
    h("button", { type: "button", dataset: { side: value }, onclick: () => choose(value) }, text));
  replace(root, h("section", { class: "card delivery home", "aria-labelledby": "delivery-title" },
    h("h2", { id: "delivery-title" }, "Delivery"),
    h("div", { class: "side-switch", role: "group", "aria-label": "I am" }, switches),
    content));

  function render() {
    sideLife?.end();
    sideLife = lifetime();
    for (const button of switches) button.setAttribute("aria-pressed", String(button.dataset.side === side));
    (side === "delivering" ? delivererSide : ordererSide)(content, context, sideLife);
  }

  function choose(value) {
    if (value === side) return;
    side = value;
    render();
    api.patch("/v1/me", { mode: value })
      .then((saved) => api.setUser(saved))
      .catch((error) => toast(describe(error), "error"));
  }

  replace(content, h("p", { class: "hint", role: "status" }, "Loading…"));
  underWay(api, context.feed)
    .then((path) => {
      if (!life.alive) return;
      if (path) location.replace(`#/delivery/${path}`);
      else render();
    })
    .catch(() => life.alive && render());
}

// One's own listings, page by page: withdrawing an active one, the way to the swap of one agreed to.

import { describe, h, replace } from "../../dom.js";
import { listingItem, onExchange, swapLink, withdrawControl } from "./shared.js";

export function mine(page) {
  const { context, life, images, body } = page;
  const { api } = context;
  const list = h("ul", { class: "list listings mine", "aria-label": "My listings" });
  const empty = h("p", { class: "hint", hidden: true }, "You have no listings yet.");
  const error = h("p", { class: "form-error", role: "alert" });
  const more = h("button", { type: "button", hidden: true, onclick: () => load(true) }, "More listings");
  replace(body, h("p", {}, h("a", { class: "button primary", href: "#/exchange/new" }, "New listing")), error, empty, list, more);
  let next = null;
  let loads = 0;

  async function load(append = false) {
    const token = ++loads;
    try {
      const answer = await api.get("/v1/listings", { mine: "true", limit: 20, after: append ? next : undefined });
      if (token !== loads || !life.alive) return;
      error.textContent = "";
      if (!append) {
        images.releaseWithin(list);
        replace(list);
      }
      for (const listing of answer.listings) list.append(mineItem(listing));
      next = answer.next ?? null;
      more.hidden = !next;
      empty.hidden = list.children.length > 0;
    } catch (failure) {
      if (token === loads && life.alive) error.textContent = describe(failure);
    }
  }

  function mineItem(listing) {
    const item = listingItem(images, listing);
    if (listing.status === "active") item.append(withdrawControl(api, listing, () => load()));
    else if (listing.exchangeId) {
      item.append(h("div", { class: "actions" }, swapLink(listing, listing.status === "in_progress" ? "Open the swap" : "See the swap")));
    }
    return item;
  }

  onExchange(page, () => true, () => load());
  load();
}

// One listing: its photo, what is offered and wanted, where to swap, its owner's rating, asking its owner about it in
// a chat before agreeing, and agreeing to swap (or, for its owner, withdrawing it and the way to the swap agreed).

import { chatLink, describe, distance, field, form, h, replace, sameId, values } from "../../dom.js";
import { safetyActions } from "../../safety.js";
import { categories, listingStatus, markers, onExchange, rating, swapLink, withdrawControl } from "./shared.js";

export function listingScreen(page, id) {
  const { context, life, images, body } = page;
  const { api } = context;
  const photo = h("img", { class: "photo listing-photo", alt: "", hidden: true });
  const info = h("div", { class: "listing" });
  const mapElement = h("div", { class: "map small", role: "region", "aria-label": "Where to swap" });
  replace(body, h("p", {}, h("a", { href: "#/exchange" }, "← All listings")), photo, info, mapElement);
  const spot = life.map(mapElement, context.campus.center);
  let photoFor = null;
  let loads = 0;

  async function load() {
    const token = ++loads;
    const listing = await api.get(`/v1/listings/${encodeURIComponent(id)}`);
    const mine = sameId(listing.owner.id, api.user.id);
    const exchange = listing.exchangeId && listing.status === "in_progress"
      ? await api.get(`/v1/exchanges/${encodeURIComponent(listing.exchangeId)}`).catch(() => null)
      : null;
    if (token !== loads || !life.alive) return;
    photo.alt = `Photo of ${listing.offered}`;
    if (listing.photoId && listing.photoId !== photoFor) {
      photoFor = listing.photoId;
      images.show(photo, listing.photoId, "large");
    }
    spot.clear();
    spot.marker(listing.place, markers.listing, listing.place.name ?? listing.offered);
    spot.fit([listing.place]);
    images.releaseWithin(info);
    replace(info, render(listing, mine, exchange));
  }

  function render(listing, mine, exchange) {
    const owner = listing.owner;
    const ownerPhoto = h("img", { class: "avatar", alt: `${owner.name}'s photo`, hidden: true });
    if (owner.photoId) images.show(ownerPhoto, owner.photoId, "small");
    return [
      h("h3", { class: "offered" }, listing.offered),
      h("p", {},
        h("span", { class: "tag" }, categories[listing.category] ?? listing.category),
        h("span", { class: "tag status", dataset: { status: listing.status } }, listingStatus(listing.status))),
      h("p", {}, listing.wanted?.length ? `Wanted in return: ${listing.wanted.join(", ")}` : "Open to offers."),
      listing.note ? h("p", { class: "note" }, listing.note) : null,
      h("p", { class: "hint" }, listing.place.name ? `At ${listing.place.name}` : "At the spot on the map",
        listing.distanceMeters !== undefined ? `, ${distance(listing.distanceMeters)} away` : "", "."),
      h("div", { class: "row owner" }, ownerPhoto,
        h("div", {}, h("p", { class: "name" }, mine ? `${owner.name} (you)` : owner.name), h("p", { class: "hint rating" }, rating(owner, true)))),
      actions(listing, mine, exchange),
      mine ? null : safetyActions(api, {
        userId: owner.id, name: owner.name, listingId: listing.id, onBlocked: () => context.go("exchange"),
      }),
    ];
  }

  function actions(listing, mine, exchange) {
    if (mine && listing.status === "active") {
      return withdrawControl(api, listing, () => context.go("exchange/mine"));
    }
    if (mine && exchange) {
      return h("div", { class: "notice agreed", role: "status" },
        h("p", {}, `${exchange.taker.name} agreed to swap`, exchange.offering ? `, bringing ${exchange.offering}` : "", "."),
        h("div", { class: "actions" }, swapLink(listing, "Open the swap", true), chatLink(exchange.id, "Chat", { class: "button" })));
    }
    if (listing.exchangeId) {
      return h("div", { class: "actions" }, swapLink(listing, listing.status === "in_progress" ? "Open the swap" : "See the swap", true));
    }
    if (listing.status === "in_progress") return h("p", { class: "notice" }, "Someone agreed to this swap first.");
    if (listing.status !== "active") return null;
    return [askControl(listing), form({ "aria-label": "Agree to swap", class: "agree" }, [
      field("What you bring (optional)", h("input", { name: "offering", maxlength: 200, placeholder: "A bag of mints" })),
      h("button", { type: "submit", class: "primary" }, "Agree to swap"),
    ], async (element) => {
      const { offering } = values(element);
      const agreed = await api.post(`/v1/listings/${encodeURIComponent(listing.id)}/agree`, offering ? { offering } : {});
      context.go(`exchange/exchanges/${agreed.id}`);
    })];
  }

  /** "Ask": opens (or finds again) the conversation with the owner about this listing, to bargain before agreeing. */
  function askControl(listing) {
    const first = listing.owner.name.split(" ")[0];
    const problem = h("p", { class: "form-error", role: "alert" });
    const ask = h("button", { type: "button" }, `Ask ${first}`);
    ask.addEventListener("click", async () => {
      ask.disabled = true;
      problem.textContent = "";
      try {
        // Matching learns of a new user a moment after sign-up.
        const question = await api.whenKnown(() => api.post(`/v1/listings/${encodeURIComponent(listing.id)}/questions`, {}));
        location.hash = `#/chats/${encodeURIComponent(question.id)}`;
      } catch (error) {
        problem.textContent = describe(error);
      } finally {
        ask.disabled = false;
      }
    });
    return h("div", { class: "ask" },
      h("p", { class: "hint" }, `Not sure yet? Ask ${first} in a chat: what would they take, where to meet.`),
      h("div", { class: "actions" }, ask), problem);
  }

  onExchange(page, (data) => sameId(data.listingId, id), () => load().catch(() => {}));
  load().catch(page.fail);
}

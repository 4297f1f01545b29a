// What the exchange screens share: the words for categories and statuses, the map's markers, a listing in a list,
// and withdrawing one's listing.

import { confirmButton, describe, distance, h, toast } from "../../dom.js";

export const categories = { sweet: "Sweet", salty: "Salty", drink: "Drink", healthy: "Healthy", other: "Other" };
const listingStatuses = { active: "Available", in_progress: "Swap agreed", exchanged: "Swapped", withdrawn: "Withdrawn" };
const exchangeEvents = ["exchange.agreed", "exchange.cancelled", "exchange.completed"];

/** The kinds of marker on the exchange's maps. */
export const markers = {
  me: { name: "me", color: "#0b6e4f", large: true },
  listing: { name: "listing", color: "#b91c1c" },
  building: { name: "building", color: "#1d4ed8" },
};

/** A listing's status as a person reads it. */
export function listingStatus(status) {
  return listingStatuses[status] ?? status;
}

/** Calls `handler(data)` for the exchange events that `matches(data)`, while `life` lasts. */
export function onExchange({ context, life }, matches, handler) {
  for (const type of exchangeEvents) life.add(context.feed.on(type, (data) => matches(data) && handler(data)));
}

/** "★ 4.5 (2 reviews)", or that there are none yet. */
export function rating(owner, long = false) {
  if (!owner.reviews || owner.rating === undefined) return long ? "No reviews yet" : "";
  const count = `${owner.reviews} review${owner.reviews === 1 ? "" : "s"}`;
  return `★ ${owner.rating.toFixed(1)} (${count})`;
}

/** A listing in a list: its photo, what is offered and wanted, and its owner. */
export function listingItem(images, listing) {
  const picture = h("img", { alt: "", hidden: true });
  if (listing.photoId) images.show(picture, listing.photoId, "small");
  // The box keeps its place without a photo, so that the listings line up.
  const thumb = h("span", { class: "thumb" }, picture);
  const owner = listing.owner;
  // A withdrawn listing has no page of its own any more.
  const link = listing.status === "withdrawn" ? {} : { href: `#/exchange/listings/${encodeURIComponent(listing.id)}` };
  return h("li", {},
    h("a", { class: "listing-item", ...link, dataset: { id: listing.id.toLowerCase() } },
      thumb,
      h("span", { class: "offered" }, listing.offered),
      h("span", { class: "meta" },
        h("span", { class: "tag" }, categories[listing.category] ?? listing.category),
        listing.status !== "active" ? h("span", { class: "tag status" }, listingStatus(listing.status)) : null,
        listing.distanceMeters !== undefined ? ` ${distance(listing.distanceMeters)} · ` : " ",
        `${owner.name} ${rating(owner)}`),
      listing.wanted?.length ? h("span", { class: "wanted" }, `For: ${listing.wanted.join(", ")}`) : null));
}

/** "Withdraw", asked twice, for an active listing of one's own; `after()` once it is withdrawn. */
export function withdrawControl(api, listing, after) {
  const error = h("p", { class: "form-error", role: "alert" });
  const withdraw = confirmButton("Withdraw", { "aria-label": `Withdraw ${listing.offered}` }, {
    question: "Withdraw this listing? Nobody can agree to it after that.",
    yes: "Yes, withdraw",
    act: async () => {
      error.textContent = "";
      await api.delete(`/v1/listings/${encodeURIComponent(listing.id)}`);
      toast("Listing withdrawn");
      after();
    },
    failed: (failure) => (error.textContent = describe(failure)),
  });
  return h("div", {}, h("div", { class: "actions" }, withdraw), error);
}

/** The link to a listing's swap. */
export function swapLink(listing, text, primary = false) {
  return h("a", { class: primary ? "button primary" : "button", href: `#/exchange/exchanges/${encodeURIComponent(listing.exchangeId)}` }, text);
}

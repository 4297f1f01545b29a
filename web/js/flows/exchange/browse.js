// Browsing the campus's listings: search as one types, a category, near me on a map, page by page.

import { clearErrors, distance, field, h, replace, showError } from "../../dom.js";
import { whereAmI } from "../../map.js";
import { categories, listingItem, markers } from "./shared.js";

// Near me looks this far (meters) around the person.
const nearRadius = 2000;

export function browse({ context, life, images, body }) {
  const { api, campus } = context;
  // A text field in the search form (its role says search), as places.js's: the listings found replace the browser's
  // suggestions.
  const q = h("input", { type: "text", name: "q", maxlength: 100, autocomplete: "off", enterkeyhint: "search", placeholder: "Chocolate, oat milk…" });
  const category = h("select", { name: "category" }, h("option", { value: "" }, "All categories"),
    Object.entries(categories).map(([value, text]) => h("option", { value }, text)));
  const near = h("input", { type: "checkbox", name: "near" });
  const where = h("p", { class: "hint", role: "status" });
  const filters = h("form", { class: "filters", role: "search", "aria-label": "Find listings", novalidate: true },
    h("p", { class: "form-error", role: "alert" }),
    field("Search", q, "What is offered or wanted."),
    field("Category", category),
    h("label", { class: "check" }, near, " Near me"),
    where);
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of listings" });
  const list = h("ul", { class: "list listings", "aria-label": "Listings", "aria-live": "polite" });
  const empty = h("p", { class: "hint", hidden: true }, "No listings match. Try other words, or make a listing of your own.");
  const more = h("button", { type: "button", hidden: true, onclick: () => load(true) }, "More listings");
  replace(body, filters, mapElement, empty, list, more);

  const shown = life.map(mapElement, campus.center);
  let position = null;
  let next = null;
  let loads = 0;
  let typing = null;

  /** Whether a point lies on the campus: the map fits to those, not to a listing placed far away. */
  function onCampus(point) {
    const bounds = campus.bounds;
    if (!point) return false;
    if (!bounds) return true;
    return point.lat >= bounds.minLatitude && point.lat <= bounds.maxLatitude
      && point.lon >= bounds.minLongitude && point.lon <= bounds.maxLongitude;
  }

  async function load(append = false) {
    const token = ++loads;
    clearErrors(filters);
    more.disabled = true;
    try {
      const answer = await api.get("/v1/listings", {
        q: q.value.trim(), category: category.value, limit: 20, after: append ? next : undefined,
        near: near.checked && position ? `${position.lat},${position.lon}` : undefined,
        radius: near.checked && position ? nearRadius : undefined,
      });
      if (token !== loads || !life.alive) return;
      if (!append) {
        images.releaseWithin(list);
        replace(list);
        shown.clear();
        if (near.checked && position) shown.marker(position, markers.me, "You");
      }
      for (const listing of answer.listings) {
        list.append(listingItem(images, listing));
        if (listing.place) shown.marker(listing.place, markers.listing, listing.offered, () => context.go(`exchange/listings/${listing.id}`));
      }
      next = answer.next ?? null;
      more.hidden = !next;
      empty.hidden = list.children.length > 0;
      if (!append) {
        const points = answer.listings.map((listing) => listing.place).filter(onCampus);
        if (points.length) shown.fit(near.checked && position ? [position, ...points] : points);
      }
    } catch (error) {
      if (token === loads && life.alive) showError(filters, error);
    } finally {
      more.disabled = false;
    }
  }

  q.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => load(), 300);
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(typing);
    load();
  });
  category.addEventListener("change", () => load());
  near.addEventListener("change", async () => {
    if (near.checked) {
      where.textContent = "Finding where you are…";
      const found = await whereAmI();
      if (!life.alive) return;
      position = found ?? campus.center;
      where.textContent = found
        ? `Within ${distance(nearRadius)} of you, nearest first.`
        : `Your position is not known: within ${distance(nearRadius)} of the campus centre, nearest first.`;
      shown.map.setView([position.lat, position.lon], 15);
    } else {
      where.textContent = "";
      shown.map.setView([campus.center.lat, campus.center.lon], 16);
    }
    load();
  });
  life.add(() => clearTimeout(typing));
  load();
}

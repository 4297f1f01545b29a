// Snack Exchange: browse the campus's listings (search as one types, a category, near me on a map, page by page), a
// listing with its photo and its owner's rating, agreeing to swap, making a listing with a photo at a building or a
// spot on the map, one's own listings (withdraw), and the swap itself for both sides: chat, cancel, complete, review.
// #/exchange browses; #/exchange/new, #/exchange/mine, #/exchange/listings/<id>, #/exchange/exchanges/<id>.

import { chatLink, clearErrors, describe, distance, field, form, h, problem, replace, sameId, showError, toast, uuid, values } from "../dom.js";
import { imageKeeper } from "../images.js";
import { lifetime } from "../lifetime.js";
import { whereAmI } from "../map.js";

const categories = { sweet: "Sweet", salty: "Salty", drink: "Drink", healthy: "Healthy", other: "Other" };
const listingStatuses = { active: "Available", in_progress: "Swap agreed", exchanged: "Swapped", withdrawn: "Withdrawn" };
const exchangeStatuses = { in_progress: "In progress", exchanged: "Swapped", cancelled: "Called off" };
const exchangeEvents = ["exchange.agreed", "exchange.cancelled", "exchange.completed"];
// Near me looks this far (meters) around the person.
const nearRadius = 2000;
// The exchange screen looks again this often (ms) while the swap is under way: the other side marking it done sends
// no event until both have.
const swapRefresh = 5000;

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "exchange",
  title: "Exchange",
  stylesheet: "css/exchange.css",
  notices: {
    "exchange.agreed": (data) => `${data.takerName} wants to swap for your ${data.offered}`,
    "exchange.cancelled": () => "A swap was called off",
  },
};

export function mount(root, context) {
  const { api, feed, params } = context;
  const [screen = "browse", id] = params;
  const me = api.user.id;
  const images = imageKeeper(api);
  const life = lifetime();

  const tabs = [["browse", "#/exchange", "Browse"], ["new", "#/exchange/new", "New listing"], ["mine", "#/exchange/mine", "My listings"]];
  const body = h("div", { class: "exchange-body" });
  replace(root, h("section", { class: "card exchange", "aria-labelledby": "exchange-title" },
    h("h2", { id: "exchange-title" }, "Snack Exchange"),
    h("nav", { class: "subnav", "aria-label": "Snack Exchange" }, tabs.map(([name, href, text]) =>
      h("a", { href, "aria-current": name === screen ? "page" : false }, text))),
    body));

  /** Whether a point lies on the campus: the map fits to those, not to a listing placed far away. */
  function onCampus(point) {
    const bounds = context.campus.bounds;
    if (!point) return false;
    if (!bounds) return true;
    return point.lat >= bounds.minLatitude && point.lat <= bounds.maxLatitude
      && point.lon >= bounds.minLongitude && point.lon <= bounds.maxLongitude;
  }

  function fail(error) {
    if (life.alive) replace(body, h("p", { class: "form-error", role: "alert" }, describe(error)));
  }

  /** Calls `handler(data)` for the exchange events about one listing or exchange. */
  function onExchange(matches, handler) {
    for (const type of exchangeEvents) life.add(feed.on(type, (data) => matches(data) && handler(data)));
  }

  // ---- Browse ----

  function browse() {
    const q = h("input", { type: "search", name: "q", maxlength: 100, autocomplete: "off", placeholder: "Chocolate, oat milk…" });
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

    const shown = life.map(mapElement, context.campus.center);
    let position = null;
    let next = null;
    let loads = 0;
    let typing = null;

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
          if (near.checked && position) shown.marker(position, "me", "You");
        }
        for (const listing of answer.listings) {
          list.append(listingItem(listing));
          if (listing.place) shown.marker(listing.place, "listing", listing.offered, () => context.go(`exchange/listings/${listing.id}`));
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
        position = found ?? context.campus.center;
        where.textContent = found
          ? `Within ${distance(nearRadius)} of you, nearest first.`
          : `Your position is not known: within ${distance(nearRadius)} of the campus centre, nearest first.`;
        shown.map.setView([position.lat, position.lon], 15);
      } else {
        where.textContent = "";
        shown.map.setView([context.campus.center.lat, context.campus.center.lon], 16);
      }
      load();
    });
    life.add(() => clearTimeout(typing));
    load();
  }

  function listingItem(listing) {
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
          listing.status !== "active" ? h("span", { class: "tag status" }, listingStatuses[listing.status] ?? listing.status) : null,
          listing.distanceMeters !== undefined ? ` ${distance(listing.distanceMeters)} · ` : " ",
          `${owner.name} ${rating(owner)}`),
        listing.wanted?.length ? h("span", { class: "wanted" }, `For: ${listing.wanted.join(", ")}`) : null));
  }

  // ---- One listing ----

  function listingScreen() {
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
      const mine = sameId(listing.owner.id, me);
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
      spot.marker(listing.place, "listing", listing.place.name ?? listing.offered);
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
          h("span", { class: "tag status", dataset: { status: listing.status } }, listingStatuses[listing.status] ?? listing.status)),
        h("p", {}, listing.wanted?.length ? `Wanted in return: ${listing.wanted.join(", ")}` : "Open to offers."),
        listing.note ? h("p", { class: "note" }, listing.note) : null,
        h("p", { class: "hint" }, listing.place.name ? `At ${listing.place.name}` : "At the spot on the map",
          listing.distanceMeters !== undefined ? `, ${distance(listing.distanceMeters)} away` : "", "."),
        h("div", { class: "row owner" }, ownerPhoto,
          h("div", {}, h("p", { class: "name" }, mine ? `${owner.name} (you)` : owner.name), h("p", { class: "hint rating" }, rating(owner, true)))),
        actions(listing, mine, exchange),
      ];
    }

    function actions(listing, mine, exchange) {
      const swapLink = (text) => h("a", { class: "button primary", href: `#/exchange/exchanges/${encodeURIComponent(listing.exchangeId)}` }, text);
      if (mine && listing.status === "active") {
        return withdrawControl(listing, () => context.go("exchange/mine"));
      }
      if (mine && exchange) {
        return h("div", { class: "notice agreed", role: "status" },
          h("p", {}, `${exchange.taker.name} agreed to swap`, exchange.offering ? `, bringing ${exchange.offering}` : "", "."),
          h("div", { class: "actions" }, swapLink("Open the swap"), chatLink(exchange.id, "Chat", { class: "button" })));
      }
      if (listing.exchangeId) return h("div", { class: "actions" }, swapLink(listing.status === "in_progress" ? "Open the swap" : "See the swap"));
      if (listing.status === "in_progress") return h("p", { class: "notice" }, "Someone agreed to this swap first.");
      if (listing.status !== "active") return null;
      return form({ "aria-label": "Agree to swap", class: "agree" }, [
        field("What you bring (optional)", h("input", { name: "offering", maxlength: 200, placeholder: "A bag of mints" })),
        h("button", { type: "submit", class: "primary" }, "Agree to swap"),
      ], async (element) => {
        const { offering } = values(element);
        const exchange = await api.post(`/v1/listings/${encodeURIComponent(listing.id)}/agree`, offering ? { offering } : {});
        context.go(`exchange/exchanges/${exchange.id}`);
      });
    }

    onExchange((data) => sameId(data.listingId, id), () => load().catch(() => {}));
    load().catch(fail);
  }

  /** "Withdraw listing", asked twice, for an active listing of one's own. */
  function withdrawControl(listing, after) {
    const place = h("div", { class: "actions" });
    const error = h("p", { class: "form-error", role: "alert" });
    function first() {
      replace(place, h("button", { type: "button", class: "danger", "aria-label": `Withdraw ${listing.offered}`, onclick: ask }, "Withdraw"));
    }
    function ask() {
      const keep = h("button", { type: "button", onclick: () => { first(); place.querySelector("button").focus(); } }, "Keep it");
      replace(place, h("p", { class: "question" }, "Withdraw this listing? Nobody can agree to it after that."),
        h("button", { type: "button", class: "danger", onclick: async (event) => {
          event.currentTarget.disabled = true;
          error.textContent = "";
          try {
            await api.delete(`/v1/listings/${encodeURIComponent(listing.id)}`);
            toast("Listing withdrawn");
            after();
          } catch (failure) {
            error.textContent = describe(failure);
            first();
          }
        } }, "Yes, withdraw"),
        keep);
      keep.focus();
    }
    first();
    return h("div", {}, place, error);
  }

  // ---- A new listing ----

  function create() {
    // The listing's id, made once: sending again after a lost answer returns the listing made the first time.
    const listingId = uuid();
    let uploaded = null;
    let chosen = null;
    let preview = null;
    let searching = null;
    let searches = 0;

    const photoInput = h("input", { type: "file", name: "photoId", accept: "image/jpeg,image/png,image/webp" });
    const photo = h("img", { class: "photo preview", alt: "The photo you chose", hidden: true });
    const building = h("input", { name: "place", type: "search", autocomplete: "off", placeholder: "Porthania" });
    const results = h("ul", { class: "list places", "aria-label": "Buildings found" });
    const chosenText = h("p", { class: "hint chosen", role: "status" }, "No place chosen yet.");
    const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map: tap where to swap" });

    const element = form({ "aria-label": "New listing", class: "new-listing" }, [
      field("What you offer", h("input", { name: "offered", maxlength: 200, required: true, placeholder: "Two Fazer chocolate bars" })),
      field("What you would take", h("input", { name: "wanted", maxlength: 400, placeholder: "Mints, oat milk" }), "Separate the items with commas; leave empty for any offer."),
      field("Category", h("select", { name: "category", required: true },
        Object.entries(categories).map(([value, text]) => h("option", { value }, text)))),
      field("Photo", photoInput, "JPEG, PNG or WebP, at most 8 MB. Its location data is removed."),
      photo,
      field("Building", building, "Type a building's name, or tap the map where to swap."),
      results,
      mapElement,
      chosenText,
      field("Note", h("textarea", { name: "note", rows: 2, maxlength: 500 })),
      h("button", { type: "submit", class: "primary" }, "Create listing"),
    ], async (formElement) => {
      const entered = values(formElement);
      if (!chosen) throw problem("place", "Choose a building or tap the map where to swap.");
      const file = photoInput.files[0];
      if (file && uploaded?.file !== file) {
        try {
          const image = await api.request("POST", "/v1/media", { body: file });
          uploaded = { file, id: image.id };
        } catch (error) {
          error.field ??= "photoId";
          throw error;
        }
      }
      const body = {
        id: listingId,
        offered: entered.offered,
        wanted: entered.wanted.split(",").map((item) => item.trim()).filter(Boolean),
        category: entered.category,
        place: chosen.placeId ? { placeId: chosen.placeId } : { lat: chosen.lat, lon: chosen.lon },
        photoId: file ? uploaded.id : undefined,
        note: entered.note || undefined,
      };
      // Matching learns of the photo (and of a building) from other services' events, a moment after they exist.
      const listing = await api.whenKnown(() => api.post("/v1/listings", body));
      toast("Listing created");
      context.go(`exchange/listings/${listing.id}`);
    });
    replace(body, element);

    const picker = life.map(mapElement, context.campus.center);
    let marker = null;
    function choose(choice) {
      chosen = choice;
      marker?.remove();
      marker = picker.marker(choice, choice.placeId ? "building" : "listing", choice.name ?? "Where to swap");
      chosenText.textContent = choice.name
        ? `Place: ${choice.name}`
        : `Place: the spot on the map (${choice.lat.toFixed(5)}, ${choice.lon.toFixed(5)})`;
      const error = element.querySelector(`#${CSS.escape(building.id)}-error`);
      if (error) error.textContent = "";
      building.removeAttribute("aria-invalid");
    }
    picker.onClick((point) => choose(point));

    photoInput.addEventListener("change", () => {
      if (preview) URL.revokeObjectURL(preview);
      preview = null;
      photo.hidden = true;
      const file = photoInput.files[0];
      if (!file) return;
      preview = URL.createObjectURL(file);
      photo.src = preview;
      photo.hidden = false;
    });
    life.add(() => preview && URL.revokeObjectURL(preview));

    building.addEventListener("input", () => {
      clearTimeout(searching);
      searching = setTimeout(search, 250);
    });
    building.addEventListener("keydown", (event) => {
      // Enter picks the first building found instead of sending the form half filled.
      if (event.key !== "Enter") return;
      event.preventDefault();
      results.querySelector("button")?.click();
    });
    life.add(() => clearTimeout(searching));

    async function search() {
      const token = ++searches;
      const text = building.value.trim();
      if (!text) return replace(results);
      try {
        const answer = await api.get("/v1/places", { q: text, kind: "building", limit: 5 });
        if (token !== searches || !life.alive) return;
        replace(results, answer.places.length
          ? answer.places.map((place) => h("li", { class: "spread" },
            h("button", { type: "button", class: "link", onclick: () => {
              choose({ placeId: place.id, name: place.name, lat: place.latitude, lon: place.longitude });
              picker.fit([{ lat: place.latitude, lon: place.longitude }]);
              building.value = place.name;
              replace(results);
              building.focus();
            } }, place.name),
            place.address?.street ? h("span", { class: "hint" }, [place.address.street, place.address.housenumber].filter(Boolean).join(" ")) : null))
          : h("li", { class: "hint" }, "No building by that name."));
      } catch (error) {
        if (token === searches && life.alive) replace(results, h("li", { class: "form-error", role: "alert" }, describe(error)));
      }
    }
  }

  // ---- My listings ----

  function mine() {
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
      const item = listingItem(listing);
      if (listing.status === "active") item.append(withdrawControl(listing, () => load()));
      else if (listing.exchangeId) {
        item.append(h("div", { class: "actions" }, h("a", { class: "button", href: `#/exchange/exchanges/${encodeURIComponent(listing.exchangeId)}` },
          listing.status === "in_progress" ? "Open the swap" : "See the swap")));
      }
      return item;
    }

    onExchange(() => true, () => load());
    load();
  }

  // ---- The swap ----

  function swap() {
    const place = h("div", { class: "swap" });
    replace(body, place);
    let loads = 0;
    let timer = null;
    let shown = null;

    async function load() {
      const token = ++loads;
      const exchange = await api.get(`/v1/exchanges/${encodeURIComponent(id)}`);
      if (token !== loads || !life.alive) return;
      // A screen the person is using (a review half written) is not redrawn for nothing.
      const key = JSON.stringify(exchange);
      if (key !== shown) {
        shown = key;
        replace(place, render(exchange));
      }
      clearTimeout(timer);
      if (exchange.status === "in_progress") timer = setTimeout(refresh, swapRefresh);
    }

    function refresh() {
      if (document.visibilityState === "visible") load().catch(() => {});
      else timer = setTimeout(refresh, swapRefresh);
    }

    function render(exchange) {
      const isOwner = sameId(exchange.owner.id, me);
      const mine = isOwner ? exchange.owner : exchange.taker;
      const other = isOwner ? exchange.taker : exchange.owner;
      const error = h("p", { class: "form-error", role: "alert" });
      const party = (who, role) => h("li", { class: "spread" },
        h("span", {}, h("span", { class: "name" }, sameId(who.id, me) ? `${who.name} (you)` : who.name), ` ${role}`),
        h("span", { class: who.completed ? "tag done" : "tag" }, who.completed ? "Marked done" : "Not done yet"));
      return [
        h("h3", {}, `Swap: ${exchange.offered}`),
        h("p", { class: "status", role: "status", dataset: { status: exchange.status } }, exchangeStatuses[exchange.status] ?? exchange.status),
        h("ul", { class: "list parties", "aria-label": "Who swaps" },
          party(exchange.owner, "offers it"),
          party(exchange.taker, exchange.offering ? `brings ${exchange.offering}` : "takes it")),
        error,
        exchange.status === "in_progress" ? underway(exchange, mine, other, error) : null,
        exchange.status === "exchanged" ? done(exchange, mine, other) : null,
        exchange.status === "cancelled" ? h("p", { class: "notice" }, "This swap was called off; the listing is available again.") : null,
        h("p", {}, h("a", { href: `#/exchange/listings/${encodeURIComponent(exchange.listingId)}` }, "See the listing")),
      ];
    }

    function underway(exchange, mine, other, error) {
      const actions = h("div", { class: "actions" });
      const act = (path, what) => async (event) => {
        event.currentTarget.disabled = true;
        error.textContent = "";
        try {
          await api.post(`/v1/exchanges/${encodeURIComponent(exchange.id)}/${path}`);
          toast(what);
          await load();
        } catch (failure) {
          error.textContent = describe(failure);
          normal();
        }
      };
      function normal() {
        replace(actions,
          chatLink(exchange.id, "Open chat", { class: "button primary", "aria-label": `Chat with ${other.name}` }),
          mine.completed ? null : h("button", { type: "button", class: "primary", onclick: act("complete", "Marked done") }, "Complete"),
          h("button", { type: "button", class: "danger", onclick: ask }, "Cancel swap"));
      }
      function ask() {
        const keep = h("button", { type: "button", onclick: () => { normal(); actions.querySelector("button.danger").focus(); } }, "Keep it");
        replace(actions, h("p", { class: "question" }, `Call off this swap with ${other.name}? The chat closes.`),
          h("button", { type: "button", class: "danger", onclick: act("cancel", "Swap called off") }, "Yes, call it off"),
          keep);
        keep.focus();
      }
      normal();
      return [
        mine.completed && !other.completed ? h("p", { class: "notice" }, `You marked it done. Waiting for ${other.name}.`) : null,
        h("p", { class: "hint" }, "Meet, swap, then both mark it done."),
        actions,
      ];
    }

    function done(exchange, mine, other) {
      if (mine.reviewed) return h("p", { class: "notice" }, `Swapped! Thanks for reviewing ${other.name}.`);
      return [
        h("p", { class: "notice" }, `Swapped! How was it with ${other.name}?`),
        form({ "aria-label": "Review", class: "review" }, [
          field("Stars", h("select", { name: "stars" },
            [5, 4, 3, 2, 1].map((stars) => h("option", { value: String(stars) }, `${"★".repeat(stars)}${"☆".repeat(5 - stars)} ${stars}`)))),
          field("Review (optional)", h("textarea", { name: "text", rows: 2, maxlength: 1000 })),
          h("button", { type: "submit", class: "primary" }, "Send review"),
        ], async (element) => {
          const { stars, text } = values(element);
          await api.post(`/v1/exchanges/${encodeURIComponent(exchange.id)}/review`, { stars: Number(stars), text: text || undefined });
          toast("Review sent");
          await load();
        }),
      ];
    }

    onExchange((data) => sameId(data.exchangeId, id), () => load().catch(() => {}));
    life.add(feed.on("conversation.closed", (data) => sameId(data.conversationId, id) && load().catch(() => {})));
    life.add(() => clearTimeout(timer));
    load().catch(fail);
  }

  if (screen === "new") create();
  else if (screen === "mine") mine();
  else if (screen === "listings" && id) listingScreen();
  else if (screen === "exchanges" && id) swap();
  else browse();

  return () => {
    life.end();
    images.stop();
  };
}

/** "★ 4.5 (2 reviews)", or that there are none yet. */
function rating(owner, long = false) {
  if (!owner.reviews || owner.rating === undefined) return long ? "No reviews yet" : "";
  const count = `${owner.reviews} review${owner.reviews === 1 ? "" : "s"}`;
  return `★ ${owner.rating.toFixed(1)} (${count})`;
}

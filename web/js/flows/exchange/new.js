// A new listing: what is offered and wanted, a photo, and where to swap (a building found by typing, or a spot on the
// map).

import { describe, field, form, h, problem, replace, toast, uuid, values } from "../../dom.js";
import { categories, markers } from "./shared.js";

export function newListing({ context, life, body }) {
  const { api } = context;
  // The listing's id, made once: sending again after a lost answer returns the listing made the first time.
  const listingId = uuid();
  let uploaded = null;
  let chosen = null;
  let preview = null;
  let searching = null;
  let searches = 0;

  const photoInput = h("input", { type: "file", name: "photoId", accept: "image/jpeg,image/png,image/webp" });
  const photo = h("img", { class: "photo preview", alt: "The photo you chose", hidden: true });
  // A text field, as places.js's: the buildings found below take the place of the browser's suggestions.
  const building = h("input", { name: "place", type: "text", autocomplete: "off", enterkeyhint: "search", placeholder: "A building on campus" });
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
    const listing = {
      id: listingId,
      offered: entered.offered,
      wanted: entered.wanted.split(",").map((item) => item.trim()).filter(Boolean),
      category: entered.category,
      place: chosen.placeId ? { placeId: chosen.placeId } : { lat: chosen.lat, lon: chosen.lon },
      photoId: file ? uploaded.id : undefined,
      note: entered.note || undefined,
    };
    // Matching learns of the photo (and of a building) from other services' events, a moment after they exist.
    const made = await api.whenKnown(() => api.post("/v1/listings", listing));
    toast("Listing created");
    context.go(`exchange/listings/${made.id}`);
  });
  replace(body, element);

  const picker = life.map(mapElement, context.campus.center);
  let marker = null;
  function choose(choice) {
    chosen = choice;
    marker?.remove();
    marker = picker.marker(choice, choice.placeId ? markers.building : markers.listing, choice.name ?? "Where to swap");
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

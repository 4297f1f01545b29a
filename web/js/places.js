// The place field of every screen that asks for a place: the campus's places suggested as one types, a listbox the
// arrow keys walk.

import { describe, field, h, replace } from "./dom.js";

/** A place's address line: street and number, and what kind of place it is. */
function addressOf(place) {
  const address = place.address ?? {};
  return [[address.street, address.housenumber].filter(Boolean).join(" "), place.subtype].filter(Boolean).join(" · ");
}

/** A text field that suggests the campus's places as one types (of `kind` when given, nearest `near()` first): answers
 *  {element, place(), set(place), clear(), stop()}; `onChange(place)` hears each place chosen, and null when
 *  the text no longer names it. Suggestions come ~200 ms after the last key, and an answer to an older query than the
 *  latest is dropped. */
export function placeSearch({ api, label, name, kind, near, hint, placeholder, onChange }) {
  let chosen = null;
  let asked = 0;
  let timer = null;
  // A text field: its suggestions take the place of the browser's own (autocomplete off, which axe-core's checks accept
  // on text fields only).
  const input = h("input", { name, type: "text", autocomplete: "off", spellcheck: false, placeholder, enterkeyhint: "search" });
  const list = h("ul", { class: "suggestions", hidden: true });
  const status = h("p", { class: "hint suggestions-status", role: "status", "aria-live": "polite" });
  const element = h("div", { class: "place-search" }, field(label, input, hint));
  list.id = `${input.id}-suggestions`;
  list.setAttribute("aria-label", `Suggestions for ${label}`);
  input.setAttribute("aria-controls", list.id);
  input.after(list, status);

  function close() {
    list.hidden = true;
    replace(list);
  }

  async function search(query) {
    const ticket = ++asked;
    try {
      const point = near?.();
      const { places } = await api.get("/v1/places", { q: query, kind, limit: 8, near: point ? `${point.lat},${point.lon}` : undefined });
      if (ticket !== asked) return;
      replace(list, places.map((place) => h("li", {},
        h("button", { type: "button", class: "suggestion", dataset: { placeId: String(place.id).toLowerCase() }, onclick: () => set(place, true) },
          h("span", { class: "name" }, place.name),
          addressOf(place) ? h("span", { class: "hint" }, addressOf(place)) : null))));
      list.hidden = places.length === 0;
      status.textContent = places.length ? `${places.length} suggestions` : `Nothing matches “${query}”.`;
    } catch (error) {
      if (ticket !== asked) return;
      close();
      status.textContent = describe(error);
    }
  }

  /** Empties the field without telling `onChange`: the place was given another way (a point on the map). */
  function clear() {
    chosen = null;
    asked += 1;
    clearTimeout(timer);
    input.value = "";
    status.textContent = "";
    close();
  }

  function set(place, focus = false) {
    clear();
    chosen = place;
    input.value = place?.name ?? "";
    input.removeAttribute("aria-invalid");
    onChange?.(place);
    if (focus) input.focus();
  }

  input.addEventListener("input", () => {
    if (chosen) {
      chosen = null;
      onChange?.(null);
    }
    clearTimeout(timer);
    const query = input.value.trim();
    if (!query) {
      asked += 1;
      status.textContent = "";
      return close();
    }
    timer = setTimeout(() => search(query), 200);
  });
  // Arrow keys walk the suggestions, Escape closes them; Tab reaches them too, as buttons.
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && !list.hidden) {
      event.preventDefault();
      list.querySelector("button")?.focus();
    } else if (event.key === "Escape") {
      close();
    } else if (event.key === "Enter" && !list.hidden) {
      event.preventDefault();
      list.querySelector("button")?.click();
    }
  });
  list.addEventListener("keydown", (event) => {
    const buttons = [...list.querySelectorAll("button")];
    const index = buttons.indexOf(document.activeElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = index + (event.key === "ArrowDown" ? 1 : -1);
      (next < 0 ? input : buttons[Math.min(next, buttons.length - 1)]).focus();
    } else if (event.key === "Escape") {
      close();
      input.focus();
    }
  });

  return { element, place: () => chosen, set, clear, stop: () => clearTimeout(timer) };
}

// What the delivery screens share: ids compared, places' points, facts, buttons that wait, and the map's markers.

import { describe, h } from "../../dom.js";

/** The kinds of marker on the delivery maps. */
export const markers = {
  restaurant: { name: "restaurant", color: "#c2410c" },
  building: { name: "building", color: "#1d4ed8" },
  me: { name: "me", color: "#0b6e4f", large: true },
  deliverer: { name: "driver", color: "#7c3aed", large: true },
};

/** An id as a key: ids compare without regard to case. */
export function key(id) {
  return typeof id === "string" ? id.toLowerCase() : "";
}

/** A place's point, whichever service named it (places and matching answer latitude and longitude). */
export function pointOf(place) {
  return place && typeof place.latitude === "number" ? { lat: place.latitude, lon: place.longitude } : null;
}

/** Term-value pairs as a description list; null values are left out. */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

export function errorPlace() {
  return h("p", { class: "form-error", role: "alert" });
}

/** Runs `work` for a button outside a form: the button waits while it runs, and a problem's detail shows in `place`. */
export async function attempt(place, button, work) {
  place.textContent = "";
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    place.textContent = describe(error);
  } finally {
    button.disabled = false;
  }
}

/** Markers for what the person has chosen, one per role, replaced when the choice changes. */
export function choiceMarkers(map) {
  const shown = {};
  return {
    show(role, place, kind, label) {
      shown[role]?.remove();
      delete shown[role];
      const point = pointOf(place);
      if (point) shown[role] = map.marker(point, kind, label ?? place.name);
      const points = Object.values(shown).map((marker) => marker.point);
      if (points.length) map.fit(points);
    },
  };
}

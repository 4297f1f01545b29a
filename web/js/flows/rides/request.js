// The rider's request: a pickup (a click on the map, a place, or where they are), a drop-off if they like, a note,
// and the way back to a request already under way.

import { ApiError } from "../../api.js";
import { describe, field, form, h, problem, replace, sameId, uuid } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { whereAmI } from "../../map.js";
import { currentRide, ifLocationAllowed, markers, placeField, sides, spotName } from "./shared.js";

/** A spot as the API takes it: the place when it is one, else the point. */
function spotBody(spot) {
  return spot.placeId ? { placeId: spot.placeId } : { lat: spot.lat, lon: spot.lon };
}

export function riderHome(root, { api, campus, go, user }) {
  const life = lifetime();
  let pickup = null;
  let dropoff = null;
  // One id per request: a retry after a lost answer gets the first request back instead of a second one.
  const requestId = uuid();

  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map: a click sets the pickup or the drop-off" });
  const map = life.map(mapElement, campus.center);
  let pickupMarker = null;
  let dropoffMarker = null;

  const pickupShown = h("p", { class: "spot", "aria-live": "polite" });
  const dropoffShown = h("p", { class: "spot", "aria-live": "polite" });
  const locating = h("p", { class: "hint", role: "status" });
  const openRide = h("div", { class: "notice", role: "status", hidden: true });
  // Next to the button, where the person looks after pressing it.
  const conflict = h("div", { class: "notice ride-conflict", role: "alert", hidden: true });
  const target = (value, text, checked) => h("label", {},
    h("input", { type: "radio", name: "mapTarget", value, checked }), ` ${text}`);
  const targets = h("fieldset", { class: "map-target" }, h("legend", {}, "A click on the map sets"),
    target("pickup", "Pickup", true), target("dropoff", "Drop-off", false));

  const pickupSearch = placeField(api, campus, life, {
    label: "Pickup place", name: "pickup", hint: "Or click the map, or use your position.",
    onChoose: (spot) => setPickup(spot, true),
  });
  const dropoffSearch = placeField(api, campus, life, {
    label: "Drop-off place (optional)", name: "dropoff", onChoose: (spot) => setDropoff(spot, true),
  });
  const clearDropoff = h("button", { type: "button", class: "link", hidden: true, onclick: () => setDropoff(null) }, "No drop-off");

  function setPickup(spot, fromSearch) {
    pickup = spot;
    if (!fromSearch) pickupSearch.clear();
    pickupMarker?.remove();
    pickupMarker = map.marker(spot, markers.pickup, "Pickup");
    pickupShown.textContent = `Pickup: ${spotName(spot)}`;
    pickupShown.dataset.lat = String(spot.lat);
    pickupShown.dataset.lon = String(spot.lon);
    if (fromSearch) map.fit([spot]);
  }

  function setDropoff(spot, fromSearch) {
    dropoff = spot;
    dropoffMarker?.remove();
    dropoffMarker = spot ? map.marker(spot, markers.dropoff, "Drop-off") : null;
    if (!fromSearch) dropoffSearch.clear();
    dropoffShown.textContent = spot ? `Drop-off: ${spotName(spot)}` : "No drop-off: tell the driver on the way.";
    clearDropoff.hidden = !spot;
    if (spot && fromSearch) map.fit([spot, ...(pickup ? [pickup] : [])]);
  }

  async function useMyPosition() {
    locating.textContent = "Finding where you are…";
    const point = await whereAmI();
    if (!life.alive) return;
    if (point) {
      locating.textContent = "";
      setPickup(point, false);
      map.fit([point]);
    } else {
      locating.textContent = "Your browser does not tell where you are: click the map or search a place.";
    }
  }

  map.onClick((point) => {
    if (targets.querySelector("input:checked")?.value === "dropoff") setDropoff(point, false);
    else setPickup(point, false);
  });

  function showOpenRide(place, id, text) {
    replace(place, text, " ", id ? h("a", { href: `#/rides/${encodeURIComponent(id)}` }, "Go to your ride") : null);
    place.hidden = false;
  }

  const note = h("textarea", { name: "note", rows: 2, maxlength: 500, placeholder: "Where exactly, what to look for" });
  const request = form({ "aria-label": "Ask for a ride", class: "ride-request" }, [
    pickupShown,
    pickupSearch.element,
    h("div", { class: "actions" }, h("button", { type: "button", onclick: useMyPosition }, "Use my position")),
    locating,
    targets,
    mapElement,
    dropoffShown,
    dropoffSearch.element,
    clearDropoff,
    field("Note for the driver (optional)", note),
    conflict,
    h("button", { type: "submit", class: "primary" }, "Ask for a ride"),
  ], async () => {
    conflict.hidden = true;
    if (!pickup) throw problem("pickup", "Choose the pickup: click the map, search a place or use your position.");
    const body = { id: requestId, pickup: spotBody(pickup) };
    if (dropoff) body.dropoff = spotBody(dropoff);
    if (note.value.trim()) body.note = note.value.trim();
    try {
      const ride = await api.post("/v1/rides", body);
      go(`rides/${ride.id}`);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409 && !error.field)) throw error;
      const current = await currentRide(api).catch(() => null);
      if (life.alive) showOpenRide(conflict, sameId(current?.riderId, user.id) ? current.id : null, describe(error));
    }
  });

  replace(root,
    sides("ride"),
    h("section", { class: "card", "aria-labelledby": "ride-form-title" },
      h("h2", { id: "ride-form-title" }, "Ask for a ride"),
      openRide,
      request));
  setDropoff(null);
  pickupShown.textContent = "Pickup: not chosen yet.";
  ifLocationAllowed(life, async () => {
    const point = await whereAmI();
    if (life.alive && point && !pickup) {
      setPickup(point, false);
      map.fit([point]);
    }
  });

  // A request that is not over yet, made here or on another device: the way back to it.
  currentRide(api).then((ride) => {
    if (!life.alive || !ride || !sameId(ride.riderId, user.id)) return;
    showOpenRide(openRide, ride.id, ride.status === "open" ? "You are already waiting for a driver." : "Your driver is on the way.");
  }, () => {});
  return () => life.end();
}

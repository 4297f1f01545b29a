// What the rides screens share: a ride's stages, the map's markers, the ride under way, spots and the place field.

import { ApiError } from "../../api.js";
import { h } from "../../dom.js";
import { placeSearch } from "../../places.js";
import { positionSender } from "../../position.js";

export const underway = new Set(["accepted", "arrived", "started"]);
export const finished = new Set(["completed", "cancelled", "expired"]);
/** A ride's steps from its driver's accepting it, each but the first with the driver's button that reaches it. */
export const steps = [
  { status: "accepted", label: "Accepted" },
  { status: "arrived", label: "Arrived", action: "arrived", button: "Mark arrived" },
  { status: "started", label: "Started", action: "started", button: "Mark started" },
  { status: "completed", label: "Completed", action: "completed", button: "Mark completed" },
];

// The server forgets a driver after 60 s without a position.
const HEARTBEAT = 20_000;
// A moving GPS fix is sent at most this often; a point the person chose goes at once.
const GPS_PACE = 3_000;

/** The kinds of marker on the rides' maps. */
export const markers = {
  pickup: { name: "pickup", color: "#b91c1c" },
  dropoff: { name: "dropoff", color: "#1d4ed8" },
  driver: { name: "driver", color: "#7c3aed", large: true },
};

/** The caller's ride that is not over (the one they asked for, else the one they drive), from any device; null
 *  when there is none. */
export async function currentRide(api) {
  try {
    return await api.get("/v1/rides/current");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

export function coordinates(point) {
  return `${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}`;
}

/** A spot as a person reads it: the place's name, else the point. */
export function spotName(spot) {
  return spot.name ?? `a point on the map (${coordinates(spot)})`;
}

/** The Ride / Drive switch, `current` ("ride" or "drive") pressed. */
export function sides(current) {
  return h("nav", { class: "ride-sides", "aria-label": "Ride or drive" },
    h("a", { href: "#/rides", "aria-current": current === "ride" ? "page" : null }, "Ride"),
    h("a", { href: "#/rides/drive", "aria-current": current === "drive" ? "page" : null }, "Drive"));
}

/** Starts `action` when the browser already may tell where the person is, without asking them. */
export function ifLocationAllowed(life, action) {
  navigator.permissions?.query({ name: "geolocation" })
    .then((status) => {
      if (life.alive && status.state === "granted") action();
    })
    .catch(() => {});
}

/** The shared place field, nearest the campus centre first: `onChoose({placeId, name, lat, lon})` with the place
 *  picked. */
export function placeField(api, campus, life, { label, name, hint, onChoose }) {
  const search = placeSearch({
    api, label, name, hint, placeholder: "Search a place", near: () => campus.center,
    onChange: (place) => place && onChoose({ placeId: place.id, name: place.name, lat: place.latitude, lon: place.longitude }),
  });
  life.add(search.stop);
  return search;
}

/** Sends the driver's position (see position.js), again every 20 s while it runs so that the server keeps them.
 *  `sent(driver)` gets each answer, `failed(error)` each error. */
export function driverPositions(api, { sent, failed }) {
  return positionSender({
    send: (point) => api.put("/v1/rides/driver/location", point), pace: GPS_PACE, heartbeat: HEARTBEAT, sent, failed,
  });
}

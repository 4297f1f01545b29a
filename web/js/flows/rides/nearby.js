// The ride requests near a driver who is online, in a list and on the map, and accepting one.

import { ApiError } from "../../api.js";
import { clock, describe, distance, h, replace } from "../../dom.js";
import { markers } from "./shared.js";

const REQUESTS_RADIUS = 5_000;

/** The "Ride requests near you" card, hidden until the driver has a car, with the requests' pickups on `map`:
 *  `refresh(here)` reads them again around `here`, `showOnline(isOnline)` follows the driver going online or offline.
 *  `isOnline()` says whether the driver is, `failed(error)` tells of a failure to read them, `go(path)` opens a ride
 *  accepted, and `taken()` hears that the driver has a ride already. */
export function nearbyRequests(api, life, map, { isOnline, failed, go, taken }) {
  const requestList = h("ul", { class: "list ride-requests", "aria-label": "Ride requests near you" });
  const requestsHint = h("p", { class: "hint" }, "Go online to see who needs a ride near you.");
  const element = h("section", { class: "card", "aria-labelledby": "requests-title", hidden: true },
    h("h2", { id: "requests-title" }, "Ride requests near you"), requestsHint, requestList);
  let requestMarkers = [];
  let asked = 0;

  async function refresh(here) {
    if (!isOnline() || !here || !life.alive) return;
    const mine = ++asked;
    try {
      const { requests } = await api.get("/v1/rides/requests", { lat: here.lat, lon: here.lon, radius: REQUESTS_RADIUS });
      if (mine !== asked || !life.alive || !isOnline()) return;
      showRequests(requests);
    } catch (error) {
      if (mine === asked && life.alive) failed(error);
    }
  }

  function showRequests(requests) {
    requestMarkers.forEach((marker) => marker.remove());
    requestsHint.hidden = requests.length > 0;
    const items = requests.map((request) => {
      const itemError = h("p", { class: "form-error", role: "alert" });
      const accept = h("button", {
        type: "button", class: "primary", "aria-label": `Accept ${request.riderName}'s ride`,
        onclick: () => acceptRide(request, accept, itemError),
      }, "Accept");
      return h("li", { class: "ride-request-item", dataset: { rideId: request.id.toLowerCase() } },
        h("div", { class: "spread" },
          h("div", {},
            h("p", { class: "name" }, request.riderName),
            h("p", { class: "hint" }, h("span", { class: "distance" }, `${distance(request.distanceMeters)} away`),
              ` · pickup ${request.pickup.name ?? "on the map"}`,
              request.dropoff ? ` · to ${request.dropoff.name ?? "a point on the map"}` : "",
              ` · until ${clock(request.expiresAt)}`)),
          accept),
        request.note ? h("p", { class: "note" }, request.note) : null,
        itemError);
    });
    requestMarkers = requests.map((request, index) => map.marker(request.pickup, markers.pickup,
      `${request.riderName}: ${distance(request.distanceMeters)}`,
      () => items[index].querySelector("button")?.focus()));
    replace(requestList, items);
  }

  async function acceptRide(request, button, itemError) {
    button.disabled = true;
    itemError.textContent = "";
    try {
      const ride = await api.post(`/v1/rides/${encodeURIComponent(request.id)}/accept`);
      if (life.alive) go(`rides/${ride.id}`);
    } catch (error) {
      if (!life.alive) return;
      itemError.textContent = describe(error);
      button.disabled = false;
      if (error instanceof ApiError && error.status === 409) taken();
    }
  }

  function showOnline(online) {
    requestsHint.textContent = online ? "Nobody near you needs a ride right now." : "Go online to see who needs a ride near you.";
    if (!online) {
      replace(requestList);
      requestMarkers.forEach((marker) => marker.remove());
      requestMarkers = [];
      requestsHint.hidden = false;
    }
  }

  return { element, refresh, showOnline };
}

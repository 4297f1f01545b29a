// The driver: their car, going online with a position (the device's, a place, or a click on the map) that keeps them
// findable, the requests near them, and accepting one.

import { ApiError } from "../../api.js";
import { clock, describe, distance, field, form, h, problem, replace, sameId } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { coordinates, currentRide, driverPositions, ifLocationAllowed, markers, placeField, sides, underway } from "./shared.js";

const REQUESTS_REFRESH = 15_000;
const REQUESTS_RADIUS = 5_000;

export function driverHome(root, { api, feed, campus, go, user }) {
  const life = lifetime();
  let online = false;
  let here = null;

  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map: a click sets where you are" });
  const map = life.map(mapElement, campus.center);
  let hereMarker = null;
  let requestMarkers = [];

  // The car.
  const car = h("input", { name: "car", maxlength: 80, required: true, placeholder: "Blue Toyota Yaris, ABC-123" });
  const seats = h("input", { name: "seats", type: "number", min: 1, max: 8, value: "3", required: true, inputmode: "numeric" });
  const carSummary = h("p", { class: "car", hidden: true });
  const profileForm = form({ "aria-label": "Driver profile" }, [
    field("Car", car, "Make, colour and plate, so that the rider finds you."),
    field("Seats", seats, "Seats for riders, 1 to 8."),
    h("button", { type: "submit", class: "primary" }, "Save driver profile"),
  ], async () => {
    const count = Number(seats.value);
    if (!seats.value || !Number.isInteger(count)) throw problem("seats", "Seats is a whole number from 1 to 8.");
    const saved = await api.put("/v1/rides/driver", { car: car.value.trim(), seats: count });
    if (life.alive) showProfile(saved);
  });
  const carDetails = h("details", { class: "driver-profile" }, h("summary", {}, "Edit your car"), profileForm);
  const carCard = h("section", { class: "card", "aria-labelledby": "driver-car-title" },
    h("h2", { id: "driver-car-title" }, "Your car"), carSummary, carDetails);

  // Being online.
  const onlineStatus = h("p", { class: "online-status", role: "status", "aria-live": "polite" }, "You are offline.");
  const myPosition = h("p", { class: "my-position hint", hidden: true });
  const drivingError = h("p", { class: "form-error", role: "alert" });
  const drivingNotice = h("div", { class: "notice", role: "status", hidden: true });
  const goOnlineButton = h("button", { type: "button", class: "primary", onclick: () => goOnline() }, "Go online");
  const goOfflineButton = h("button", { type: "button", class: "danger", hidden: true, onclick: () => goOffline() }, "Go offline");
  const hereSearch = placeField(api, campus, life, {
    label: "Where you are", name: "here", hint: "Or click the map where you are.",
    onChoose: (spot) => {
      setHere(spot, true);
      map.fit([spot]);
    },
  });
  const drivingCard = h("section", { class: "card", "aria-labelledby": "driving-title", hidden: true },
    h("h2", { id: "driving-title" }, "Driving"),
    drivingNotice, onlineStatus, myPosition, drivingError,
    h("div", { class: "actions" }, goOnlineButton, goOfflineButton),
    hereSearch.element, mapElement);

  // The requests near.
  const requestList = h("ul", { class: "list ride-requests", "aria-label": "Ride requests near you" });
  const requestsHint = h("p", { class: "hint" }, "Go online to see who needs a ride near you.");
  const requestsCard = h("section", { class: "card", "aria-labelledby": "requests-title", hidden: true },
    h("h2", { id: "requests-title" }, "Ride requests near you"), requestsHint, requestList);

  replace(root, sides("drive"), carCard, drivingCard, requestsCard);

  const sender = driverPositions(api, {
    sent: (driver) => {
      drivingError.textContent = "";
      if (!online) return;
      onlineStatus.textContent = "You are online: riders near you can find you. Keep this screen open.";
      if (driver.position) setHere(driver.position, false, driver.position.at);
      refreshRequests();
    },
    failed: (error) => (drivingError.textContent = describe(error)),
  });
  life.add(() => sender.stop());

  function showProfile(saved) {
    car.value = saved.car;
    seats.value = String(saved.seats);
    carSummary.textContent = `${saved.car}, ${saved.seats} ${saved.seats === 1 ? "seat" : "seats"}`;
    carSummary.hidden = false;
    carDetails.open = false;
    drivingCard.hidden = false;
    requestsCard.hidden = false;
  }

  /** Where the driver is; `chosen` when they picked it (sent at once while online). */
  function setHere(point, chosen, at) {
    here = { lat: point.lat, lon: point.lon };
    if (hereMarker) hereMarker.moveTo(here);
    else hereMarker = map.marker(here, markers.driver, "You");
    myPosition.textContent = `You are at ${coordinates(here)}${at ? `, sent ${clock(at)}` : online ? "" : " (not shared while offline)"}.`;
    myPosition.dataset.lat = String(here.lat);
    myPosition.dataset.lon = String(here.lon);
    myPosition.hidden = false;
    if (chosen && online) sender.set(here, true);
  }

  function showOnline(isOnline) {
    online = isOnline;
    goOnlineButton.hidden = isOnline;
    goOfflineButton.hidden = !isOnline;
    requestsHint.textContent = isOnline ? "Nobody near you needs a ride right now." : "Go online to see who needs a ride near you.";
    if (!isOnline) {
      onlineStatus.textContent = "You are offline.";
      if (here) setHere(here, false);
      replace(requestList);
      requestMarkers.forEach((marker) => marker.remove());
      requestMarkers = [];
      requestsHint.hidden = false;
    }
  }

  function followDevice() {
    sender.follow((error) => {
      if (!life.alive || here) return;
      onlineStatus.textContent = error.code === error.PERMISSION_DENIED
        ? "Your location is not shared: click the map where you are, or search a place."
        : "Your device cannot tell where you are: click the map where you are, or search a place.";
    });
  }

  function goOnline() {
    drivingError.textContent = "";
    showOnline(true);
    sender.start();
    followDevice();
    if (here) {
      onlineStatus.textContent = "Going online…";
      sender.set(here, true);
    } else {
      onlineStatus.textContent = "Where are you? Click the map, search a place, or allow your location.";
    }
  }

  async function goOffline() {
    goOfflineButton.disabled = true;
    drivingError.textContent = "";
    // A position still under way would put the driver back online after the DELETE.
    await sender.stop();
    try {
      await api.delete("/v1/rides/driver/location");
      if (life.alive) showOnline(false);
    } catch (error) {
      if (life.alive) drivingError.textContent = describe(error);
    } finally {
      goOfflineButton.disabled = false;
    }
  }

  map.onClick((point) => setHere(point, true));

  let asked = 0;
  async function refreshRequests() {
    if (!online || !here || !life.alive) return;
    const mine = ++asked;
    try {
      const { requests } = await api.get("/v1/rides/requests", { lat: here.lat, lon: here.lon, radius: REQUESTS_RADIUS });
      if (mine !== asked || !life.alive || !online) return;
      showRequests(requests);
    } catch (error) {
      if (mine === asked && life.alive) drivingError.textContent = describe(error);
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
      if (error instanceof ApiError && error.status === 409) showDrivingIfAny();
    }
  }

  function showDriving(id) {
    replace(drivingNotice, "You have a ride under way. ", h("a", { href: `#/rides/${encodeURIComponent(id)}` }, "Go to your ride"));
    drivingNotice.hidden = false;
  }

  life.add(feed.on("ride.offered", () => refreshRequests()));
  life.add(feed.on("ride.cancelled", () => refreshRequests()));
  life.every(REQUESTS_REFRESH, () => refreshRequests());

  api.get("/v1/rides/driver").then((saved) => {
    if (!life.alive) return;
    showProfile(saved);
    if (saved.isOnline && saved.position) {
      // Still online from before (a reload, a ride just ended): carry on from the position the server holds.
      showOnline(true);
      setHere(saved.position, false, saved.position.at);
      onlineStatus.textContent = "You are online: riders near you can find you. Keep this screen open.";
      sender.start(saved.position);
      ifLocationAllowed(life, followDevice);
      refreshRequests();
    }
  }, (error) => {
    if (!life.alive) return;
    if (error instanceof ApiError && error.status === 404) {
      carSummary.hidden = false;
      carSummary.textContent = "Add your car to drive others.";
      carDetails.open = true;
      carDetails.querySelector("summary").textContent = "Your car";
    } else {
      carCard.append(h("p", { class: "form-error", role: "alert" }, describe(error)));
    }
  });

  /** Points to the ride this driver drives, if one is under way (accepted here or on another device). */
  function showDrivingIfAny() {
    currentRide(api).then((ride) => {
      if (life.alive && ride && sameId(ride.driver?.id, user.id) && underway.has(ride.status)) showDriving(ride.id);
    }, () => {});
  }
  showDrivingIfAny();
  return () => life.end();
}

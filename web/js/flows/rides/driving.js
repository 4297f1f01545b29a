// Driving: going online with a position (the device's, a place, or a click on the map) that keeps the driver
// findable by riders near them, going offline, and the way to a ride they drive.

import { clock, describe, h, replace } from "../../dom.js";
import { coordinates, driverPositions, ifLocationAllowed, markers, placeField } from "./shared.js";

/** The "Driving" card, hidden until the driver has a car, with its map: answers {element, map, here, online,
 *  resume(position), showDriving(rideId), failed(error)}. `refresh()` reads the requests near again,
 *  `showOnline(isOnline)` hears the driver go online or offline. */
export function drivingCard(api, campus, life, { refresh, showOnline: onlineShown }) {
  let online = false;
  let here = null;

  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map: a click sets where you are" });
  const map = life.map(mapElement, campus.center);
  let hereMarker = null;

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
  const element = h("section", { class: "card", "aria-labelledby": "driving-title", hidden: true },
    h("h2", { id: "driving-title" }, "Driving"),
    drivingNotice, onlineStatus, myPosition, drivingError,
    h("div", { class: "actions" }, goOnlineButton, goOfflineButton),
    hereSearch.element, mapElement);

  const sender = driverPositions(api, {
    sent: (driver) => {
      drivingError.textContent = "";
      if (!online) return;
      onlineStatus.textContent = "You are online: riders near you can find you. Keep this screen open.";
      if (driver.position) setHere(driver.position, false, driver.position.at);
      refresh();
    },
    failed: (error) => (drivingError.textContent = describe(error)),
  });
  life.add(() => sender.stop());

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
    onlineShown(isOnline);
    if (!isOnline) {
      onlineStatus.textContent = "You are offline.";
      if (here) setHere(here, false);
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

  return {
    element,
    map,
    get here() {
      return here;
    },
    get online() {
      return online;
    },
    /** Carries on being online from `position`, the one the server holds (after a reload, or a ride just ended). */
    resume(position) {
      showOnline(true);
      setHere(position, false, position.at);
      onlineStatus.textContent = "You are online: riders near you can find you. Keep this screen open.";
      sender.start(position);
      ifLocationAllowed(life, followDevice);
      refresh();
    },
    showDriving(id) {
      replace(drivingNotice, "You have a ride under way. ", h("a", { href: `#/rides/${encodeURIComponent(id)}` }, "Go to your ride"));
      drivingNotice.hidden = false;
    },
    failed(error) {
      drivingError.textContent = describe(error);
    },
  };
}

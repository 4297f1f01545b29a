// One ride, from either side: the rider waits for a driver and watches them come on the map; the driver marks the
// ride's steps and their position reaches the rider. The rider's screen shows the ride's code, which the driver
// enters to start the ride. Both may call it off, the chat open while it is under way. What the screen says is in
// status.js, its map in tracking.js, its buttons in controls.js.

import { ApiError } from "../../api.js";
import { describe, h, replace, sameId } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { rideControls } from "./controls.js";
import { driverPositions, finished, ifLocationAllowed, underway } from "./shared.js";
import { rideStatus } from "./status.js";
import { rideMap } from "./tracking.js";

// Only a fallback: the socket tells of every change of a ride.
const RIDE_REFRESH = 30_000;

const rideEvents = ["ride.accepted", "ride.arrived", "ride.started", "ride.completed", "ride.cancelled", "ride.reopened", "ride.expired"];

/** `read` as a function whose calls while one read is under way make one more read after it. */
function oneReadAtATime(life, read) {
  let loading = null;
  let loadAgain = false;
  return function load() {
    if (loading) {
      loadAgain = true;
      return loading;
    }
    loading = (async () => {
      try {
        await read();
      } finally {
        loading = null;
        if (loadAgain && life.alive) {
          loadAgain = false;
          load();
        }
      }
    })();
    return loading;
  };
}

export function rideScreen(root, { api, feed, calls, campus, go, user }, rideId) {
  const life = lifetime();
  let ride = null;
  let isDriver = false;
  let sender = null;
  /** Reads the ride again; calls while one read is under way make one more read after it. */
  const load = oneReadAtATime(life, read);

  const told = rideStatus(() => ride);
  const where = h("p", { class: "driver-position", hidden: true });
  const mapHint = h("p", { class: "hint", hidden: true });
  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map of the ride" });
  const error = h("p", { class: "form-error", role: "alert" });
  const controls = rideControls({ act, failed, load, calls });
  const section = h("section", { class: "card ride", "aria-labelledby": "ride-title" },
    told.title, told.status, told.code, told.progress, told.people, where, mapHint, mapElement, told.details, error,
    controls.element);
  replace(root, h("p", { class: "back" }, h("a", { href: "#/rides" }, "← Rides")), section);

  const map = life.map(mapElement, campus.center);
  const tracking = rideMap(api, life, map, where, () => isDriver);
  life.every(1000, told.tick);

  function render() {
    isDriver = sameId(ride.driver?.id, user.id) && !sameId(ride.riderId, user.id);
    section.dataset.status = ride.status;
    section.dataset.side = isDriver ? "driver" : "rider";
    const reached = told.show(ride, isDriver);
    tracking.show(ride, () => isDriver && sender?.point);

    mapHint.hidden = !(isDriver && underway.has(ride.status));
    mapHint.textContent = sender?.isFollowing
      ? "Your device's location moves you on the map; a click on the map does too."
      : "Click the map where you are: the rider sees you move.";

    controls.show(ride, isDriver, reached);

    if (finished.has(ride.status)) {
      sender?.stop();
    } else if (isDriver && underway.has(ride.status)) {
      startSending();
    }
  }

  function startSending() {
    if (sender) {
      if (!sender.isRunning) sender.start();
      return;
    }
    sender = driverPositions(api, {
      sent: (driver) => {
        error.textContent = "";
        if (driver.position) tracking.showDriver(ride, driver.position, driver.position.at);
      },
      failed: (failure) => (error.textContent = describe(failure)),
    });
    life.add(() => sender.stop());
    sender.start(ride.driver?.position);
    ifLocationAllowed(life, () => {
      sender.follow(() => {});
      if (ride) render();
    });
  }

  map.onClick((point) => {
    if (!ride || !isDriver || !underway.has(ride.status) || !sender) return;
    // Shown at once; the server's answer confirms it.
    tracking.showDriver(ride, point, null);
    sender.set(point, true);
  });

  /** Takes the ride a step further (or calls it off); throws what the server answers instead. */
  async function act(action, body = {}) {
    error.textContent = "";
    const answer = await api.post(`/v1/rides/${encodeURIComponent(rideId)}/${action}`, body);
    if (!life.alive) return;
    if (isDriver && action === "cancel") {
      go("rides/drive");
      return;
    }
    ride = answer;
    render();
  }

  function failed(failure) {
    if (!life.alive) return;
    error.textContent = describe(failure);
    load();
  }

  async function read() {
    try {
      const fresh = await api.get(`/v1/rides/${encodeURIComponent(rideId)}`);
      if (!life.alive) return;
      ride = fresh;
      render();
    } catch (failure) {
      if (!life.alive) return;
      if (failure instanceof ApiError && failure.status === 404) {
        told.notFound();
        controls.notFound();
        tracking.hideDriver();
        ride = null;
      } else {
        error.textContent = describe(failure);
      }
    }
  }

  for (const type of rideEvents) {
    life.add(feed.on(type, (data) => {
      if (!sameId(data.rideId, rideId)) return;
      if (type === "ride.accepted" && ride && !isDriver) {
        // Shown at once from the event; the read after it brings the rest.
        ride = { ...ride, status: "accepted", driver: data.driver, matchId: data.matchId, code: data.code };
        render();
      }
      load();
    }));
  }
  life.add(feed.on("location", (data) => {
    if (sameId(data.rideId, rideId) && !isDriver) tracking.showDriver(ride, data, data.at);
  }));
  life.every(RIDE_REFRESH, () => {
    if (ride && !finished.has(ride.status)) load();
  });
  load();
  return () => life.end();
}

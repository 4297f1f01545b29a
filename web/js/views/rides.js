// Rides (My Driver): a rider asks for a ride and watches the driver come; a driver goes online, sees the requests
// near them, accepts one and marks it to its end while their position reaches the rider's map.
//
// #/rides is the rider's request form, #/rides/drive the driver's screen, #/rides/<id> one ride (its rider and its
// driver see it from their side), so that a reload comes back to the same screen.

import { ApiError } from "../api.js";
import { chatLink, clock, describe, distance, field, form, h, problem, replace, sameId, uuid } from "../dom.js";
import { lifetime } from "../lifetime.js";
import { placeSearch } from "../places.js";
import { whereAmI } from "../map.js";

// The server forgets a driver after 60 s without a position.
const HEARTBEAT = 20_000;
// A moving GPS fix is sent at most this often; a point the person chose goes at once.
const GPS_PACE = 3_000;
const REQUESTS_REFRESH = 15_000;
// Only a fallback: the socket tells of every change of a ride.
const RIDE_REFRESH = 30_000;
const REQUESTS_RADIUS = 5_000;

const underway = new Set(["accepted", "arrived", "started"]);
const cancellable = new Set(["open", "accepted", "arrived"]);
const finished = new Set(["completed", "cancelled", "expired"]);
const steps = [
  { status: "accepted", label: "Accepted" },
  { status: "arrived", label: "Arrived", action: "arrived", button: "Mark arrived" },
  { status: "started", label: "Started", action: "started", button: "Mark started" },
  { status: "completed", label: "Completed", action: "completed", button: "Mark completed" },
];
const rideEvents = ["ride.accepted", "ride.arrived", "ride.started", "ride.completed", "ride.cancelled", "ride.reopened", "ride.expired"];

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "rides",
  title: "Rides",
  stylesheet: "css/rides.css",
  notices: {
    "ride.offered": (data) => `${data.riderName} needs a ride`,
    "ride.accepted": (data) => `${data.driver?.name ?? "A driver"} is on the way`,
    "ride.reopened": () => "Your driver gave up the ride; asking others",
    "ride.cancelled": () => "A ride was cancelled",
    "ride.arrived": () => "Your driver has arrived",
  },
};

export function mount(root, context) {
  const [first] = context.params;
  if (first === "drive") return driverHome(root, context);
  if (first) return rideScreen(root, context, first);
  return riderHome(root, context);
}

/** The caller's ride that is not over (the one they asked for, else the one they drive), from any device; null
 *  when there is none. */
async function currentRide(api) {
  try {
    return await api.get("/v1/rides/current");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Meters between two points (haversine). */
function metersBetween(a, b) {
  const radians = (degrees) => (degrees * Math.PI) / 180;
  const dLat = radians(b.lat - a.lat);
  const dLon = radians(b.lon - a.lon);
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.lat)) * Math.cos(radians(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.sqrt(s));
}

function coordinates(point) {
  return `${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}`;
}

/** A spot as a person reads it: the place's name, else the point. */
function spotName(spot) {
  return spot.name ?? `a point on the map (${coordinates(spot)})`;
}

/** A spot as the API takes it: the place when it is one, else the point. */
function spotBody(spot) {
  return spot.placeId ? { placeId: spot.placeId } : { lat: spot.lat, lon: spot.lon };
}

function sides(current) {
  return h("nav", { class: "ride-sides", "aria-label": "Ride or drive" },
    h("a", { href: "#/rides", "aria-current": current === "ride" ? "page" : null }, "Ride"),
    h("a", { href: "#/rides/drive", "aria-current": current === "drive" ? "page" : null }, "Drive"));
}

/** Starts `action` when the browser already may tell where the person is, without asking them. */
function ifLocationAllowed(life, action) {
  navigator.permissions?.query({ name: "geolocation" })
    .then((status) => {
      if (life.alive && status.state === "granted") action();
    })
    .catch(() => {});
}

/** The shared place field, nearest the campus centre first: `onChoose({placeId, name, lat, lon})` with the place
 *  picked. */
function placeField(api, campus, life, { label, name, hint, onChoose }) {
  const search = placeSearch({
    api, label, name, hint, placeholder: "Search a place", near: () => campus.center,
    onChange: (place) => place && onChoose({ placeId: place.id, name: place.name, lat: place.latitude, lon: place.longitude }),
  });
  life.add(search.stop);
  return search;
}

/** Sends the driver's position: at once for a point the person chose, at most every few seconds for a moving GPS fix,
 *  and the latest again every 20 s while running. `sent(driver)` gets each answer, `failed(error)` each error. */
function positionReporter(api, { sent, failed }) {
  let latest = null;
  let running = false;
  let sending = null;
  let again = false;
  let lastSentAt = 0;
  let trailing = null;
  let heartbeat = null;
  let watch = null;

  function send() {
    if (!running || !latest) return;
    if (sending) {
      // The latest point goes as soon as the one under way is answered.
      again = true;
      return;
    }
    const point = latest;
    lastSentAt = Date.now();
    sending = api.put("/v1/rides/driver/location", { lat: point.lat, lon: point.lon })
      .then((driver) => running && sent(driver), (error) => running && failed(error))
      .finally(() => {
        sending = null;
        if (again) {
          again = false;
          send();
        }
      });
  }

  const reporter = {
    get point() {
      return latest;
    },
    get isRunning() {
      return running;
    },
    get isFollowing() {
      return watch !== null;
    },
    /** A new position; `chosen` when the person picked it (sent at once), else a GPS fix (paced). */
    set(point, chosen) {
      latest = { lat: point.lat, lon: point.lon };
      clearTimeout(trailing);
      const wait = chosen ? 0 : Math.max(0, GPS_PACE - (Date.now() - lastSentAt));
      if (wait === 0) send();
      else trailing = setTimeout(send, wait);
    },
    /** Starts sending, from `point` when given (a position the server already holds needs no new request). */
    start(point) {
      if (point) latest = { lat: point.lat, lon: point.lon };
      running = true;
      clearInterval(heartbeat);
      heartbeat = setInterval(send, HEARTBEAT);
    },
    /** Follows the device's position while the browser tells it; `onError(error)` when it does not. */
    follow(onError) {
      if (!navigator.geolocation || watch !== null) return false;
      watch = navigator.geolocation.watchPosition(
        (position) => reporter.set({ lat: position.coords.latitude, lon: position.coords.longitude }, false),
        (error) => {
          if (error.code === error.PERMISSION_DENIED && watch !== null) {
            navigator.geolocation.clearWatch(watch);
            watch = null;
          }
          onError(error);
        },
        { enableHighAccuracy: true, maximumAge: 5_000 });
      return true;
    },
    /** Stops sending; answers once a request under way has been answered, so that nothing lands after. */
    async stop() {
      running = false;
      again = false;
      clearInterval(heartbeat);
      clearTimeout(trailing);
      if (watch !== null) navigator.geolocation.clearWatch(watch);
      watch = null;
      await sending;
    },
  };
  return reporter;
}

// MARK: The rider

function riderHome(root, { api, campus, go, user }) {
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
    pickupMarker = map.marker(spot, "listing", "Pickup");
    pickupShown.textContent = `Pickup: ${spotName(spot)}`;
    pickupShown.dataset.lat = String(spot.lat);
    pickupShown.dataset.lon = String(spot.lon);
    if (fromSearch) map.fit([spot]);
  }

  function setDropoff(spot, fromSearch) {
    dropoff = spot;
    dropoffMarker?.remove();
    dropoffMarker = spot ? map.marker(spot, "building", "Drop-off") : null;
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

// MARK: One ride, from either side

function rideScreen(root, { api, feed, campus, go, user }, rideId) {
  const life = lifetime();
  let ride = null;
  let isDriver = false;
  // The driver's position shown, with the server's time of it: an older one never replaces a newer.
  let driverAt = null;
  let reporter = null;
  let fittedSpots = false;
  let fittedDriver = false;

  const title = h("h2", { id: "ride-title" }, "Your ride");
  const status = h("p", { class: "ride-status", role: "status", "aria-live": "polite" });
  const progress = h("ol", { class: "ride-steps", "aria-label": "Progress" });
  const people = h("div", { class: "ride-people" });
  const where = h("p", { class: "driver-position", hidden: true });
  const mapHint = h("p", { class: "hint", hidden: true });
  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map of the ride" });
  const details = h("dl", { class: "ride-details" });
  const error = h("p", { class: "form-error", role: "alert" });
  const actions = h("div", { class: "actions" });
  const section = h("section", { class: "card ride", "aria-labelledby": "ride-title" },
    title, status, progress, people, where, mapHint, mapElement, details, error, actions);
  replace(root, h("p", { class: "back" }, h("a", { href: "#/rides" }, "← Rides")), section);

  const map = life.map(mapElement, campus.center);
  let pickupMarker = null;
  let dropoffMarker = null;
  let driverMarker = null;

  let countdown = null;
  function tick() {
    if (!countdown || ride?.status !== "open") return;
    const left = Math.max(0, Date.parse(ride.expiresAt) - Date.now());
    const seconds = Math.ceil(left / 1000);
    countdown.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }
  life.every(1000, tick);

  /** Puts the driver where `point` is; to the rider, unless the one shown is newer (`at` is the server's time of it:
   *  a frame can overtake the read of the ride). The driver's own positions come in the order they were sent. */
  function showDriver(point, at) {
    if (!ride || !underway.has(ride.status) || !point) return;
    if (!isDriver && at) {
      const time = Date.parse(at);
      if (driverAt !== null && time < driverAt) return;
      driverAt = time;
    }
    const driverPoint = { lat: point.lat, lon: point.lon };
    if (driverMarker) driverMarker.moveTo(driverPoint);
    else driverMarker = map.marker(driverPoint, "driver", isDriver ? "You" : ride.driver?.name ?? "Driver");
    const meters = metersBetween(driverPoint, ride.pickup);
    const away = meters < 25 ? "at the pickup" : `${distance(meters)} from the pickup`;
    where.textContent = isDriver
      ? `You are ${away}.`
      : meters < 25 ? "Driver is at the pickup." : `Driver is ${distance(meters)} away.`;
    if (at) where.append(h("span", { class: "hint" }, ` ${isDriver ? "Sent" : "Seen"} ${clock(at)}.`));
    where.dataset.lat = String(driverPoint.lat);
    where.dataset.lon = String(driverPoint.lon);
    where.hidden = false;
    if (!fittedDriver) {
      fittedDriver = true;
      map.fit([ride.pickup, driverPoint]);
    } else if (!map.map.getBounds().contains([driverPoint.lat, driverPoint.lon])) {
      map.map.panTo([driverPoint.lat, driverPoint.lon]);
    }
  }

  function hideDriver() {
    driverMarker?.remove();
    driverMarker = null;
    driverAt = null;
    fittedDriver = false;
    where.hidden = true;
    delete where.dataset.lat;
    delete where.dataset.lon;
  }

  function headline() {
    const driverName = ride.driver?.name ?? "Your driver";
    if (isDriver) {
      return {
        accepted: [`Pick up ${ride.riderName}`, "Drive to the pickup. Click the map to show the rider where you are."],
        arrived: [`Waiting for ${ride.riderName}`, "You are at the pickup. Mark the ride started once they are in."],
        started: [`Driving ${ride.riderName}`, "Mark the ride completed when you are there."],
        completed: ["Ride completed", "Thanks for driving."],
        cancelled: [`${ride.riderName} cancelled the ride`, "It is off; nothing more to do."],
        open: ["You gave up this ride", "It is offered to other drivers."],
        expired: ["This request expired", ""],
      }[ride.status];
    }
    return {
      open: ["Looking for a driver…", "Drivers near the pickup are asked now. The request ends in "],
      accepted: [`${driverName} is coming`, "Wait at the pickup; the map shows where they are."],
      arrived: [`${driverName} has arrived`, "Meet them at the pickup."],
      started: ["On your way", "Enjoy the ride."],
      completed: ["Ride completed", "You have arrived."],
      cancelled: ["Ride cancelled", "This ride is off."],
      expired: ["No driver this time", "Nobody accepted the request in time."],
    }[ride.status];
  }

  function render() {
    isDriver = sameId(ride.driver?.id, user.id) && !sameId(ride.riderId, user.id);
    section.dataset.status = ride.status;
    section.dataset.side = isDriver ? "driver" : "rider";
    const [heading, sentence] = headline() ?? [ride.status, ""];
    title.textContent = heading;
    countdown = null;
    if (!isDriver && ride.status === "open") {
      countdown = h("span", { class: "countdown" });
      replace(status, sentence, countdown, ".");
      tick();
    } else {
      replace(status, sentence);
    }

    const reached = steps.findIndex((step) => step.status === ride.status);
    progress.hidden = !underway.has(ride.status) && ride.status !== "completed";
    replace(progress, steps.map((step, index) => h("li", {
      dataset: index <= reached ? { done: "" } : {},
      "aria-current": index === reached ? "step" : null,
    }, step.label)));

    if (isDriver) {
      replace(people, h("p", { class: "name" }, `Rider: ${ride.riderName}`));
    } else if (ride.driver) {
      replace(people,
        h("p", { class: "name" }, ride.driver.name),
        h("p", { class: "car" }, ride.driver.car),
        h("p", { class: "hint" }, `${ride.driver.seats} ${ride.driver.seats === 1 ? "seat" : "seats"}`));
    } else {
      replace(people);
    }

    replace(details,
      h("dt", {}, "Pickup"), h("dd", {}, spotName(ride.pickup)),
      ride.dropoff ? [h("dt", {}, "Drop-off"), h("dd", {}, spotName(ride.dropoff))] : null,
      ride.note ? [h("dt", {}, "Note"), h("dd", { class: "note" }, ride.note)] : null);

    pickupMarker ??= map.marker(ride.pickup, "listing", `Pickup: ${spotName(ride.pickup)}`);
    if (ride.dropoff) dropoffMarker ??= map.marker(ride.dropoff, "building", `Drop-off: ${spotName(ride.dropoff)}`);
    if (!fittedSpots) {
      fittedSpots = true;
      map.fit([ride.pickup, ...(ride.dropoff ? [ride.dropoff] : [])]);
    }
    if (!underway.has(ride.status)) {
      hideDriver();
    } else if (isDriver && reporter?.point) {
      // The driver's own latest choice wins over a position read before it was sent.
    } else if (ride.driver?.position) {
      showDriver(ride.driver.position, ride.driver.position.at);
    }

    mapHint.hidden = !(isDriver && underway.has(ride.status));
    mapHint.textContent = reporter?.isFollowing
      ? "Your device's location moves you on the map; a click on the map does too."
      : "Click the map where you are: the rider sees you move.";

    const buttons = [];
    if (isDriver) {
      const next = steps[reached + 1];
      if (underway.has(ride.status) && next?.action) {
        buttons.push(h("button", { type: "button", class: "primary", onclick: (event) => act(event, next.action) }, next.button));
      }
    }
    if (ride.matchId && underway.has(ride.status)) {
      buttons.push(chatLink(ride.matchId,
        isDriver ? `Chat with ${ride.riderName}` : `Chat with ${ride.driver?.name ?? "your driver"}`, { class: "chat-link" }));
    }
    if (cancellable.has(ride.status) && (isDriver ? ride.status !== "open" : true)) {
      buttons.push(h("button", { type: "button", class: "danger", onclick: (event) => act(event, "cancel") },
        isDriver ? "Give up the ride" : ride.status === "open" ? "Cancel request" : "Cancel ride"));
    }
    if (finished.has(ride.status) || (isDriver && ride.status === "open")) {
      buttons.push(isDriver
        ? h("a", { href: "#/rides/drive" }, "Back to driving")
        : h("a", { href: "#/rides" }, "Ask for another ride"));
    }
    replace(actions, buttons);

    if (finished.has(ride.status)) {
      reporter?.stop();
    } else if (isDriver && underway.has(ride.status)) {
      startReporting();
    }
  }

  function startReporting() {
    if (reporter) {
      if (!reporter.isRunning) reporter.start();
      return;
    }
    reporter = positionReporter(api, {
      sent: (driver) => {
        error.textContent = "";
        if (driver.position) showDriver(driver.position, driver.position.at);
      },
      failed: (failure) => (error.textContent = describe(failure)),
    });
    life.add(() => reporter.stop());
    reporter.start(ride.driver?.position);
    ifLocationAllowed(life, () => {
      reporter.follow(() => {});
      if (ride) render();
    });
  }

  map.onClick((point) => {
    if (!ride || !isDriver || !underway.has(ride.status) || !reporter) return;
    // Shown at once; the server's answer confirms it.
    showDriver(point, null);
    reporter.set(point, true);
  });

  async function act(event, action) {
    const button = event.currentTarget;
    button.disabled = true;
    error.textContent = "";
    try {
      const answer = await api.post(`/v1/rides/${encodeURIComponent(rideId)}/${action}`);
      if (!life.alive) return;
      if (isDriver && action === "cancel") {
        go("rides/drive");
        return;
      }
      ride = answer;
      render();
    } catch (failure) {
      if (!life.alive) return;
      error.textContent = describe(failure);
      button.disabled = false;
      load();
    }
  }

  let loading = null;
  let loadAgain = false;
  /** Reads the ride again; calls while one read is under way make one more read after it. */
  async function load() {
    if (loading) {
      loadAgain = true;
      return loading;
    }
    loading = (async () => {
      try {
        const fresh = await api.get(`/v1/rides/${encodeURIComponent(rideId)}`);
        if (!life.alive) return;
        ride = fresh;
        render();
      } catch (failure) {
        if (!life.alive) return;
        if (failure instanceof ApiError && failure.status === 404) {
          title.textContent = "Ride not found";
          replace(status, "This ride is not yours to see, or it was given up.");
          replace(actions, h("a", { href: "#/rides" }, "Ask for a ride"), h("a", { href: "#/rides/drive" }, "Drive"));
          hideDriver();
          ride = null;
        } else {
          error.textContent = describe(failure);
        }
      } finally {
        loading = null;
        if (loadAgain && life.alive) {
          loadAgain = false;
          load();
        }
      }
    })();
    return loading;
  }

  for (const type of rideEvents) {
    life.add(feed.on(type, (data) => {
      if (!sameId(data.rideId, rideId)) return;
      if (type === "ride.accepted" && ride && !isDriver) {
        // Shown at once from the event; the read after it brings the rest.
        ride = { ...ride, status: "accepted", driver: data.driver, matchId: data.matchId };
        render();
      }
      load();
    }));
  }
  life.add(feed.on("location", (data) => {
    if (sameId(data.rideId, rideId) && !isDriver) showDriver(data, data.at);
  }));
  life.every(RIDE_REFRESH, () => {
    if (ride && !finished.has(ride.status)) load();
  });
  load();
  return () => life.end();
}

// MARK: The driver

function driverHome(root, { api, feed, campus, go, user }) {
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

  const reporter = positionReporter(api, {
    sent: (driver) => {
      drivingError.textContent = "";
      if (!online) return;
      onlineStatus.textContent = "You are online: riders near you can find you. Keep this screen open.";
      if (driver.position) setHere(driver.position, false, driver.position.at);
      refreshRequests();
    },
    failed: (error) => (drivingError.textContent = describe(error)),
  });
  life.add(() => reporter.stop());

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
    else hereMarker = map.marker(here, "driver", "You");
    myPosition.textContent = `You are at ${coordinates(here)}${at ? `, sent ${clock(at)}` : online ? "" : " (not shared while offline)"}.`;
    myPosition.dataset.lat = String(here.lat);
    myPosition.dataset.lon = String(here.lon);
    myPosition.hidden = false;
    if (chosen && online) reporter.set(here, true);
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
    reporter.follow((error) => {
      if (!life.alive || here) return;
      onlineStatus.textContent = error.code === error.PERMISSION_DENIED
        ? "Your location is not shared: click the map where you are, or search a place."
        : "Your device cannot tell where you are: click the map where you are, or search a place.";
    });
  }

  function goOnline() {
    drivingError.textContent = "";
    showOnline(true);
    reporter.start();
    followDevice();
    if (here) {
      onlineStatus.textContent = "Going online…";
      reporter.set(here, true);
    } else {
      onlineStatus.textContent = "Where are you? Click the map, search a place, or allow your location.";
    }
  }

  async function goOffline() {
    goOfflineButton.disabled = true;
    drivingError.textContent = "";
    // A position still under way would put the driver back online after the DELETE.
    await reporter.stop();
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
    requestMarkers = requests.map((request, index) => map.marker(request.pickup, "listing",
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
      reporter.start(saved.position);
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

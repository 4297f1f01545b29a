// One ride, from either side: the rider waits for a driver and watches them come on the map; the driver marks the
// ride's steps and their position reaches the rider. The rider's screen shows the ride's code, which the driver
// enters to start the ride. Both may call it off, the chat open while it is under way.

import { ApiError } from "../../api.js";
import { chatLink, clock, confirmButton, describe, distance, field, form, h, problem, replace, sameId, values } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { metersBetween } from "../../map.js";
import { pickupArrival } from "./arrival.js";
import { driverPositions, ifLocationAllowed, markers, spotName, underway } from "./shared.js";

// Only a fallback: the socket tells of every change of a ride.
const RIDE_REFRESH = 30_000;

const cancellable = new Set(["open", "accepted", "arrived"]);
// While the rider tells the driver the ride's code: until the ride starts.
const codeShown = new Set(["accepted", "arrived"]);
const finished = new Set(["completed", "cancelled", "expired"]);
const steps = [
  { status: "accepted", label: "Accepted" },
  { status: "arrived", label: "Arrived", action: "arrived", button: "Mark arrived" },
  { status: "started", label: "Started", action: "started", button: "Mark started" },
  { status: "completed", label: "Completed", action: "completed", button: "Mark completed" },
];
const rideEvents = ["ride.accepted", "ride.arrived", "ride.started", "ride.completed", "ride.cancelled", "ride.reopened", "ride.expired"];

/** The ride's title and sentence, as its driver or its rider reads them. */
function headline(ride, isDriver) {
  const driverName = ride.driver?.name ?? "Your driver";
  if (isDriver) {
    return {
      accepted: [`Pick up ${ride.riderName}`, "Drive to the pickup. Click the map to show the rider where you are."],
      arrived: [`Waiting for ${ride.riderName}`, "You are at the pickup. Ask them for their code to start the ride."],
      started: [`Driving ${ride.riderName}`, "Mark the ride completed when you are there."],
      completed: ["Ride completed", "Thanks for driving."],
      cancelled: ride.cancelReason === "codeRefused"
        ? ["Ride cancelled", "You entered a wrong code five times; the ride is off and the rider is told."]
        : [`${ride.riderName} cancelled the ride`, "It is off; nothing more to do."],
      open: ["You gave up this ride", "It is offered to other drivers."],
      expired: ["This request expired", ""],
    }[ride.status];
  }
  return {
    open: ["Looking for a driver…", "Drivers near the pickup are asked now. The request ends in "],
    accepted: [`${driverName} is coming`, "Wait at the pickup; the map shows where they are."],
    arrived: [`${driverName} has arrived`, "Meet them at the pickup and tell them your code."],
    started: ["On your way", "Enjoy the ride."],
    completed: ["Ride completed", "You have arrived."],
    cancelled: ride.cancelReason === "codeRefused"
      ? ["Ride cancelled", "Your driver entered a wrong code five times, so the ride is off. Ask for another if you need one."]
      : ["Ride cancelled", "This ride is off."],
    expired: ["No driver this time", "Nobody accepted the request in time."],
  }[ride.status];
}

/** Calling the ride off, as its driver or its rider says it: the button, the question and the answer that does it. */
function cancelWords(ride, isDriver) {
  if (isDriver) return ["Give up the ride", "Give up this ride? It is offered to other drivers.", "Yes, give it up"];
  if (ride.status === "open") return ["Cancel request", "Cancel your request? Drivers stop seeing it.", "Yes, cancel"];
  return ["Cancel ride", `Cancel this ride with ${ride.driver?.name ?? "your driver"}? The chat closes.`, "Yes, cancel"];
}

export function rideScreen(root, { api, feed, campus, go, user }, rideId) {
  const life = lifetime();
  let ride = null;
  let isDriver = false;
  // The driver's position shown, with the server's time of it: an older one never replaces a newer.
  let driverAt = null;
  let sender = null;
  let fittedSpots = false;
  let fittedDriver = false;
  // What the buttons were made for: they are made again only when that changes, not to lose a question asked.
  let actionsFor = null;

  const title = h("h2", { id: "ride-title" }, "Your ride");
  const status = h("p", { class: "ride-status", role: "status", "aria-live": "polite" });
  const code = h("p", { class: "ride-code", hidden: true });
  const progress = h("ol", { class: "ride-steps", "aria-label": "Progress" });
  const people = h("div", { class: "ride-people" });
  const where = h("p", { class: "driver-position", hidden: true });
  const mapHint = h("p", { class: "hint", hidden: true });
  const mapElement = h("div", { class: "map ride-map", role: "region", "aria-label": "Map of the ride" });
  const details = h("dl", { class: "ride-details" });
  const error = h("p", { class: "form-error", role: "alert" });
  const actions = h("div", { class: "actions" });
  const section = h("section", { class: "card ride", "aria-labelledby": "ride-title" },
    title, status, code, progress, people, where, mapHint, mapElement, details, error, actions);
  replace(root, h("p", { class: "back" }, h("a", { href: "#/rides" }, "← Rides")), section);

  const map = life.map(mapElement, campus.center);
  const arrival = pickupArrival(api, map, () => isDriver);
  where.after(arrival.element);
  life.add(arrival.clear);
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
    else driverMarker = map.marker(driverPoint, markers.driver, isDriver ? "You" : ride.driver?.name ?? "Driver");
    const meters = metersBetween(driverPoint, ride.pickup);
    const away = meters < 25 ? "at the pickup" : `${distance(meters)} from the pickup`;
    where.textContent = isDriver
      ? `You are ${away}.`
      : meters < 25 ? "Driver is at the pickup." : `Driver is ${distance(meters)} away.`;
    if (at) where.append(h("span", { class: "hint" }, ` ${isDriver ? "Sent" : "Seen"} ${clock(at)}.`));
    where.dataset.lat = String(driverPoint.lat);
    where.dataset.lon = String(driverPoint.lon);
    where.hidden = false;
    if (ride.status === "accepted") arrival.update(driverPoint, ride.pickup);
    else arrival.clear();
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
    arrival.clear();
    where.hidden = true;
    delete where.dataset.lat;
    delete where.dataset.lon;
  }

  function render() {
    isDriver = sameId(ride.driver?.id, user.id) && !sameId(ride.riderId, user.id);
    section.dataset.status = ride.status;
    section.dataset.side = isDriver ? "driver" : "rider";
    const [heading, sentence] = headline(ride, isDriver) ?? [ride.status, ""];
    title.textContent = heading;
    countdown = null;
    if (!isDriver && ride.status === "open") {
      countdown = h("span", { class: "countdown" });
      replace(status, sentence, countdown, ".");
      tick();
    } else {
      replace(status, sentence);
    }

    const showsCode = !isDriver && ride.code && codeShown.has(ride.status);
    code.hidden = !showsCode;
    if (showsCode) replace(code, "Tell your driver this code: ", h("strong", { dataset: { code: ride.code } }, ride.code));
    else replace(code);

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

    pickupMarker ??= map.marker(ride.pickup, markers.pickup, `Pickup: ${spotName(ride.pickup)}`);
    if (ride.dropoff) dropoffMarker ??= map.marker(ride.dropoff, markers.dropoff, `Drop-off: ${spotName(ride.dropoff)}`);
    if (!fittedSpots) {
      fittedSpots = true;
      map.fit([ride.pickup, ...(ride.dropoff ? [ride.dropoff] : [])]);
    }
    if (ride.status !== "accepted") arrival.clear();
    if (!underway.has(ride.status)) {
      hideDriver();
    } else if (isDriver && sender?.point) {
      // The driver's own latest choice wins over a position read before it was sent.
    } else if (ride.driver?.position) {
      showDriver(ride.driver.position, ride.driver.position.at);
    }

    mapHint.hidden = !(isDriver && underway.has(ride.status));
    mapHint.textContent = sender?.isFollowing
      ? "Your device's location moves you on the map; a click on the map does too."
      : "Click the map where you are: the rider sees you move.";

    const shownFor = JSON.stringify([ride.status, isDriver, ride.matchId, ride.driver?.name]);
    if (shownFor !== actionsFor) {
      actionsFor = shownFor;
      replace(actions, buttons(reached));
    }

    if (finished.has(ride.status)) {
      sender?.stop();
    } else if (isDriver && underway.has(ride.status)) {
      startSending();
    }
  }

  function buttons(reached) {
    const made = [];
    const next = steps[reached + 1];
    if (isDriver && next?.action === "started" && ride.status === "arrived") {
      made.push(startForm());
    } else if (isDriver && underway.has(ride.status) && next?.action) {
      const step = h("button", { type: "button", class: "primary" }, next.button);
      step.addEventListener("click", () => {
        step.disabled = true;
        act(next.action).catch((failure) => {
          step.disabled = false;
          failed(failure);
        });
      });
      made.push(step);
    }
    if (ride.matchId && underway.has(ride.status)) {
      made.push(chatLink(ride.matchId,
        isDriver ? `Chat with ${ride.riderName}` : `Chat with ${ride.driver?.name ?? "your driver"}`, { class: "chat-link" }));
    }
    if (cancellable.has(ride.status) && (isDriver ? ride.status !== "open" : true)) {
      const [text, question, yes] = cancelWords(ride, isDriver);
      made.push(confirmButton(text, {}, { question, yes, act: () => act("cancel"), failed }));
    }
    if (finished.has(ride.status) || (isDriver && ride.status === "open")) {
      made.push(isDriver
        ? h("a", { href: "#/rides/drive" }, "Back to driving")
        : h("a", { href: "#/rides" }, "Ask for another ride"));
    }
    return made;
  }

  /** The driver's way to start the ride: the code the rider tells them, checked by the server; a wrong one is shown at
   *  the field with the tries left, and the fifth cancels the ride (the read after it shows so). */
  function startForm() {
    const input = h("input", {
      name: "code", inputmode: "numeric", autocomplete: "off", maxlength: 4, pattern: "[0-9]{4}", class: "code-input",
    });
    return form({ class: "start-ride", "aria-label": "Start the ride" }, [
      field("Rider's code", input, "The four digits on the rider's screen."),
      h("button", { type: "submit", class: "primary" }, "Start ride"),
    ], async (element) => {
      const { code: entered } = values(element);
      if (!/^[0-9]{4}$/.test(entered)) throw problem("code", "Enter the four digits on the rider's screen.");
      try {
        await act("started", { code: entered });
      } catch (failure) {
        if (!(failure instanceof ApiError) || failure.status !== 409) throw failure;
        load();
        throw problem("code", describe(failure));
      }
    });
  }

  function startSending() {
    if (sender) {
      if (!sender.isRunning) sender.start();
      return;
    }
    sender = driverPositions(api, {
      sent: (driver) => {
        error.textContent = "";
        if (driver.position) showDriver(driver.position, driver.position.at);
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
    showDriver(point, null);
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
          actionsFor = null;
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
        ride = { ...ride, status: "accepted", driver: data.driver, matchId: data.matchId, code: data.code };
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

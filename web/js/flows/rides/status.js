// What a ride screen says of the ride: its title and sentence (with the time left of an open request), the code the
// rider tells the driver, the progress through the steps, the people and the details.

import { h, replace } from "../../dom.js";
import { spotName, steps, underway } from "./shared.js";

// While the rider tells the driver the ride's code: until the ride starts.
const codeShown = new Set(["accepted", "arrived"]);

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

/** Who else is in the ride: the rider to their driver, the driver and their car to the rider. */
function showPeople(people, ride, isDriver) {
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
}

/** The words of a ride screen: its elements (the details show below the map), `show(ride, isDriver)`, which answers
 *  the index of the step reached, `tick()` for the time left each second, and `notFound()`. `current()` is the ride
 *  the screen shows. */
export function rideStatus(current) {
  const title = h("h2", { id: "ride-title" }, "Your ride");
  const status = h("p", { class: "ride-status", role: "status", "aria-live": "polite" });
  const code = h("p", { class: "ride-code", hidden: true });
  const progress = h("ol", { class: "ride-steps", "aria-label": "Progress" });
  const people = h("div", { class: "ride-people" });
  const details = h("dl", { class: "ride-details" });
  let countdown = null;

  function tick() {
    const ride = current();
    if (!countdown || ride?.status !== "open") return;
    const left = Math.max(0, Date.parse(ride.expiresAt) - Date.now());
    const seconds = Math.ceil(left / 1000);
    countdown.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }

  function show(ride, isDriver) {
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

    showPeople(people, ride, isDriver);
    replace(details,
      h("dt", {}, "Pickup"), h("dd", {}, spotName(ride.pickup)),
      ride.dropoff ? [h("dt", {}, "Drop-off"), h("dd", {}, spotName(ride.dropoff))] : null,
      ride.note ? [h("dt", {}, "Note"), h("dd", { class: "note" }, ride.note)] : null);
    return reached;
  }

  function notFound() {
    title.textContent = "Ride not found";
    replace(status, "This ride is not yours to see, or it was given up.");
  }

  return { title, status, code, progress, people, details, show, tick, notFound };
}

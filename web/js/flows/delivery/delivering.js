// The deliverer's side: checking in at a restaurant with where they are heading, or their open run, where offers
// arrive.

import { clock, describe, field, form, h, problem, replace, sameId, toast, uuid } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { placeSearch } from "../../places.js";
import { directionsButton } from "./directions.js";
import { offerHeard } from "./offer.js";
import { attempt, choiceMarkers, errorPlace, facts, key, markers, pointOf } from "./shared.js";

/** The deliverer's side: checking in, or their open run (the server says which); `stage` swaps one for the other with
 *  what it started. */
export function delivererSide(content, context, life) {
  const { api } = context;
  let current = null;
  life.add(() => current?.end());
  const stage = (show, ...args) => {
    current?.end();
    current = lifetime();
    show(content, context, current, stage, ...args);
  };
  replace(content, h("p", { class: "hint", role: "status" }, "Loading your run…"));
  api.get("/v1/delivery/current")
    .then(({ runs }) => {
      if (!life.alive) return;
      if (runs.length) stage(openRun, runs[0]);
      else stage(checkIn);
    })
    .catch((error) => {
      if (!life.alive) return;
      replace(content, h("p", { class: "form-error", role: "alert" }, describe(error)));
    });
}

function checkIn(content, context, life, stage) {
  const { api, campus } = context;
  let clientId = uuid();
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of your run" });
  let chosen = null;
  const restaurant = placeSearch({
    api, label: "Restaurant", name: "restaurantId", kind: "restaurant", placeholder: "Where you are picking up food",
    onChange: (place) => chosen?.show("restaurant", place, markers.restaurant),
  });
  const destination = placeSearch({
    api, label: "Heading to", name: "destinationId", kind: "building", placeholder: "A building on campus",
    near: () => pointOf(restaurant.place()) ?? campus.center,
    onChange: (place) => chosen?.show("destination", place, markers.building),
  });
  life.add(restaurant.stop);
  life.add(destination.stop);
  const checkInForm = form({ "aria-label": "Check in" }, [
    h("p", { class: "hint" }, "At a restaurant and going back to campus? Check in, and orderers near your way can ask you to bring their food."),
    restaurant.element,
    destination.element,
    h("div", { class: "pair" },
      field("Seats", h("select", { name: "capacity" }, [1, 2, 3, 4].map((count) => h("option", { value: count }, String(count)))),
        "How many orders you can carry."),
      field("Available for", h("select", { name: "minutes" }, [15, 30, 45, 60, 90, 120].map((minutes) =>
        h("option", { value: minutes, selected: minutes === 45 }, `${minutes} min`))))),
    mapElement,
    h("button", { type: "submit", class: "primary" }, "Check in"),
  ], async (element) => {
    if (!restaurant.place()) throw problem("restaurantId", "Choose a restaurant from the suggestions.");
    if (!destination.place()) throw problem("destinationId", "Choose the building you are heading to from the suggestions.");
    const body = {
      id: clientId,
      restaurantId: restaurant.place().id,
      destinationId: destination.place().id,
      capacity: Number(element.elements.capacity.value),
      minutes: Number(element.elements.minutes.value),
    };
    // Matching learns of a new user a moment after sign-up.
    const run = await api.whenKnown(() => api.post("/v1/runs", body));
    clientId = uuid();
    if (life.alive) stage(openRun, run);
  });
  replace(content, checkInForm);
  chosen = choiceMarkers(life.map(mapElement, campus.center));
}

function openRun(content, context, life, stage, run) {
  const { api, feed, campus, go } = context;
  const problem = errorPlace();
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of your run" });
  const checkOut = h("button", { type: "button", class: "danger" }, "Check out");
  checkOut.addEventListener("click", () => attempt(problem, checkOut, async () => {
    await api.delete(`/v1/runs/${run.id}`);
    toast("Checked out");
    if (life.alive) stage(checkIn);
  }));
  replace(content, h("div", { class: "run", dataset: { runId: key(run.id) } },
    h("h3", {}, "You are checked in"),
    facts([
      ["At", run.restaurant.name],
      ["Heading to", run.destination.name],
      ["Orders", `${run.held} of ${run.capacity} taken`],
      ["Until", clock(run.closesAt)],
    ]),
    h("p", { class: "notice", role: "status" }, "Waiting for an order: an offer shows here as soon as someone asks you."),
    mapElement,
    problem,
    h("div", { class: "actions" }, checkOut)));
  const runMap = life.map(mapElement, campus.center);
  const shown = choiceMarkers(runMap);
  shown.show("restaurant", run.restaurant, markers.restaurant);
  shown.show("destination", run.destination, markers.building);
  const directions = directionsButton(api, runMap, run, problem);
  mapElement.after(directions.summary);
  checkOut.before(directions.button);

  // Offers that came while this screen was not showing were looked for on the way here (home.js).
  life.add(feed.on("offer.made", (data) => {
    if (!sameId(data.runId, run.id) || Date.parse(data.expiresAt) <= Date.now()) return;
    offerHeard(data);
    go(`delivery/offer/${data.offerId}`);
  }));
  life.add(feed.on("run.closed", (data) => {
    if (!sameId(data.runId, run.id)) return;
    if (data.reason === "expired") toast("Your run ended: its time was up.");
    stage(checkIn);
  }));
}

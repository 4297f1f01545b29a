// The deliverer's side: checking in at a restaurant with where they are heading, or their open run, where offers
// arrive. The open requests show on both: at the run's restaurant once checked in, the campus's before, where taking
// one checks the deliverer in at one of its restaurants in the same tap.

import { clock, describe, distance, field, form, h, problem, replace, sameId, toast, uuid } from "../../dom.js";
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
  replace(content, checkInForm, openRequests(context, life, null, () => restaurant.place()));
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
    h("div", { class: "actions" }, checkOut),
    openRequests(context, life, run)));
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

/** The campus's open requests, each with a button that takes it; looked at again now and then (nobody tells
 *  deliverers of new ones). With a run: those that name its restaurant, nearest to where it is heading first. Without
 *  one: all of them, nearest to the campus's centre first; taking one checks the deliverer in at the restaurant chosen
 *  in the form above when the order names it (`chosen()`), else at the order's first. */
function openRequests(context, life, run, chosen) {
  const { api, campus, go } = context;
  const list = h("ul", { class: "list open-orders", "aria-label": "Open requests" });
  const problemShown = errorPlace();
  let asked = 0;

  async function load() {
    const ticket = ++asked;
    try {
      const { orders } = await api.get("/v1/orders/open", run
        ? { lat: run.destination.latitude, lon: run.destination.longitude, restaurantId: run.restaurant.id, limit: 20 }
        : { lat: campus.center.lat, lon: campus.center.lon, limit: 20 });
      if (ticket !== asked || !life.alive) return;
      const none = run ? "No open requests at this restaurant right now." : "No open requests right now.";
      replace(list, orders.length ? orders.map(entry) : h("li", { class: "hint" }, none));
    } catch (error) {
      if (ticket === asked && life.alive) problemShown.textContent = describe(error);
    }
  }

  function entry(order) {
    const take = h("button", { type: "button", class: "primary" }, "Take");
    take.addEventListener("click", () => attempt(problemShown, take, async () => {
      const at = chosen?.()?.id;
      const body = run ? { runId: run.id } : at && order.restaurants.some((place) => sameId(place.id, at)) ? { restaurantId: at } : {};
      // Matching learns of a new user a moment after sign-up.
      const match = await api.whenKnown(() => api.post(`/v1/orders/${order.id}/take`, body));
      toast(`You bring ${order.ordererFirstName}'s order`);
      go(`delivery/match/${match.id}`);
    }));
    const from = run ? "where you are heading" : "the campus's centre";
    const away = typeof order.distanceMeters === "number" ? ` · ${distance(order.distanceMeters)} from ${from}` : "";
    return h("li", { class: "spread", dataset: { orderId: key(order.id) } },
      h("span", {},
        h("span", { class: "name" }, `${order.ordererFirstName}: ${order.items}`),
        h("span", { class: "hint" }, `to ${order.destination.name}${away} · from ${order.restaurants.map((place) => place.name).join(" or ")}`)),
      take);
  }

  load();
  life.every(10_000, load);
  return h("section", { class: "open-requests", "aria-labelledby": "open-requests-title" },
    h("h3", { id: "open-requests-title" }, "Open requests"),
    h("p", { class: "hint" }, run
      ? "Orders waiting for someone at your restaurant: take one and you bring it."
      : "Orders waiting for a deliverer: take one and you are checked in at its restaurant to bring it."),
    problemShown,
    list);
}

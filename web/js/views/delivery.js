// The delivery screens (Tarrare's own app). A deliverer checks in at a restaurant, answers the offers that come and
// shares their position while bringing the food; an orderer picks a restaurant with deliverers, orders, waits for a
// match and follows the deliverer on a map. Both mark the delivery complete.
//
// Screens by hash: #/delivery (the two sides), #/delivery/offer/<offerId>, #/delivery/order/<orderId>,
// #/delivery/match/<matchId>. The API has no "what is mine under way" call, so the open run, the order and the match
// are also remembered per user in localStorage: the Delivery tab (plain #/delivery) comes back to them.

import { chatLink, clock, describe, distance, field, form, h, problem, replace, sameId, toast, uuid } from "../dom.js";
import { lifetime } from "../lifetime.js";
import { placeSearch } from "../places.js";

const sharingInterval = 2000;
const fallbackPoll = 10_000;

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "delivery",
  title: "Delivery",
  stylesheet: "css/delivery.css",
  notices: {
    "offer.made": (data) => `${data.ordererName} asks you to bring ${data.items} from ${data.restaurant?.name}`,
    "match.accepted": () => "A deliverer accepted your order",
    "match.cancelled": () => "A delivery was cancelled",
    "match.completed": () => "A delivery is complete",
    "order.expired": () => "Your order expired without a deliverer",
  },
};

export function mount(root, context) {
  const [screen, id] = context.params;
  const life = lifetime();
  const show = { offer: offerScreen, order: orderScreen, match: matchScreen }[screen];
  if (show && id) show(root, context, id, life);
  else home(root, context, life);
  return () => life.end();
}

// --- What is under way, per user --------------------------------------------------------------------------------

function memoryKey(user) {
  return `tarrare.delivery.${user.id.toLowerCase()}`;
}

function remembered(user) {
  try {
    return JSON.parse(localStorage.getItem(memoryKey(user))) ?? {};
  } catch {
    return {};
  }
}

/** Merges `changes` into what is remembered; a null value forgets that entry. */
function remember(user, changes) {
  const next = { ...remembered(user), ...changes };
  for (const [key, value] of Object.entries(next)) if (value === null || value === undefined) delete next[key];
  localStorage.setItem(memoryKey(user), JSON.stringify(next));
}

/** Where the person left off: an active match, else a waiting order, else an offer to their run; null when none. */
async function underWay(api, feed) {
  const memory = remembered(api.user);
  const unlessGone = (error) => {
    if (error?.status !== 404) throw error;
    return null;
  };
  if (memory.matchId) {
    const match = await api.get(`/v1/matches/${memory.matchId}`).catch(unlessGone);
    if (match?.status === "active") return `match/${match.id}`;
    remember(api.user, { matchId: null });
  }
  if (memory.orderId) {
    const order = await api.get(`/v1/orders/${memory.orderId}`).catch(unlessGone);
    if (order?.status === "waiting" || order?.status === "offered") return `order/${order.id}`;
    if (order?.status === "matched" && order.matchId) {
      remember(api.user, { matchId: order.matchId });
      return `match/${order.matchId}`;
    }
    remember(api.user, { orderId: null });
  }
  if (memory.run) {
    const offer = await openOffer(api, feed);
    if (offer) {
      remember(api.user, { offer });
      return `offer/${offer.offerId}`;
    }
  }
  return null;
}

/** The newest offer of the person's feed that nobody has answered, withdrawn or let expire (with `offerId`, that
 *  one), from the last entries of the feed: an offer outlives a reload or a visit to another tab. */
async function openOffer(api, feed, offerId) {
  const entries = [];
  let after = Math.max(0, (feed.lastSeq ?? 0) - 50);
  for (let page = 0; page < 5; page++) {
    const answer = await api.get("/v1/notifications", { after, limit: 100 });
    entries.push(...answer.entries);
    if (!answer.next || answer.entries.length === 0) break;
    after = answer.next;
  }
  // What this browser ended counts at once: the feed hears of it a moment later.
  const ended = new Set(remembered(api.user).endedOffers ?? []);
  const taken = new Set();
  for (const entry of entries) {
    if (["offer.declined", "offer.expired", "offer.withdrawn"].includes(entry.type)) ended.add(key(entry.data.offer?.offerId));
    if (entry.type === "match.accepted") taken.add(key(entry.data.match?.orderId));
  }
  const open = entries.filter((entry) => entry.type === "offer.made"
    && !ended.has(key(entry.data.offerId)) && !taken.has(key(entry.data.orderId))
    && Date.parse(entry.data.expiresAt) > Date.now()
    && (!offerId || sameId(entry.data.offerId, offerId)));
  return open.at(-1)?.data ?? null;
}

// --- Helpers ------------------------------------------------------------------------------------------------------

function key(id) {
  return typeof id === "string" ? id.toLowerCase() : "";
}

/** A place's point, whichever service named it (places and matching answer latitude and longitude). */
function pointOf(place) {
  return place && typeof place.latitude === "number" ? { lat: place.latitude, lon: place.longitude } : null;
}

/** Term-value pairs as a description list; null values are left out. */
function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

function errorPlace() {
  return h("p", { class: "form-error", role: "alert" });
}

/** Runs `work` for a button outside a form: the button waits while it runs, and a problem's detail shows in `place`. */
async function attempt(place, button, work) {
  place.textContent = "";
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    place.textContent = describe(error);
  } finally {
    button.disabled = false;
  }
}

/** "0:24". */
function minutesAndSeconds(seconds) {
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

/** Markers for what the person has chosen, one per role, replaced when the choice changes. */
function choiceMarkers(map) {
  const markers = {};
  return {
    show(role, place, kind, label) {
      markers[role]?.remove();
      delete markers[role];
      const point = pointOf(place);
      if (point) markers[role] = map.marker(point, kind, label ?? place.name);
      const points = Object.values(markers).map((marker) => marker.point);
      if (points.length) map.fit(points);
    },
  };
}

// --- The two sides ----------------------------------------------------------------------------------------------

function home(root, context, life) {
  const { api } = context;
  let side = api.user.mode === "delivering" ? "delivering" : "ordering";
  let sideLife = null;
  life.add(() => sideLife?.end());
  const content = h("div", { class: "delivery-side" });
  const sides = { ordering: "Ordering", delivering: "Delivering" };
  const switches = Object.entries(sides).map(([value, text]) =>
    h("button", { type: "button", dataset: { side: value }, onclick: () => choose(value) }, text));
  replace(root, h("section", { class: "card delivery home", "aria-labelledby": "delivery-title" },
    h("h2", { id: "delivery-title" }, "Delivery"),
    h("div", { class: "side-switch", role: "group", "aria-label": "I am" }, switches),
    content));

  function render() {
    sideLife?.end();
    sideLife = lifetime();
    for (const button of switches) button.setAttribute("aria-pressed", String(button.dataset.side === side));
    (side === "delivering" ? delivererSide : ordererSide)(content, context, sideLife);
  }

  function choose(value) {
    if (value === side) return;
    side = value;
    render();
    api.patch("/v1/me", { mode: value })
      .then((saved) => api.setUser(saved))
      .catch((error) => toast(describe(error), "error"));
  }

  replace(content, h("p", { class: "hint", role: "status" }, "Loading…"));
  underWay(api, context.feed)
    .then((path) => {
      if (!life.alive) return;
      if (path) location.replace(`#/delivery/${path}`);
      else render();
    })
    .catch(() => life.alive && render());
}

/** The deliverer's side: checking in, or their open run; `stage` swaps one for the other with what it started. */
function delivererSide(content, context, life) {
  const { api } = context;
  let current = null;
  life.add(() => current?.end());
  const stage = (show, ...args) => {
    current?.end();
    current = lifetime();
    show(content, context, current, stage, ...args);
  };
  const run = remembered(api.user).run;
  if (!run) return stage(checkIn);
  replace(content, h("p", { class: "hint", role: "status" }, "Loading your run…"));
  api.get(`/v1/restaurants/${run.restaurantId}/runs`)
    .then(({ runs }) => {
      if (!life.alive) return;
      const open = runs.find((entry) => sameId(entry.id, run.id));
      if (open) return stage(openRun, open);
      remember(api.user, { run: null });
      stage(checkIn);
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
    onChange: (place) => chosen?.show("restaurant", place, "restaurant"),
  });
  const destination = placeSearch({
    api, label: "Heading to", name: "destinationId", kind: "building", placeholder: "A building on campus",
    near: () => pointOf(restaurant.place()) ?? campus.center,
    onChange: (place) => chosen?.show("destination", place, "building"),
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
    remember(api.user, { run: { id: run.id, restaurantId: run.restaurant.id } });
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
    remember(api.user, { run: null });
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
  const map = life.map(mapElement, campus.center);
  const markers = choiceMarkers(map);
  markers.show("restaurant", run.restaurant, "restaurant");
  markers.show("destination", run.destination, "building");

  const offered = (data) => {
    if (!sameId(data.runId, run.id) || Date.parse(data.expiresAt) <= Date.now()) return;
    remember(api.user, { offer: data });
    go(`delivery/offer/${data.offerId}`);
  };
  // Offers that came while this screen was not showing were looked for on the way here (underWay).
  life.add(feed.on("offer.made", offered));
  life.add(feed.on("run.closed", (data) => {
    if (!sameId(data.runId, run.id)) return;
    remember(api.user, { run: null });
    if (data.reason === "expired") toast("Your run ended: its time was up.");
    stage(checkIn);
  }));
}

function ordererSide(content, context, life) {
  const { api, campus, go } = context;
  let clientId = uuid();
  let runsAsked = 0;
  let shownRuns = null;
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of restaurants with deliverers" });
  const restaurantList = h("ul", { class: "list restaurants", "aria-label": "Restaurants with deliverers" });
  const nobody = h("p", { class: "hint", hidden: true }, "Nobody is delivering right now. You can still order: the first deliverer to check in there can take it.");
  const runsPlace = h("div", { class: "runs" });
  let map = null;
  let chosen = null;
  let restaurantMarkers = [];

  const restaurant = placeSearch({
    api, label: "Restaurant", name: "restaurantId", kind: "restaurant", placeholder: "Search or pick one above",
    onChange: (place) => {
      chosen?.show("restaurant", place, "restaurant");
      loadRuns();
    },
  });
  const destination = placeSearch({
    api, label: "Deliver to", name: "destinationId", kind: "building", placeholder: "Your building",
    near: () => campus.center,
    onChange: (place) => {
      chosen?.show("destination", place, "building", `Deliver to ${place?.name}`);
      loadRuns();
    },
  });
  life.add(restaurant.stop);
  life.add(destination.stop);
  const items = h("textarea", { name: "items", rows: 3, maxlength: 500, required: true, placeholder: "Lunch of the day, a coffee…" });

  const orderForm = form({ "aria-label": "Order" }, [
    restaurant.element,
    destination.element,
    runsPlace,
    field("What to bring", items),
    h("button", { type: "submit", class: "primary" }, "Order"),
  ], async (element) => {
    if (!restaurant.place()) throw problem("restaurantId", "Choose a restaurant from the suggestions or the list.");
    if (!destination.place()) throw problem("destinationId", "Choose the building to deliver to from the suggestions.");
    const runId = element.querySelector("input[name='runId']:checked")?.value || undefined;
    const body = {
      id: clientId,
      restaurantId: restaurant.place().id,
      destinationId: destination.place().id,
      items: items.value.trim(),
      runId,
    };
    const order = await api.whenKnown(() => api.post("/v1/orders", body));
    clientId = uuid();
    remember(api.user, { orderId: order.id, matchId: null });
    go(`delivery/order/${order.id}`);
  });

  replace(content,
    h("h3", {}, "Restaurants with deliverers"),
    mapElement,
    nobody,
    restaurantList,
    h("h3", {}, "Your order"),
    orderForm);
  map = life.map(mapElement, campus.center);
  chosen = choiceMarkers(map);

  async function loadRestaurants() {
    const { restaurants } = await api.get("/v1/restaurants");
    if (!life.alive) return;
    nobody.hidden = restaurants.length > 0;
    restaurantMarkers.forEach((marker) => marker.remove());
    restaurantMarkers = restaurants.map(({ restaurant: place, openRuns }) =>
      map.marker(pointOf(place), "restaurant", `${place.name}: ${deliverers(openRuns)}`, () => restaurant.set(place)));
    replace(restaurantList, restaurants.map(({ restaurant: place, openRuns, freeSeats }) =>
      h("li", { class: "spread", dataset: { restaurantId: key(place.id) } },
        h("button", { type: "button", class: "link", onclick: () => restaurant.set(place, true) }, place.name),
        h("span", {}, h("span", { class: "tag" }, deliverers(openRuns)), freeSeats !== undefined ? h("span", { class: "tag" }, `${freeSeats} free`) : null))));
  }

  async function loadRuns() {
    const ticket = ++runsAsked;
    const place = restaurant.place();
    if (!place) {
      shownRuns = null;
      return replace(runsPlace);
    }
    const to = destination.place();
    const point = pointOf(to);
    try {
      const { runs } = await api.get(`/v1/restaurants/${place.id}/runs`, point ? { lat: point.lat, lon: point.lon } : {});
      if (ticket !== runsAsked || !life.alive) return;
      showRuns(runs, to);
    } catch (error) {
      if (ticket !== runsAsked) return;
      shownRuns = null;
      replace(runsPlace, h("p", { class: "form-error", role: "alert" }, describe(error)));
    }
  }

  function showRuns(runs, to) {
    // The periodic look leaves a list that did not change alone, with the person's choice and focus in it.
    const shown = JSON.stringify([to?.id, runs.map((run) => [run.id, run.held, run.capacity, run.distanceMeters])]);
    if (shown === shownRuns) return;
    shownRuns = shown;
    const previous = runsPlace.querySelector("input[name='runId']:checked")?.value ?? "";
    const any = h("input", { type: "radio", name: "runId", value: "", id: "run-any", checked: true });
    const options = runs.map((run) => {
      const full = run.held >= run.capacity;
      const away = typeof run.distanceMeters === "number" && to ? ` · ${distance(run.distanceMeters)} from ${to.name}` : "";
      return h("label", { class: "choice", dataset: { runId: key(run.id) } },
        h("input", { type: "radio", name: "runId", value: run.id, disabled: full, checked: sameId(run.id, previous) && !full }),
        h("span", {},
          h("span", { class: "name" }, run.delivererName),
          h("span", { class: "hint" }, `heading to ${run.destination.name}${away}${full ? " · full" : ""}`)));
    });
    replace(runsPlace, h("fieldset", { class: "choices" },
      h("legend", {}, "Who brings it"),
      h("label", { class: "choice" }, any, h("span", {}, h("span", { class: "name" }, "Whoever is best placed"),
        h("span", { class: "hint" }, runs.length ? "Deliverers heading near your building are asked, nearest first." : "Nobody is checked in here yet; your order waits for someone."))),
      options,
      h("p", { class: "field-error", id: "run-any-error", role: "alert" })));
  }

  loadRestaurants().catch((error) => replace(restaurantList, h("li", { class: "form-error", role: "alert" }, describe(error))));
  // Runs open and close without telling orderers: the list is looked at again now and then.
  life.every(15_000, () => {
    loadRestaurants().catch(() => {});
    loadRuns();
  });
}

function deliverers(count) {
  return count === 1 ? "1 deliverer" : `${count} deliverers`;
}

// --- The deliverer's offer ----------------------------------------------------------------------------------------

function offerScreen(root, context, offerId, life) {
  const { api, feed } = context;
  replace(root, h("section", { class: "card delivery" }, h("p", { class: "hint", role: "status" }, "Loading the offer…")));
  const cached = remembered(api.user).offer;
  const found = cached && sameId(cached.offerId, offerId) ? Promise.resolve(cached) : openOffer(api, feed, offerId);
  found
    .then((offer) => {
      if (!life.alive) return;
      if (!offer || Date.parse(offer.expiresAt) <= Date.now()) return leave("This offer is no longer open.");
      showOffer(offer);
    })
    .catch((error) => life.alive && leave(describe(error)));

  function leave(text) {
    if (!life.alive) return;
    life.end();
    const endedOffers = [key(offerId), ...(remembered(api.user).endedOffers ?? [])].slice(0, 10);
    remember(api.user, { offer: null, endedOffers });
    toast(text);
    location.replace("#/delivery");
  }

  function showOffer(offer) {
    let answering = false;
    const problem = errorPlace();
    const countdown = h("span", { class: "countdown" });
    const accept = h("button", { type: "button", class: "primary" }, "Accept");
    const decline = h("button", { type: "button" }, "Decline");
    replace(root, h("section", { class: "card delivery offer", "aria-labelledby": "offer-title", dataset: { offerId: key(offer.offerId) } },
      h("h2", { id: "offer-title" }, "New order for you"),
      h("p", { class: "who" }, h("span", { class: "name" }, offer.ordererName), " asks you to bring"),
      h("p", { class: "items" }, offer.items),
      facts([["From", offer.restaurant?.name], ["To", offer.destination?.name]]),
      h("p", { class: "timer", role: "timer", "aria-label": "Time left to answer" }, "Time left to answer: ", countdown),
      problem,
      h("div", { class: "actions" }, accept, decline)));

    const tick = () => {
      const left = Math.max(0, Math.ceil((Date.parse(offer.expiresAt) - Date.now()) / 1000));
      countdown.textContent = minutesAndSeconds(left);
      if (left === 0 && !answering) leave("The offer expired.");
    };
    tick();
    life.every(250, tick);
    accept.addEventListener("click", () => {
      answering = true;
      decline.disabled = true;
      attempt(problem, accept, async () => {
        const match = await api.post(`/v1/offers/${offer.offerId}/accept`);
        const endedOffers = [key(offer.offerId), ...(remembered(api.user).endedOffers ?? [])].slice(0, 10);
        remember(api.user, { offer: null, matchId: match.id, endedOffers });
        location.replace(`#/delivery/match/${match.id}`);
      }).finally(() => {
        answering = false;
        decline.disabled = false;
      });
    });
    decline.addEventListener("click", () => {
      answering = true;
      accept.disabled = true;
      attempt(problem, decline, async () => {
        await api.post(`/v1/offers/${offer.offerId}/decline`);
        leave("Declined. The order goes to someone else.");
      }).finally(() => {
        answering = false;
        accept.disabled = false;
      });
    });
    const endings = {
      "offer.expired": "The offer expired.",
      "offer.withdrawn": "The offer was withdrawn: the order was cancelled or your run closed.",
      "offer.declined": "Declined. The order goes to someone else.",
    };
    for (const [type, text] of Object.entries(endings)) {
      life.add(feed.on(type, (data) => {
        if (sameId(data.offer?.offerId, offer.offerId) && !answering) leave(text);
      }));
    }
  }
}

// --- The orderer's pending order -----------------------------------------------------------------------------------

function orderScreen(root, context, orderId, life) {
  const { api, feed, campus, go } = context;
  const problem = errorPlace();
  const title = h("h2", { id: "order-title" }, "Your order");
  const status = h("p", { class: "notice", role: "status" }, "Loading…");
  const details = h("div", {});
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of your order" });
  const cancel = h("button", { type: "button", class: "danger", hidden: true }, "Cancel order");
  const again = h("button", { type: "button", class: "primary", hidden: true, onclick: () => go("delivery") }, "Order again");
  replace(root, h("section", { class: "card delivery order", "aria-labelledby": "order-title", dataset: { orderId: key(orderId) } },
    title, status, details, mapElement, problem, h("div", { class: "actions" }, cancel, again)));
  const markers = choiceMarkers(life.map(mapElement, campus.center));
  let placed = false;
  let over = false;

  cancel.addEventListener("click", () => attempt(problem, cancel, async () => {
    show(await api.post(`/v1/orders/${orderId}/cancel`));
  }));

  function show(order) {
    if (!life.alive) return;
    if (order.status === "matched" && order.matchId) {
      remember(api.user, { orderId: order.id, matchId: order.matchId });
      location.replace(`#/delivery/match/${order.matchId}`);
      return;
    }
    const waiting = order.status === "waiting" || order.status === "offered";
    const texts = {
      waiting: "Waiting for a deliverer…",
      offered: "Asking a deliverer…",
      cancelled: "You cancelled this order.",
      expired: "Nobody took this order in time.",
      completed: "This order was delivered.",
    };
    status.textContent = texts[order.status] ?? order.status;
    status.dataset.status = order.status;
    title.textContent = waiting ? "Finding a deliverer" : "Your order";
    replace(details, facts([
      ["From", order.restaurant.name],
      ["To", order.destination.name],
      ["What", order.items],
      ["Ordered", clock(order.createdAt)],
      waiting ? ["Waits until", clock(order.expiresAt)] : [],
    ]));
    over = !waiting;
    cancel.hidden = !waiting;
    again.hidden = waiting;
    if (!waiting) remember(api.user, { orderId: null });
    if (!placed) {
      placed = true;
      markers.show("restaurant", order.restaurant, "restaurant");
      markers.show("destination", order.destination, "building");
    }
  }

  const load = () => api.get(`/v1/orders/${orderId}`).then(show);
  load().catch((error) => {
    status.textContent = describe(error);
    again.hidden = false;
  });
  life.add(feed.on("match.accepted", (data) => {
    if (!sameId(data.match?.orderId, orderId)) return;
    remember(api.user, { orderId, matchId: data.match.matchId });
    location.replace(`#/delivery/match/${data.match.matchId}`);
  }));
  life.add(feed.on("order.expired", (data) => {
    if (sameId(data.orderId, orderId)) load().catch(() => {});
  }));
  // The orderer hears of a match and of expiry; whether a deliverer is being asked meanwhile has no event.
  life.every(fallbackPoll, () => over || load().catch(() => {}));
}

// --- The match, for both --------------------------------------------------------------------------------------------

function matchScreen(root, context, matchId, life) {
  const { api, feed, campus, go } = context;
  const problem = errorPlace();
  const title = h("h2", { id: "match-title" }, "Delivery");
  const status = h("p", { class: "notice", role: "status" }, "Loading…");
  const who = h("p", { class: "who" });
  const details = h("div", {});
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of the delivery" });
  const position = h("p", { class: "hint position", "aria-live": "polite" });
  const share = h("button", { type: "button", "aria-pressed": "false" }, "Share my position");
  const shareRow = h("div", { class: "actions", hidden: true }, share);
  const chat = chatLink(matchId, "Chat", { class: "chat-link", hidden: true });
  const complete = h("button", { type: "button", class: "primary", hidden: true }, "Complete");
  const cancel = h("button", { type: "button", class: "danger", hidden: true }, "Cancel");
  const confirm = h("div", { class: "confirm", hidden: true, role: "group", "aria-label": "Cancel the delivery?" },
    h("p", {}, "Cancel this delivery?"),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "danger", onclick: () => cancelMatch() }, "Yes, cancel"),
      h("button", { type: "button", onclick: () => (confirm.hidden = true) }, "Keep it")));
  const back = h("button", { type: "button", hidden: true }, "Back to delivery");
  replace(root, h("section", { class: "card delivery match", "aria-labelledby": "match-title", dataset: { matchId: key(matchId) } },
    title, status, who, details, mapElement, position, shareRow,
    h("p", {}, chat), problem, h("div", { class: "actions" }, complete, cancel, back), confirm));
  const map = life.map(mapElement, campus.center);
  const markers = choiceMarkers(map);
  let match = null;
  let delivererMarker = null;
  let sharing = false;
  let watchId = null;
  let lastSent = 0;
  let waitingPoint = null;
  let sendTimer = null;
  let backTo = "delivery";

  const isDeliverer = () => match && sameId(match.delivererId, api.user.id);

  function showPosition(point, at) {
    if (delivererMarker) delivererMarker.moveTo(point);
    else delivererMarker = map.marker(point, isDeliverer() ? "me" : "driver", isDeliverer() ? "You" : match.delivererName);
    position.textContent = isDeliverer()
      ? `Your position, sent ${clock(at)}.`
      : `${match.delivererName} was here at ${new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })}.`;
  }

  function show(next) {
    if (!life.alive) return;
    const first = !match;
    match = next;
    const deliverer = isDeliverer();
    const other = deliverer ? match.ordererName : match.delivererName;
    const active = match.status === "active";
    const mineDone = deliverer ? match.delivererCompleted : match.ordererCompleted;
    const theirsDone = deliverer ? match.ordererCompleted : match.delivererCompleted;
    title.textContent = { active: "Delivery under way", completed: "Delivery complete", cancelled: "Delivery cancelled" }[match.status] ?? "Delivery";
    status.dataset.status = match.status;
    status.textContent = !active
      ? (match.status === "completed" ? "Both of you marked it complete. Thanks!" : "This delivery was cancelled.")
      : mineDone
        ? `You marked it complete. Waiting for ${other}.`
        : theirsDone
          ? `${other} marked it complete. Mark it too when you have ${deliverer ? "handed it over" : "your food"}.`
          : deliverer ? `Bring it to ${match.destination.name}, then mark it complete.` : "Follow it on the map; mark it complete when you have your food.";
    const verb = { active: ["bring", "brings"], completed: ["brought", "brought"] }[match.status] ?? ["were to bring", "was to bring"];
    who.textContent = deliverer ? `You ${verb[0]} ${match.ordererName}'s order.` : `${match.delivererName} ${verb[1]} your order.`;
    replace(details, facts([["What", match.items], ["From", match.restaurant.name], ["To", match.destination.name]]));
    chat.textContent = `Chat with ${other}`;
    chat.hidden = !active;
    complete.hidden = !active || mineDone;
    cancel.hidden = !active;
    back.hidden = active;
    shareRow.hidden = !active || !deliverer;
    if (!active) {
      confirm.hidden = true;
      stopSharing();
      delivererMarker?.remove();
      delivererMarker = null;
      position.textContent = "";
      const memory = remembered(api.user);
      if (sameId(memory.matchId, match.id)) remember(api.user, { matchId: null });
      if (sameId(memory.orderId, match.orderId) && match.status === "completed") remember(api.user, { orderId: null });
    } else {
      remember(api.user, { matchId: match.id });
      if (match.delivererPosition) showPosition(match.delivererPosition, match.delivererPosition.at);
    }
    if (first) {
      markers.show("restaurant", match.restaurant, "restaurant");
      markers.show("destination", match.destination, "building");
      position.textContent ||= deliverer
        ? "Share your position so that the orderer can follow you."
        : `${match.delivererName} has not shared a position yet.`;
    }
  }

  async function afterCancel(cancelled) {
    show(cancelled);
    if (isDeliverer()) return;
    // A deliverer's cancel puts the order back to dispatch: the orderer waits again.
    const order = await api.get(`/v1/orders/${match.orderId}`);
    if (order.status === "waiting" || order.status === "offered") {
      remember(api.user, { orderId: order.id });
      status.textContent = `${match.delivererName} cancelled. Your order goes to other deliverers.`;
      back.textContent = "See your order";
      backTo = `delivery/order/${order.id}`;
    } else {
      remember(api.user, { orderId: null });
    }
  }

  function cancelMatch() {
    const button = confirm.querySelector("button");
    attempt(problem, button, async () => {
      await afterCancel(await api.post(`/v1/matches/${matchId}/cancel`));
    });
  }

  // Positions go at most once every two seconds; the latest one waits for its turn rather than being dropped.
  function send(point) {
    waitingPoint = point;
    showPosition(point, new Date().toISOString());
    if (sendTimer) return;
    const wait = lastSent + sharingInterval - Date.now();
    if (wait > 0) {
      sendTimer = setTimeout(() => {
        sendTimer = null;
        if (waitingPoint) send(waitingPoint);
      }, wait);
      return;
    }
    const sending = waitingPoint;
    waitingPoint = null;
    lastSent = Date.now();
    api.put(`/v1/matches/${matchId}/location`, sending)
      .then((answer) => {
        if (answer?.delivererPosition && life.alive) position.textContent = `Your position, sent ${clock(answer.delivererPosition.at)}.`;
      })
      .catch((error) => {
        if (!life.alive) return;
        problem.textContent = describe(error);
        if (error.status === 409 || error.status === 404) stopSharing();
      });
  }

  function startSharing() {
    sharing = true;
    share.textContent = "Stop sharing";
    share.setAttribute("aria-pressed", "true");
    position.textContent = "Sharing your position. Click the map to set where you are.";
    if (navigator.geolocation) {
      watchId = navigator.geolocation.watchPosition(
        (found) => sharing && send({ lat: found.coords.latitude, lon: found.coords.longitude }),
        () => {
          if (sharing) position.textContent = "Your browser does not tell your position: click the map where you are.";
        },
        { enableHighAccuracy: true, maximumAge: 5000, timeout: 20_000 });
    }
  }

  function stopSharing() {
    sharing = false;
    share.textContent = "Share my position";
    share.setAttribute("aria-pressed", "false");
    if (watchId !== null) navigator.geolocation.clearWatch(watchId);
    watchId = null;
    clearTimeout(sendTimer);
    sendTimer = null;
    waitingPoint = null;
  }
  life.add(stopSharing);

  share.addEventListener("click", () => (sharing ? stopSharing() : startSharing()));
  map.onClick((point) => {
    if (!match || !isDeliverer() || match.status !== "active") return;
    if (sharing) send(point);
    else position.textContent = "Press “Share my position” first, then click the map where you are.";
  });
  complete.addEventListener("click", () => attempt(problem, complete, async () => {
    show(await api.post(`/v1/matches/${matchId}/complete`));
  }));
  cancel.addEventListener("click", () => {
    confirm.hidden = false;
    confirm.querySelector("button").focus();
  });
  back.addEventListener("click", () => go(backTo));

  const load = () => api.get(`/v1/matches/${matchId}`).then(show);
  load().catch((error) => {
    status.textContent = describe(error);
    back.hidden = false;
  });
  life.add(feed.on("location", (data) => {
    if (match && sameId(data.matchId, matchId) && match.status === "active" && !isDeliverer()) {
      showPosition({ lat: data.lat, lon: data.lon }, data.at);
    }
  }));
  life.add(feed.on("match.completed", (data) => {
    if (sameId(data.match?.matchId, matchId)) load().catch(() => {});
  }));
  life.add(feed.on("match.cancelled", (data) => {
    if (!sameId(data.match?.matchId, matchId)) return;
    api.get(`/v1/matches/${matchId}`).then(afterCancel).catch(() => {});
  }));
  // The other side marking it complete has no event of its own until both have.
  life.every(fallbackPoll, () => {
    if (match?.status === "active") load().catch(() => {});
  });
}

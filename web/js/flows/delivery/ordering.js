// The orderer's side: the restaurants with deliverers on a map and in a list, the runs of the restaurant chosen (who
// could bring it, and how far from the building, runs.js), and the order: up to four more restaurants that would do
// as well, and a building or the orderer's own position to bring it to. Deliverers also find the order among the open
// requests.

import { describe, field, form, h, problem, replace, sameId, uuid } from "../../dom.js";
import { whereAmI } from "../../map.js";
import { placeSearch } from "../../places.js";
import { runChoices } from "./runs.js";
import { choiceMarkers, key, markers, pointOf } from "./shared.js";

export function ordererSide(content, context, life) {
  const { api, campus } = context;
  const mapElement = h("div", { class: "map", role: "region", "aria-label": "Map of restaurants with deliverers" });
  const restaurantList = h("ul", { class: "list restaurants", "aria-label": "Restaurants with deliverers" });
  const nobody = h("p", { class: "hint", hidden: true }, "Nobody is delivering right now. You can still order: the first deliverer to check in there can take it.");
  let chosen = null;
  let restaurantMarkers = [];
  const order = orderForm(context, life, (role, place, kind, label) => chosen?.show(role, place, kind, label));

  replace(content,
    h("h3", {}, "Restaurants with deliverers"),
    mapElement,
    nobody,
    restaurantList,
    h("h3", {}, "Your order"),
    order.element);
  const map = life.map(mapElement, campus.center);
  chosen = choiceMarkers(map);
  map.onClick((point) => order.clicked(point));

  async function loadRestaurants() {
    const { restaurants } = await api.get("/v1/restaurants");
    if (!life.alive) return;
    nobody.hidden = restaurants.length > 0;
    restaurantMarkers.forEach((marker) => marker.remove());
    restaurantMarkers = restaurants.map(({ restaurant: place, openRuns }) =>
      map.marker(pointOf(place), markers.restaurant, `${place.name}: ${deliverers(openRuns)}`, () => order.restaurant.set(place)));
    replace(restaurantList, restaurants.map(({ restaurant: place, openRuns, freeSeats }) =>
      h("li", { class: "spread", dataset: { restaurantId: key(place.id) } },
        h("button", { type: "button", class: "link", onclick: () => order.restaurant.set(place, true) }, place.name),
        h("span", {}, h("span", { class: "tag" }, deliverers(openRuns)), freeSeats !== undefined ? h("span", { class: "tag" }, `${freeSeats} free`) : null))));
  }

  loadRestaurants().catch((error) => replace(restaurantList, h("li", { class: "form-error", role: "alert" }, describe(error))));
  // Runs open and close without telling orderers: the list is looked at again now and then.
  life.every(15_000, () => {
    loadRestaurants().catch(() => {});
    order.loadRuns();
  });
}

/** The order form: the restaurant and any others that would do as well, where to bring it (a building, or the
 *  orderer's own position), who brings it, and what. `mark(role, place, kind, label)` shows a choice on the map.
 *  Answers {element, restaurant, loadRuns(), clicked(point)}, `clicked` for a click on the map. */
function orderForm(context, life, mark) {
  const { api, campus, go } = context;
  let clientId = uuid();
  const runs = runChoices(api, life);
  const restaurant = placeSearch({
    api, label: "Restaurant", name: "restaurantId", kind: "restaurant", placeholder: "Search or pick one above",
    onChange: (place) => {
      mark("restaurant", place, markers.restaurant);
      loadRuns();
    },
  });
  const destination = placeSearch({
    api, label: "Deliver to", name: "destinationId", kind: "building", placeholder: "Your building",
    near: () => campus.center,
    onChange: (place) => {
      if (place) {
        myPosition = null;
        positionShown.textContent = "";
      }
      mark("destination", place, markers.building, `Deliver to ${place?.name}`);
      loadRuns();
    },
  });
  life.add(restaurant.stop);
  life.add(destination.stop);
  // More restaurants, any of which will do: deliverers at each of them can take the order.
  const others = [];
  const otherPlace = h("div", { class: "other-restaurants" });
  const addOther = h("button", { type: "button", class: "link" }, "Another restaurant would do too");
  addOther.addEventListener("click", () => {
    const other = placeSearch({ api, label: `Or from (${others.length + 2})`, name: "restaurantIds", kind: "restaurant", placeholder: "Another restaurant" });
    life.add(other.stop);
    others.push(other);
    otherPlace.append(other.element);
    addOther.hidden = others.length >= 4;
  });
  // The orderer's own position instead of a building: where the browser says they are, or where they click the map.
  let myPosition = null;
  const positionShown = h("p", { class: "hint", role: "status" });
  const usePosition = h("button", { type: "button", class: "link" }, "Deliver to my position");
  usePosition.addEventListener("click", async () => {
    positionShown.textContent = "Finding where you are…";
    const point = await whereAmI();
    if (!life.alive) return;
    if (point) setPosition(point);
    else positionShown.textContent = "Your browser does not tell where you are: click the map where you will be.";
  });
  function setPosition(point) {
    myPosition = point;
    destination.set(null);
    mark("destination", { latitude: point.lat, longitude: point.lon }, markers.building, "Deliver here");
    positionShown.textContent = `Delivered to your position (${point.lat.toFixed(5)}, ${point.lon.toFixed(5)}).`;
  }
  const items = h("textarea", { name: "items", rows: 3, maxlength: 500, required: true, placeholder: "Lunch of the day, a coffee…" });

  const element = form({ "aria-label": "Order" }, [
    restaurant.element,
    otherPlace,
    addOther,
    destination.element,
    h("div", {}, usePosition, positionShown),
    runs.element,
    field("What to bring", items),
    h("button", { type: "submit", class: "primary" }, "Order"),
  ], async (formElement) => {
    if (!restaurant.place()) throw problem("restaurantId", "Choose a restaurant from the suggestions or the list.");
    const to = destination.place();
    if (!to && !myPosition) throw problem("destinationId", "Choose the building to deliver to from the suggestions, or your position.");
    const runId = formElement.querySelector("input[name='runId']:checked")?.value || undefined;
    const also = others.map((other) => other.place()?.id).filter((id) => id && !sameId(id, restaurant.place().id));
    const restaurants = [restaurant.place().id, ...new Set(also)];
    const body = {
      id: clientId,
      ...(restaurants.length > 1 ? { restaurantIds: restaurants } : { restaurantId: restaurants[0] }),
      ...(to ? { destinationId: to.id } : { destination: myPosition }),
      items: items.value.trim(),
      runId,
    };
    const order = await api.whenKnown(() => api.post("/v1/orders", body));
    clientId = uuid();
    go(`delivery/order/${order.id}`);
  });

  function loadRuns() {
    return runs.load(restaurant.place(), destination.place());
  }

  return {
    element,
    restaurant,
    loadRuns,
    clicked(point) {
      if (positionShown.textContent) setPosition(point);
    },
  };
}

function deliverers(count) {
  return count === 1 ? "1 deliverer" : `${count} deliverers`;
}

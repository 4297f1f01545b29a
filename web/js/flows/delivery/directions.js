// Directions for a deliverer: the walk from their run's restaurant to its destination, along the streets, on the
// run's map.

import { distance, h } from "../../dom.js";
import { minutes, routeBetween, routeLine } from "../../routes.js";
import { attempt, pointOf } from "./shared.js";

/** A "Directions" button that draws the walk of `run` on `map` and says how long it is, in `problem` when it fails. */
export function directionsButton(api, map, run, problem) {
  const button = h("button", { type: "button", class: "directions" }, "Directions");
  const summary = h("p", { class: "directions-summary", role: "status", hidden: true });
  const line = routeLine(map, { name: "walk", color: "#0b6e4f" });
  button.addEventListener("click", () => attempt(problem, button, async () => {
    const from = pointOf(run.restaurant);
    const to = pointOf(run.destination);
    const route = from && to ? await routeBetween(api, from, to, "walk") : null;
    if (!route) {
      line.clear();
      summary.textContent = "No walk along the streets joins these two on the map.";
    } else {
      line.show(route);
      map.fit(route.path.coordinates.map(([lon, lat]) => ({ lat, lon })));
      summary.textContent = `A ${minutes(route.seconds)} walk, ${distance(route.meters)}, from ${run.restaurant.name} to ${run.destination.name}.`;
      summary.dataset.meters = String(Math.round(route.meters));
    }
    summary.hidden = false;
  }));
  return { button, summary };
}

// The driver's way to the pickup on a ride's map, by car along the streets, and when they arrive: the rider reads
// the estimated arrival, the driver the same way and time.

import { clock, distance, h } from "../../dom.js";
import { metersBetween } from "../../map.js";
import { minutes, routeBetween, routeLine } from "../../routes.js";

// A driver who moved less than this keeps the route drawn; a new one is asked when they move further.
const MOVED_METERS = 15;

/** The arrival line of a ride screen, the element it writes in, and the route it draws on `map`; `isDriver()` says
 *  who reads it. */
export function pickupArrival(api, map, isDriver) {
  const element = h("p", { class: "ride-arrival", role: "status", hidden: true });
  const line = routeLine(map, { name: "pickup", color: "#7c3aed" });
  let askedFrom = null;
  // The first way drawn is brought into view; after that the person's own panning stays.
  let fitted = false;
  // Each ask has a number; an answer to an older ask than the latest is dropped.
  let asks = 0;

  function clear() {
    asks += 1;
    askedFrom = null;
    line.clear();
    element.hidden = true;
    delete element.dataset.seconds;
  }

  return {
    element,
    clear,
    /** Shows the drive from `driver` to `pickup`, unless the driver is about where the route shown starts. */
    async update(driver, pickup) {
      if (askedFrom && metersBetween(askedFrom, driver) < MOVED_METERS) return;
      askedFrom = driver;
      const ask = ++asks;
      let route;
      try {
        route = await routeBetween(api, driver, pickup, "drive");
      } catch {
        if (ask === asks) askedFrom = null;
        return;
      }
      if (ask !== asks) return;
      if (!route) {
        line.clear();
        element.textContent = "No way by car from the driver to the pickup on the map.";
        element.hidden = false;
        delete element.dataset.seconds;
        return;
      }
      line.show(route);
      if (!fitted) {
        fitted = true;
        map.fit(route.path.coordinates.map(([lon, lat]) => ({ lat, lon })));
      }
      const at = clock(new Date(Date.now() + route.seconds * 1000).toISOString());
      element.textContent = isDriver()
        ? `You reach the pickup at about ${at}: ${minutes(route.seconds)}, ${distance(route.meters)} by the streets.`
        : `Arrives at about ${at}: ${minutes(route.seconds)}, ${distance(route.meters)} by the streets.`;
      element.dataset.seconds = String(Math.round(route.seconds));
      element.hidden = false;
    },
  };
}

// What a screen started (subscriptions, timers, maps), undone in reverse order when the screen goes.

import { campusMap } from "./map.js";

export function lifetime() {
  const stops = [];
  return {
    alive: true,
    /** Keeps `stop` for the end; answers it. */
    add(stop) {
      stops.push(stop);
      return stop;
    },
    every(milliseconds, work) {
      const timer = setInterval(work, milliseconds);
      stops.push(() => clearInterval(timer));
    },
    map(element, center) {
      const map = campusMap(element, center);
      stops.push(() => map.destroy());
      return map;
    },
    /** Undoes everything; ending twice is harmless. */
    end() {
      this.alive = false;
      for (const stop of stops.splice(0).reverse()) {
        try {
          stop();
        } catch (error) {
          console.error(error);
        }
      }
    },
  };
}

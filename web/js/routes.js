// Routes along the campus's streets (places' GET /v1/routes): a walk or a drive between two points, drawn on a map.

import { ApiError } from "./api.js";

/** The route from `from` to `to` ({lat, lon}) by `mode` (walk or drive); null when no street joins them. */
export async function routeBetween(api, from, to, mode) {
  try {
    return await api.get("/v1/routes", { from: `${from.lat},${from.lon}`, to: `${to.lat},${to.lon}`, mode });
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 404) return null;
    throw failure;
  }
}

/** "1 min", "12 min": how long a route takes, rounded up to whole minutes. */
export function minutes(seconds) {
  return `${Math.max(1, Math.ceil(seconds / 60))} min`;
}

/** One route at a time on `map`: `show` replaces the line drawn before; `clear` takes it away. */
export function routeLine(map, kind) {
  let line = null;
  return {
    show(route) {
      line?.remove();
      line = map.path(route.path.coordinates, kind);
    },
    clear() {
      line?.remove();
      line = null;
    },
  };
}

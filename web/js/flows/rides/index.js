// Rides (My Driver): a rider asks for a ride (request.js) and watches the driver come (ride.js); a driver goes online,
// sees the requests near them and accepts one (drive.js), then marks it to its end while their position reaches the
// rider's map (ride.js).
//
// #/rides is the rider's request form, #/rides/drive the driver's screen, #/rides/<id> one ride (its rider and its
// driver see it from their side), so that a reload comes back to the same screen.

import { driverHome } from "./drive.js";
import { riderHome } from "./request.js";
import { rideScreen } from "./ride.js";

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "rides",
  title: "Rides",
  stylesheet: new URL("rides.css", import.meta.url).href,
  notices: {
    "ride.offered": (data) => `${data.riderName} needs a ride`,
    "ride.accepted": (data) => `${data.driver?.name ?? "A driver"} is on the way`,
    "ride.reopened": () => "Your driver gave up the ride; asking others",
    "ride.cancelled": () => "A ride was cancelled",
    "ride.arrived": () => "Your driver has arrived",
  },
};

export function mount(root, context) {
  const [first] = context.params;
  if (first === "drive") return driverHome(root, context);
  if (first) return rideScreen(root, context, first);
  return riderHome(root, context);
}

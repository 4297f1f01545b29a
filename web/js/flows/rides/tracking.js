// A ride's map: the pickup and the drop-off, the driver's marker with the line that says where they are, and the way
// to the pickup while the driver comes (arrival.js).

import { clock, distance, h } from "../../dom.js";
import { metersBetween } from "../../map.js";
import { pickupArrival } from "./arrival.js";
import { markers, spotName, underway } from "./shared.js";

/** The spots and the driver on `map`, and where the driver is in `where` with the way to the pickup after it;
 *  `isDriver()` says who looks. Answers {show(ride, ownPoint), showDriver(ride, point, at), hideDriver()}. */
export function rideMap(api, life, map, where, isDriver) {
  const arrival = pickupArrival(api, map, isDriver);
  where.after(arrival.element);
  life.add(arrival.clear);
  let pickupMarker = null;
  let dropoffMarker = null;
  let driverMarker = null;
  // The driver's position shown, with the server's time of it: an older one never replaces a newer.
  let driverAt = null;
  let fittedSpots = false;
  let fittedDriver = false;

  /** Puts the driver where `point` is; to the rider, unless the one shown is newer (`at` is the server's time of it:
   *  a frame can overtake the read of the ride). The driver's own positions come in the order they were sent. */
  function showDriver(ride, point, at) {
    if (!ride || !underway.has(ride.status) || !point) return;
    if (!isDriver() && at) {
      const time = Date.parse(at);
      if (driverAt !== null && time < driverAt) return;
      driverAt = time;
    }
    const driverPoint = { lat: point.lat, lon: point.lon };
    if (driverMarker) driverMarker.moveTo(driverPoint);
    else driverMarker = map.marker(driverPoint, markers.driver, isDriver() ? "You" : ride.driver?.name ?? "Driver");
    const meters = metersBetween(driverPoint, ride.pickup);
    const away = meters < 25 ? "at the pickup" : `${distance(meters)} from the pickup`;
    where.textContent = isDriver()
      ? `You are ${away}.`
      : meters < 25 ? "Driver is at the pickup." : `Driver is ${distance(meters)} away.`;
    if (at) where.append(h("span", { class: "hint" }, ` ${isDriver() ? "Sent" : "Seen"} ${clock(at)}.`));
    where.dataset.lat = String(driverPoint.lat);
    where.dataset.lon = String(driverPoint.lon);
    where.hidden = false;
    if (ride.status === "accepted") arrival.update(driverPoint, ride.pickup);
    else arrival.clear();
    if (!fittedDriver) {
      fittedDriver = true;
      map.fit([ride.pickup, driverPoint]);
    } else if (!map.map.getBounds().contains([driverPoint.lat, driverPoint.lon])) {
      map.map.panTo([driverPoint.lat, driverPoint.lon]);
    }
  }

  function hideDriver() {
    driverMarker?.remove();
    driverMarker = null;
    driverAt = null;
    fittedDriver = false;
    arrival.clear();
    where.hidden = true;
    delete where.dataset.lat;
    delete where.dataset.lon;
  }

  /** The ride's spots, and its driver while it is under way; `ownPoint()` tells whether the driver looking has chosen
   *  a position of their own, which wins over one read before it was sent. */
  function show(ride, ownPoint) {
    pickupMarker ??= map.marker(ride.pickup, markers.pickup, `Pickup: ${spotName(ride.pickup)}`);
    if (ride.dropoff) dropoffMarker ??= map.marker(ride.dropoff, markers.dropoff, `Drop-off: ${spotName(ride.dropoff)}`);
    if (!fittedSpots) {
      fittedSpots = true;
      map.fit([ride.pickup, ...(ride.dropoff ? [ride.dropoff] : [])]);
    }
    if (ride.status !== "accepted") arrival.clear();
    if (!underway.has(ride.status)) {
      hideDriver();
    } else if (ownPoint()) {
      // The driver's own latest choice wins over a position read before it was sent.
    } else if (ride.driver?.position) {
      showDriver(ride, ride.driver.position, ride.driver.position.at);
    }
  }

  return { show, showDriver, hideDriver };
}

// The driver: their car (car.js), going online with a position (the device's, a place, or a click on the map) that
// keeps them findable (driving.js), the requests near them, and accepting one (nearby.js).

import { ApiError } from "../../api.js";
import { replace, sameId } from "../../dom.js";
import { lifetime } from "../../lifetime.js";
import { carCard } from "./car.js";
import { drivingCard } from "./driving.js";
import { nearbyRequests } from "./nearby.js";
import { currentRide, sides, underway } from "./shared.js";

const REQUESTS_REFRESH = 15_000;

export function driverHome(root, { api, feed, campus, go, user }) {
  const life = lifetime();
  const car = carCard(api, life, (saved) => showProfile(saved));
  const driving = drivingCard(api, campus, life, {
    refresh: () => refreshRequests(),
    showOnline: (isOnline) => requests.showOnline(isOnline),
  });
  const requests = nearbyRequests(api, life, driving.map, {
    isOnline: () => driving.online, failed: (error) => driving.failed(error), go, taken: () => showDrivingIfAny(),
  });
  replace(root, sides("drive"), car.element, driving.element, requests.element);

  function showProfile(saved) {
    car.show(saved);
    driving.element.hidden = false;
    requests.element.hidden = false;
  }

  function refreshRequests() {
    requests.refresh(driving.here);
  }

  life.add(feed.on("ride.offered", () => refreshRequests()));
  life.add(feed.on("ride.cancelled", () => refreshRequests()));
  life.every(REQUESTS_REFRESH, () => refreshRequests());

  api.get("/v1/rides/driver").then((saved) => {
    if (!life.alive) return;
    showProfile(saved);
    // Still online from before (a reload, a ride just ended): carry on from the position the server holds.
    if (saved.isOnline && saved.position) driving.resume(saved.position);
  }, (error) => {
    if (!life.alive) return;
    if (error instanceof ApiError && error.status === 404) car.missing();
    else car.failed(error);
  });

  /** Points to the ride this driver drives, if one is under way (accepted here or on another device). */
  function showDrivingIfAny() {
    currentRide(api).then((ride) => {
      if (life.alive && ride && sameId(ride.driver?.id, user.id) && underway.has(ride.status)) driving.showDriving(ride.id);
    }, () => {});
  }
  showDrivingIfAny();
  return () => life.end();
}

// The driver's car: what it is and how many seats it has, shown, and the form that saves them.

import { describe, field, form, h, problem } from "../../dom.js";

/** The "Your car" card: `show(profile)` shows the driver profile saved, `missing()` asks for one, `failed(error)`
 *  tells why it could not be read; `saved(profile)` hears each one the form saves while the screen lives. */
export function carCard(api, life, saved) {
  const car = h("input", { name: "car", maxlength: 80, required: true, placeholder: "Blue Toyota Yaris, ABC-123" });
  const seats = h("input", { name: "seats", type: "number", min: 1, max: 8, value: "3", required: true, inputmode: "numeric" });
  const carSummary = h("p", { class: "car", hidden: true });
  const profileForm = form({ "aria-label": "Driver profile" }, [
    field("Car", car, "Make, colour and plate, so that the rider finds you."),
    field("Seats", seats, "Seats for riders, 1 to 8."),
    h("button", { type: "submit", class: "primary" }, "Save driver profile"),
  ], async () => {
    const count = Number(seats.value);
    if (!seats.value || !Number.isInteger(count)) throw problem("seats", "Seats is a whole number from 1 to 8.");
    const profile = await api.put("/v1/rides/driver", { car: car.value.trim(), seats: count });
    if (life.alive) saved(profile);
  });
  const carDetails = h("details", { class: "driver-profile" }, h("summary", {}, "Edit your car"), profileForm);
  const element = h("section", { class: "card", "aria-labelledby": "driver-car-title" },
    h("h2", { id: "driver-car-title" }, "Your car"), carSummary, carDetails);

  return {
    element,
    show(profile) {
      car.value = profile.car;
      seats.value = String(profile.seats);
      carSummary.textContent = `${profile.car}, ${profile.seats} ${profile.seats === 1 ? "seat" : "seats"}`;
      carSummary.hidden = false;
      carDetails.open = false;
    },
    missing() {
      carSummary.hidden = false;
      carSummary.textContent = "Add your car to drive others.";
      carDetails.open = true;
      carDetails.querySelector("summary").textContent = "Your car";
    },
    failed(error) {
      element.append(h("p", { class: "form-error", role: "alert" }, describe(error)));
    },
  };
}

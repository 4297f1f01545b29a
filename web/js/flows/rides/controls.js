// A ride screen's buttons: the driver's next step (the rider's code, to start the ride), the chat while the ride is
// under way, calling it off, and the way back once it is over.

import { ApiError } from "../../api.js";
import { chatLink, confirmButton, describe, field, form, h, problem, replace, values } from "../../dom.js";
import { finished, steps, underway } from "./shared.js";

const cancellable = new Set(["open", "accepted", "arrived"]);

/** Calling the ride off, as its driver or its rider says it: the button, the question and the answer that does it. */
function cancelWords(ride, isDriver) {
  if (isDriver) return ["Give up the ride", "Give up this ride? It is offered to other drivers.", "Yes, give it up"];
  if (ride.status === "open") return ["Cancel request", "Cancel your request? Drivers stop seeing it.", "Yes, cancel"];
  return ["Cancel ride", `Cancel this ride with ${ride.driver?.name ?? "your driver"}? The chat closes.`, "Yes, cancel"];
}

/** The driver's way to start the ride: the code the rider tells them, checked by the server; a wrong one is shown at
 *  the field with the tries left, and the fifth cancels the ride (the read after it shows so). */
function startForm({ act, load }) {
  const input = h("input", {
    name: "code", inputmode: "numeric", autocomplete: "off", maxlength: 4, pattern: "[0-9]{4}", class: "code-input",
  });
  return form({ class: "start-ride", "aria-label": "Start the ride" }, [
    field("Rider's code", input, "The four digits on the rider's screen."),
    h("button", { type: "submit", class: "primary" }, "Start ride"),
  ], async (element) => {
    const { code: entered } = values(element);
    if (!/^[0-9]{4}$/.test(entered)) throw problem("code", "Enter the four digits on the rider's screen.");
    try {
      await act("started", { code: entered });
    } catch (failure) {
      if (!(failure instanceof ApiError) || failure.status !== 409) throw failure;
      load();
      throw problem("code", describe(failure));
    }
  });
}

/** The buttons for `ride` as its driver or its rider sees it, `reached` the index of its step. */
function buttons(ride, isDriver, reached, screen) {
  const { act, failed } = screen;
  const made = [];
  const next = steps[reached + 1];
  if (isDriver && next?.action === "started" && ride.status === "arrived") {
    made.push(startForm(screen));
  } else if (isDriver && underway.has(ride.status) && next?.action) {
    const step = h("button", { type: "button", class: "primary" }, next.button);
    step.addEventListener("click", () => {
      step.disabled = true;
      act(next.action).catch((failure) => {
        step.disabled = false;
        failed(failure);
      });
    });
    made.push(step);
  }
  if (ride.matchId && underway.has(ride.status)) {
    made.push(chatLink(ride.matchId,
      isDriver ? `Chat with ${ride.riderName}` : `Chat with ${ride.driver?.name ?? "your driver"}`, { class: "chat-link" }));
    // A call inside the app instead of a phone number: neither learns the other's.
    const call = h("button", { type: "button" }, isDriver ? "Call rider" : "Call driver");
    const name = isDriver ? ride.riderName : ride.driver?.name ?? "your driver";
    call.addEventListener("click", () => screen.calls.start(ride.matchId, name, false).catch(failed));
    made.push(call);
  }
  if (cancellable.has(ride.status) && (isDriver ? ride.status !== "open" : true)) {
    const [text, question, yes] = cancelWords(ride, isDriver);
    made.push(confirmButton(text, {}, { question, yes, act: () => act("cancel"), failed }));
  }
  if (finished.has(ride.status) || (isDriver && ride.status === "open")) {
    made.push(isDriver
      ? h("a", { href: "#/rides/drive" }, "Back to driving")
      : h("a", { href: "#/rides" }, "Ask for another ride"));
  }
  return made;
}

/** The actions of a ride screen: `element`, `show(ride, isDriver, reached)` and `notFound()`. From the screen:
 *  `act(action, body)` takes the ride a step further (or calls it off), `failed(error)` tells of a failure and reads
 *  the ride again, `load()` reads it again. */
export function rideControls(screen) {
  const element = h("div", { class: "actions" });
  // What the buttons were made for: they are made again only when that changes, not to lose a question asked.
  let madeFor = null;
  return {
    element,
    show(ride, isDriver, reached) {
      const shownFor = JSON.stringify([ride.status, isDriver, ride.matchId, ride.driver?.name]);
      if (shownFor === madeFor) return;
      madeFor = shownFor;
      replace(element, buttons(ride, isDriver, reached, screen));
    },
    notFound() {
      madeFor = null;
      replace(element, h("a", { href: "#/rides" }, "Ask for a ride"), h("a", { href: "#/rides/drive" }, "Drive"));
    },
  };
}

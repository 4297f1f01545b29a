// Who brings an order: the runs of the restaurant the orderer chose, each deliverer with where they are heading and
// how far that is from the building chosen, or whoever is best placed.

import { describe, distance, h, replace, sameId } from "../../dom.js";
import { key, pointOf } from "./shared.js";

/** The choice of run in the order form: answers {element, load(place, to)}, which reads the runs of the restaurant
 *  `place` (none when it is null) with their distances from the building `to`. */
export function runChoices(api, life) {
  const element = h("div", { class: "runs" });
  let asked = 0;
  let shownRuns = null;

  async function load(place, to) {
    const ticket = ++asked;
    if (!place) {
      shownRuns = null;
      return replace(element);
    }
    const point = pointOf(to);
    try {
      const { runs } = await api.get(`/v1/restaurants/${place.id}/runs`, point ? { lat: point.lat, lon: point.lon } : {});
      if (ticket !== asked || !life.alive) return;
      show(runs, to);
    } catch (error) {
      if (ticket !== asked) return;
      shownRuns = null;
      replace(element, h("p", { class: "form-error", role: "alert" }, describe(error)));
    }
  }

  function show(runs, to) {
    // The periodic look leaves a list that did not change alone, with the person's choice and focus in it.
    const shown = JSON.stringify([to?.id, runs.map((run) => [run.id, run.held, run.capacity, run.distanceMeters])]);
    if (shown === shownRuns) return;
    shownRuns = shown;
    const previous = element.querySelector("input[name='runId']:checked")?.value ?? "";
    const any = h("input", { type: "radio", name: "runId", value: "", id: "run-any", checked: true });
    const options = runs.map((run) => {
      const full = run.held >= run.capacity;
      const away = typeof run.distanceMeters === "number" && to ? ` · ${distance(run.distanceMeters)} from ${to.name}` : "";
      return h("label", { class: "choice", dataset: { runId: key(run.id) } },
        h("input", { type: "radio", name: "runId", value: run.id, disabled: full, checked: sameId(run.id, previous) && !full }),
        h("span", {},
          h("span", { class: "name" }, run.delivererName),
          h("span", { class: "hint" }, `heading to ${run.destination.name}${away}${full ? " · full" : ""}`)));
    });
    replace(element, h("fieldset", { class: "choices" },
      h("legend", {}, "Who brings it"),
      h("label", { class: "choice" }, any, h("span", {}, h("span", { class: "name" }, "Whoever is best placed"),
        h("span", { class: "hint" }, runs.length ? "Deliverers heading near your building are asked, nearest first." : "Nobody is checked in here yet; your order waits for someone."))),
      options,
      h("p", { class: "field-error", id: "run-any-error", role: "alert" })));
  }

  return { element, load };
}

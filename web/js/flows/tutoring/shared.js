// What the tutoring screens share: roles, the rate's currency, and a profile's facts.

import { h } from "../../dom.js";

export const roles = { student: "Student", tutor: "Tutor" };
export const money = new Intl.NumberFormat(undefined, { style: "currency", currency: "EUR" });

/** A profile seen in full, as a description list of what it tells. */
export function profileFacts(full) {
  const facts = [
    ["Role", roles[full.role] ?? full.role],
    ["Courses", full.courses.join(", ")],
    ["Rate", `${money.format(full.rateCents / 100)} per hour`],
    ["Availability", full.availability],
    ["Preferences", full.preferences],
    ["About", full.bio],
    ["Description", full.description],
  ].filter(([, value]) => value);
  return h("dl", { class: "facts-list" }, facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

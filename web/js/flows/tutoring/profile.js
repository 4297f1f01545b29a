// One's tutoring profile: the role, the courses, and what the cards show of it.

import { field, form, h, problem, replace, toast } from "../../dom.js";

/** The caller's tutoring profile, or null when they have none yet. */
export async function profileOf(api) {
  try {
    return await api.get("/v1/tutoring/profile");
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
}

/** The profile form in the page's body, filled from `profile` when there is one, under `intro` when given;
 *  `saved(profile)` after it is saved. */
export function profileScreen({ context, body }, profile, intro, saved) {
  const { api } = context;
  const courses = h("input", { name: "courses", autocomplete: "off", required: true, value: profile?.courses.join(", ") ?? "", placeholder: "MAT-101, PHYS-102" });
  const rate = h("input", {
    name: "rateCents", type: "number", min: 0, max: 1000, step: "any", inputmode: "decimal",
    value: profile ? String(profile.rateCents / 100) : "",
  });
  const element = form({ "aria-label": "Tutoring profile", class: "tutoring-profile" }, [
    field("I am", h("select", { name: "role" },
      h("option", { value: "student", selected: profile?.role !== "tutor" }, "a student looking for a tutor"),
      h("option", { value: "tutor", selected: profile?.role === "tutor" }, "a tutor"))),
    field("Courses", courses, "Course codes separated by commas, such as MAT-101, PHYS-102."),
    field("Description", h("textarea", { name: "description", rows: 3, maxlength: 1000 }, profile?.description ?? ""),
      "What you need help with, or what you teach."),
    field("Rate (€ per hour)", rate, "What you ask as a tutor, or offer to pay as a student."),
    field("Availability", h("input", { name: "availability", maxlength: 200, value: profile?.availability ?? "", placeholder: "Weekday evenings" })),
    field("Preferences", h("textarea", { name: "preferences", rows: 2, maxlength: 500 }, profile?.preferences ?? ""),
      "Where and how you like to meet."),
    h("button", { type: "submit", class: "primary" }, "Save profile"),
  ], async (formElement) => {
    const controls = formElement.elements;
    const euros = controls.rateCents.value.trim() === "" ? 0 : Number(controls.rateCents.value);
    if (!Number.isFinite(euros) || euros < 0) throw problem("rateCents", "Write the rate in euros, such as 15 or 12.50.");
    const answer = await api.put("/v1/tutoring/profile", {
      role: controls.role.value,
      courses: controls.courses.value.split(/[,;\n]/).map((code) => code.trim()).filter(Boolean),
      description: controls.description.value.trim(),
      rateCents: Math.round(euros * 100),
      availability: controls.availability.value.trim(),
      preferences: controls.preferences.value.trim(),
    });
    toast("Profile saved");
    saved(answer);
  });
  replace(body, intro ? h("p", { class: "notice" }, intro) : null, element);
  if (!profile) courses.focus();
}

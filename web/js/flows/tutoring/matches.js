// The matches: each with the way to the chat, their full profile (where one may block or report them), and
// unmatching.

import { chatLink, confirmButton, describe, h, replace, toast } from "../../dom.js";
import { safetyActions } from "../../safety.js";
import { profileFacts, roles } from "./shared.js";

export function matches({ context, life, images, body }) {
  const { api, feed } = context;
  const list = h("ul", { class: "list matches", "aria-label": "Matches" });
  const empty = h("p", { class: "hint", hidden: true }, "No matches yet. Like cards: when someone likes you back, they show up here.");
  const error = h("p", { class: "form-error", role: "alert" });
  replace(body, error, empty, list);
  let loads = 0;

  async function load() {
    const token = ++loads;
    try {
      const answer = await api.get("/v1/tutoring/matches");
      if (token !== loads || !life.alive) return;
      error.textContent = "";
      images.releaseWithin(list);
      replace(list, answer.matches.map(entry));
      empty.hidden = answer.matches.length > 0;
    } catch (failure) {
      if (token === loads && life.alive) error.textContent = describe(failure);
    }
  }

  function remove(matchId) {
    const item = list.querySelector(`li[data-id="${CSS.escape(matchId.toLowerCase())}"]`);
    if (!item) return;
    images.releaseWithin(item);
    item.remove();
    empty.hidden = list.children.length > 0;
  }

  function entry(match) {
    const id = match.id.toLowerCase();
    const photo = h("img", { class: "avatar", alt: `${match.name}'s photo`, hidden: true });
    if (match.photoId) images.show(photo, match.photoId, "small");
    const details = h("div", { class: "match-profile", id: `profile-${id}`, hidden: true });
    const problem = h("p", { class: "form-error", role: "alert" });
    const toggle = h("button", { type: "button", "aria-expanded": "false", "aria-controls": details.id, "aria-label": `Profile of ${match.name}` }, "Profile");
    toggle.addEventListener("click", async () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", String(!open));
      details.hidden = open;
      if (open || details.childElementCount) return;
      replace(details, h("p", { class: "hint" }, "Loading…"));
      try {
        const full = await api.get(`/v1/tutoring/profiles/${encodeURIComponent(match.userId)}`);
        replace(details, profileFacts(full),
          safetyActions(api, { userId: match.userId, name: match.name, onBlocked: () => remove(match.id) }));
      } catch (failure) {
        replace(details, h("p", { class: "form-error", role: "alert" }, describe(failure)));
      }
    });
    const unmatch = confirmButton("Unmatch", { "aria-label": `Unmatch ${match.name}` }, {
      question: `Unmatch ${match.name}? The chat closes and neither of you sees the other again.`,
      yes: "Yes, unmatch",
      no: "Keep",
      act: async () => {
        problem.textContent = "";
        await api.delete(`/v1/tutoring/matches/${encodeURIComponent(match.id)}`);
        remove(match.id);
        toast(`Unmatched ${match.name}`);
      },
      failed: (failure) => (problem.textContent = describe(failure)),
    });
    return h("li", { dataset: { id } },
      h("div", { class: "row" }, photo,
        h("div", {},
          h("p", { class: "name" }, match.name),
          h("p", { class: "hint" }, `${roles[match.role] ?? match.role} · ${match.courses.join(", ")}`))),
      h("div", { class: "actions" },
        chatLink(match.id, "Chat", { class: "button primary", "aria-label": `Chat with ${match.name}` }), toggle, unmatch),
      problem, details);
  }

  life.add(feed.on("tutoring.matched", () => load()));
  life.add(feed.on("tutoring.unmatched", (data) => {
    if (data.matchId) remove(data.matchId);
    load();
  }));
  load();
}

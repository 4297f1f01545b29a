// Blocking a person (asked first; neither then sees the other in any app) and reporting them to their campus's
// moderators (a small form, why and what happened, in the button's place), wherever a person shows: a tutoring card,
// a match's profile, a listing, a chat.

import { confirmButton, field, form, h, replace, toast } from "./dom.js";

const reasons = { harassment: "Harassment", unsafe: "Made me feel unsafe", spam: "Spam", fake: "Fake profile", other: "Something else" };

/** "Block NAME" and "Report NAME" for the person `userId`; a report from a listing names it too. `onBlocked` runs
 * once the block is made. */
export function safetyActions(api, { userId, name, listingId, onBlocked }) {
  const block = confirmButton(`Block ${name}`, { class: "link danger" }, {
    question: `Block ${name}? Neither of you will see the other in any app, and what is open between you ends.`,
    yes: "Block",
    act: async () => {
      await api.post("/v1/blocks", { userId });
      toast(`You blocked ${name}`);
      onBlocked?.();
    },
  });
  return h("div", { class: "safety" }, h("div", { class: "actions block" }, block), reportButton(api, userId, name, listingId));
}

/** A "Report NAME" button for the person `userId` (and their listing `listingId`, if any); the form opens in the
 * button's place. */
function reportButton(api, userId, name, listingId) {
  const place = h("div", { class: "report" });
  const open = h("button", { type: "button", class: "link" }, `Report ${name}`);
  // The form gone, the focus goes back to the button that opened it rather than to the page's start.
  const close = () => {
    replace(place, open);
    open.focus();
  };
  open.addEventListener("click", () => {
    const reason = h("select", { name: "reason", required: true },
      h("option", { value: "" }, "Choose one"),
      Object.entries(reasons).map(([value, text]) => h("option", { value }, text)));
    const detail = h("textarea", { name: "detail", rows: 3, maxlength: 2000, placeholder: "What happened (optional)" });
    const escape = (event) => {
      if (event.key === "Escape") close();
    };
    replace(place, form({ "aria-label": `Report ${name}`, onkeydown: escape }, [
      field("Why", reason),
      field("What happened", detail),
      h("div", { class: "actions" },
        h("button", { type: "submit", class: "danger" }, "Send report"),
        h("button", { type: "button", onclick: close }, "Cancel")),
    ], async () => {
      await api.post("/v1/reports", { userId, listingId, reason: reason.value || undefined, detail: detail.value.trim() || undefined });
      toast("Thank you: your campus's moderators will look at it.");
      close();
    }));
    reason.focus();
  });
  replace(place, open);
  return place;
}

// Reporting a person to their campus's moderators: a button that opens a small form (why, and what happened) in its
// place, sends the report, and closes again.

import { field, form, h, replace, toast } from "./dom.js";

const reasons = { harassment: "Harassment", unsafe: "Made me feel unsafe", spam: "Spam", fake: "Fake profile", other: "Something else" };

/** A "Report NAME" button for the person `userId`; the form opens in the button's place. */
export function reportButton(api, userId, name) {
  const place = h("div", { class: "report" });
  const open = h("button", { type: "button", class: "link" }, `Report ${name}`);
  const close = () => replace(place, open);
  open.addEventListener("click", () => {
    const reason = h("select", { name: "reason", required: true },
      h("option", { value: "" }, "Choose one"),
      Object.entries(reasons).map(([value, text]) => h("option", { value }, text)));
    const detail = h("textarea", { name: "detail", rows: 3, maxlength: 2000, placeholder: "What happened (optional)" });
    replace(place, form({ "aria-label": `Report ${name}` }, [
      field("Why", reason),
      field("What happened", detail),
      h("div", { class: "actions" },
        h("button", { type: "submit", class: "danger" }, "Send report"),
        h("button", { type: "button", onclick: close }, "Cancel")),
    ], async () => {
      await api.post("/v1/reports", { userId, reason: reason.value || undefined, detail: detail.value.trim() || undefined });
      toast("Thank you: your campus's moderators will look at it.");
      close();
    }));
    reason.focus();
  });
  replace(place, open);
  return place;
}

// The tutoring screens.

import { h, replace } from "../dom.js";

export function mount(root) {
  replace(root, h("section", { class: "card" }, h("h2", {}, "tutoring")));
}

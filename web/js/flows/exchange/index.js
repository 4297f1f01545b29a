// Snack Exchange: browse the campus's listings (browse.js), a listing and agreeing to swap (listing.js), making a
// listing with a photo (new.js), one's own listings (mine.js), and the swap itself for both sides (swap.js).
// #/exchange browses; #/exchange/new, #/exchange/mine, #/exchange/listings/<id>, #/exchange/exchanges/<id>.

import { describe, h, replace } from "../../dom.js";
import { imageKeeper } from "../../images.js";
import { lifetime } from "../../lifetime.js";
import { browse } from "./browse.js";
import { listingScreen } from "./listing.js";
import { mine } from "./mine.js";
import { newListing } from "./new.js";
import { swap } from "./swap.js";

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "exchange",
  title: "Exchange",
  stylesheet: new URL("exchange.css", import.meta.url).href,
  notices: {
    "exchange.agreed": (data) => `${data.takerName} wants to swap for your ${data.offered}`,
    "exchange.cancelled": () => "A swap was called off",
    "exchange.question.asked": (data) => `${data.askerName} asks about your ${data.offered}`,
  },
};

/** The exchange section with its screens' tabs; the screen shows in its body. */
export function mount(root, context) {
  const [screen = "browse", id] = context.params;
  const images = imageKeeper(context.api);
  const life = lifetime();
  life.add(() => images.stop());

  const tabs = [["browse", "#/exchange", "Browse"], ["new", "#/exchange/new", "New listing"], ["mine", "#/exchange/mine", "My listings"]];
  const body = h("div", { class: "exchange-body" });
  replace(root, h("section", { class: "card exchange", "aria-labelledby": "exchange-title" },
    h("h2", { id: "exchange-title" }, "Snack Exchange"),
    h("nav", { class: "subnav", "aria-label": "Snack Exchange" }, tabs.map(([name, href, text]) =>
      h("a", { href, "aria-current": name === screen ? "page" : false }, text))),
    body));

  const page = {
    context, life, images, body,
    fail(error) {
      if (life.alive) replace(body, h("p", { class: "form-error", role: "alert" }, describe(error)));
    },
  };
  if (screen === "new") newListing(page);
  else if (screen === "mine") mine(page);
  else if (screen === "listings" && id) listingScreen(page, id);
  else if (screen === "exchanges" && id) swap(page, id);
  else browse(page);
  return () => life.end();
}

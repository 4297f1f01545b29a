// The page: who is logged in, which screen shows (from the location's hash, so that back and reload work), the
// socket, the unread badge and the notices of what arrived.

import { api } from "./api.js";
import { feed } from "./feed.js";
import { h, replace, toast } from "./dom.js";
import * as auth from "./views/auth.js";
import * as me from "./views/me.js";
import * as chats from "./views/chats.js";
import * as delivery from "./views/delivery.js";
import * as tutoring from "./views/tutoring.js";
import * as exchange from "./views/exchange.js";
import * as rides from "./views/rides.js";

const views = { delivery, tutoring, exchange, rides, chats, me };
const view = document.getElementById("view");
let unmount = null;
let campus = null;

/** What each view gets: the API, the feed, the campus (with its centre) and a way to go elsewhere. */
function context(params) {
  return {
    api,
    feed,
    params,
    campus,
    user: api.user,
    refreshUnread: () => refreshUnread(),
    go: (path) => {
      location.hash = `#/${path}`;
    },
  };
}

async function campusOf(user) {
  if (campus?.domain === user.campus) return campus;
  const { campuses } = await api.get("/v1/campuses");
  const found = campuses.find((entry) => entry.domain === user.campus) ?? campuses[0];
  campus = { ...found, center: { lat: found.center.latitude, lon: found.center.longitude } };
  return campus;
}

async function show() {
  unmount?.();
  unmount = null;
  const tabs = document.getElementById("tabs");
  if (!api.user) {
    tabs.hidden = true;
    unmount = auth.mount(view, { api });
    return;
  }
  tabs.hidden = false;
  const [name = "delivery", ...params] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const screen = views[name] ? name : "delivery";
  for (const link of tabs.querySelectorAll("a")) {
    if (link.dataset.tab === screen) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    await campusOf(api.user);
  } catch {
    replace(view, h("p", { class: "form-error", role: "alert" }, "The server cannot be reached. Reload to try again."));
    return;
  }
  replace(view);
  unmount = views[screen].mount(view, context(params)) ?? null;
  view.focus({ preventScroll: true });
}

let shownFor = null;

function sessionChanged() {
  const userId = api.user?.id ?? null;
  if (userId !== shownFor) {
    shownFor = userId;
    if (userId) {
      feed.start(userId);
      refreshUnread();
    } else {
      feed.stop();
    }
  }
  show();
}

let unreadTimer = null;

/** The unread badge of the Chats tab, from the conversations' counts. */
function refreshUnread() {
  clearTimeout(unreadTimer);
  unreadTimer = setTimeout(async () => {
    if (!api.user) return;
    try {
      const { conversations } = await api.get("/v1/conversations");
      const unread = conversations.reduce((sum, entry) => sum + (entry.unreadCount ?? 0), 0);
      const badge = document.getElementById("unread");
      badge.hidden = unread === 0;
      badge.textContent = String(unread);
      badge.setAttribute("aria-label", `${unread} unread`);
    } catch {
      // The next message tries again.
    }
  }, 150);
}

for (const type of ["message.sent", "conversation.opened", "conversation.closed"]) {
  feed.on(type, refreshUnread);
}

// Notices of what concerns the person, wherever they are in the app; entries replayed from long ago stay quiet.
const notices = {
  "offer.made": (data) => [`${data.ordererName} asks you to bring ${data.items} from ${data.restaurant?.name}`, "delivery"],
  "match.accepted": () => ["A deliverer accepted your order", "delivery"],
  "match.cancelled": () => ["A delivery was cancelled", "delivery"],
  "match.completed": () => ["A delivery is complete", "delivery"],
  "order.expired": () => ["Your order expired without a deliverer", "delivery"],
  "tutoring.matched": () => ["It's a match!", "tutoring"],
  "exchange.agreed": (data) => [`${data.takerName} wants to swap for your ${data.offered}`, "exchange"],
  "exchange.cancelled": () => ["A swap was called off", "exchange"],
  "ride.offered": (data) => [`${data.riderName} needs a ride`, "rides"],
  "ride.accepted": (data) => [`${data.driver?.name ?? "A driver"} is on the way`, "rides"],
  "ride.reopened": () => ["Your driver gave up the ride; asking others", "rides"],
  "ride.cancelled": () => ["A ride was cancelled", "rides"],
  "ride.arrived": () => ["Your driver has arrived", "rides"],
};

feed.on("*", (data, frame) => {
  const notice = notices[frame.type];
  if (!notice || Date.now() - Date.parse(frame.at) > 10 * 60_000) return;
  const [text] = notice(data);
  toast(text);
});

window.addEventListener("hashchange", show);
// For looking into the page from the browser's console.
globalThis.tarrare = { api, feed };

api.onChange(sessionChanged);
sessionChanged();

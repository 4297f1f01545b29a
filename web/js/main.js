// The page: who is logged in, which screen shows (from the location's hash, so that back and reload work), the
// socket, the unread badge and the notices of what arrived.

import { api } from "./api.js";
import { callDesk } from "./calls.js";
import { feed } from "./feed.js";
import { h, replace, toast } from "./dom.js";
import * as auth from "./views/auth.js";
import * as me from "./views/me.js";
import * as chats from "./views/chats.js";
import { flows } from "./flows.js";

const views = { ...Object.fromEntries(flows.map((module) => [module.flow.name, module])), chats, me };
const home = flows[0].flow.name;
const view = document.getElementById("view");
const calls = callDesk({ api, feed });
let unmount = null;
let campus = null;

/** What each view gets: the API, the feed, the campus (with its centre) and a way to go elsewhere. */
function context(params) {
  return {
    api,
    feed,
    calls,
    params,
    campus,
    user: api.user,
    refreshUnread: () => refreshUnread(),
    go: (path) => {
      location.hash = `#/${path}`;
    },
  };
}

/** The person's campus from accounts' list (`user.campus` is its domain), named in the header; null when the list
 *  no longer has it: then no map may fall back to another campus's centre. */
async function campusOf(user) {
  if (campus?.domain !== user.campus) {
    const { campuses } = await api.get("/v1/campuses");
    const found = campuses.find((entry) => entry.domain === user.campus);
    campus = found ? { ...found, center: { lat: found.center.latitude, lon: found.center.longitude } } : null;
  }
  const named = document.getElementById("campus");
  named.textContent = campus?.name ?? "";
  named.hidden = !campus;
  return campus;
}

/** The location's hash as a screen's name and its parameters: "#/chats/42" is ["chats", "42"]. */
function route() {
  try {
    return location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  } catch {
    return [];
  }
}

async function show() {
  unmount?.();
  unmount = null;
  const tabs = document.getElementById("tabs");
  if (!api.user) {
    tabs.hidden = true;
    document.getElementById("campus").hidden = true;
    // The link of a confirmation email: confirmed once, then gone from the address so that a reload asks nothing.
    const [name, email, code] = route();
    const link = name === "verify" && email && code ? { email, code } : null;
    if (link) history.replaceState(null, "", "#/");
    unmount = auth.mount(view, { api, link });
    return;
  }
  tabs.hidden = false;
  const [name = home, ...params] = route();
  if (name === "verify") history.replaceState(null, "", "#/");
  const screen = views[name] ? name : home;
  for (const link of tabs.querySelectorAll("a")) {
    if (link.dataset.tab === screen) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    if (!(await campusOf(api.user))) {
      replace(view, h("p", { class: "form-error", role: "alert" }, `This server no longer serves ${api.user.campus}.`));
      return;
    }
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

// NB: a read on another device of the person's changes the count too.
for (const type of ["message.sent", "conversation.opened", "conversation.closed", "conversation.read"]) {
  feed.on(type, refreshUnread);
}

// Notices of what concerns the person, wherever they are in the app; entries replayed from long ago stay quiet.
const notices = Object.assign({}, ...flows.map((module) => module.flow.notices));

feed.on("*", (data, frame) => {
  const notice = notices[frame.type];
  if (!notice || Date.now() - Date.parse(frame.at) > 10 * 60_000) return;
  toast(notice(data));
});

// Each flow's tab, before the shell's own (Chats, Me), and its styles.
const chatsTab = document.querySelector('#tabs a[data-tab="chats"]');
for (const { flow } of flows) {
  chatsTab.before(h("a", { href: `#/${flow.name}`, "data-tab": flow.name }, flow.title));
  document.head.append(h("link", { rel: "stylesheet", href: flow.stylesheet }));
}

window.addEventListener("hashchange", show);
// The service worker shows pushes while the page is away (see views/me.js); without it the page works the same.
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
// For looking into the page from the browser's console.
globalThis.tarrare = { api, feed };

api.onChange(sessionChanged);
sessionChanged();

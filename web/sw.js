// The service worker: shows what the server pushes while no page of the app is on screen, and opens the screen it
// is about when the notification is clicked. NB: served from the root (/sw.js) so that its scope is the whole app,
// and with no-cache like every file of the client, so that a new version is installed at the next load.

self.addEventListener("install", () => self.skipWaiting());
// Pages already open are taken over at once: a notification's click navigates only a page this worker controls.
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  event.waitUntil(showPush(event.data));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(openScreen(event.notification.data?.open));
});

/** The notification of a push's payload `{type, seq, title, body, open?, badge?}`: a newer one about the same screen (a
 *  conversation's messages) replaces the one shown. A payload that cannot be read still tells that something came. */
function showPush(data) {
  let payload = null;
  try {
    payload = data?.json();
  } catch {
    payload = null;
  }
  if (!payload || typeof payload !== "object") {
    return self.registration.showNotification("Tarrare", { body: "Something new", tag: "tarrare", icon: "/icon.svg" });
  }
  const open = typeof payload.open === "string" && payload.open.startsWith("#/") ? payload.open : null;
  // The app's icon counts the conversations with unread messages, where the browser shows such a count.
  if (Number.isInteger(payload.badge) && "setAppBadge" in self.navigator) {
    self.navigator.setAppBadge(payload.badge).catch(() => {});
  }
  return self.registration.showNotification(String(payload.title || "Tarrare"), {
    body: String(payload.body ?? ""),
    tag: open ?? String(payload.type || "tarrare"),
    data: { open },
    icon: "/icon.svg",
  });
}

/** Shows the app at `route` (a hash like "#/chats/42"): in a window of the app already open, brought to the front,
 *  or in a new one. */
async function openScreen(route) {
  const url = new URL(`/${route ?? ""}`, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window" });
  const client = windows.find((candidate) => new URL(candidate.url).origin === self.location.origin);
  if (!client) return self.clients.openWindow(url);
  // NB: focusing needs the click's user activation; the navigation does not, and happens either way.
  await Promise.allSettled([client.focus(), client.navigate(url)]);
}

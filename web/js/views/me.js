// The person: name, campus, bio and photo as others see them, whom they blocked, notifications on this device,
// logging out, and deleting the account.

import { ApiError } from "../api.js";
import { describe, field, form, h, problem, replace, toast, values } from "../dom.js";
import { imageKeeper } from "../images.js";

export function mount(root, { api, campus }) {
  const images = imageKeeper(api);
  const photo = h("img", { class: "avatar large", alt: "Your photo", hidden: true });
  const user = api.user;
  const showPhoto = (id) => id && images.show(photo, id, "small");

  const profile = form({ "aria-label": "Profile" }, [
    field("Name", h("input", { name: "name", value: user.name, maxlength: 80, required: true, autocomplete: "name" })),
    field("About you", h("textarea", { name: "bio", maxlength: 500, rows: 3 }, user.bio ?? "")),
    h("button", { type: "submit", class: "primary" }, "Save"),
  ], async (element) => {
    const saved = await api.patch("/v1/me", values(element));
    api.setUser(saved);
    toast("Saved");
  });

  const upload = form({ "aria-label": "Photo" }, [
    field("Photo", h("input", { name: "photoId", type: "file", accept: "image/jpeg,image/png,image/webp" })),
    h("button", { type: "submit" }, "Upload photo"),
  ], async (element) => {
    const file = element.elements.photoId.files[0];
    if (!file) throw problem("photoId", "Choose a photo first.");
    const image = await api.request("POST", "/v1/media", { body: file });
    // Accounts learns of the new image from media's event, a moment later.
    const saved = await api.whenKnown(() => api.patch("/v1/me", { photoId: image.id }));
    api.setUser(saved);
    element.reset();
    showPhoto(saved.photoId);
    toast("Photo saved");
  });

  const blocked = h("ul", { class: "list blocked", "aria-label": "People you blocked" });
  async function loadBlocked() {
    try {
      const { blocks } = await api.get("/v1/blocks");
      replace(blocked, blocks.length ? blocks.map((block) => {
        const lift = h("button", { type: "button" }, "Unblock");
        lift.addEventListener("click", async () => {
          lift.disabled = true;
          try {
            await api.delete(`/v1/blocks/${block.userId}`);
            toast(`You unblocked ${block.name}`);
            loadBlocked();
          } catch (error) {
            lift.disabled = false;
            toast(describe(error), "error");
          }
        });
        return h("li", { class: "spread", dataset: { userId: block.userId.toLowerCase() } }, h("span", {}, block.name), lift);
      }) : h("li", { class: "hint" }, "Nobody. Block someone from a chat; neither of you then sees the other."));
    } catch (error) {
      replace(blocked, h("li", { class: "form-error", role: "alert" }, describe(error)));
    }
  }

  // Deleting asks for the password again; the server refuses a wrong one and deletes nothing.
  const deletion = form({ "aria-label": "Delete my account", class: "deletion" }, [
    h("p", { class: "hint" },
      "Everything you made in every app, your profile, your photos, the text of your messages and your " +
      "notifications, is erased from every service. Matches others keep show a deleted account. This cannot be undone."),
    field("Your password", h("input", { name: "password", type: "password", required: true, autocomplete: "current-password" })),
    h("button", { type: "submit", class: "danger" }, "Delete my account"),
  ], async (element) => {
    const { password } = values(element);
    if (!password) throw problem("password", "Enter your password to delete your account.");
    await api.request("DELETE", "/v1/me", { body: { password } });
    api.forget();
    toast("Your account is deleted.");
  });

  replace(root,
    h("section", { class: "card", "aria-labelledby": "me-title" },
      h("h2", { id: "me-title" }, "Me"),
      h("div", { class: "row" }, photo, h("div", {},
        h("p", { class: "name" }, user.name),
        h("p", { class: "hint" }, user.email),
        h("p", { class: "hint", id: "me-campus" }, campus.name))),
      profile,
      upload,
      h("h3", {}, "Blocked"),
      blocked,
      notificationsOnThisDevice(api),
      h("button", { type: "button", class: "danger", onclick: () => api.logout() }, "Log out"),
      h("details", { class: "delete-account" }, h("summary", {}, "Delete my account"), deletion)));
  loadBlocked();
  showPhoto(user.photoId);
  api.get("/v1/me").then((fresh) => api.setUser(fresh)).catch(() => {});
  return () => images.stop();
}

// Which device of the server this browser's push subscription is, and whose: another person logging in here starts
// with notifications off.
const DEVICE_KEY = "tarrare.pushDevice";

function storedDevice(userId) {
  try {
    const device = JSON.parse(localStorage.getItem(DEVICE_KEY));
    return device?.userId === userId ? device.id : null;
  } catch {
    return null;
  }
}

/** The base64url public key of the server as the bytes `pushManager.subscribe` takes. */
function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
}

/** A failure of a step, told as a sentence for the status line. */
function failure(message) {
  return Object.assign(new Error(message), { detail: message });
}

/** What `promise` settles with, or the failure `message` when it has not settled within `seconds`. */
function within(seconds, promise, message) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(failure(message)), seconds * 1000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The service worker's registration (main.js registers it). */
function workerRegistration() {
  return within(10, navigator.serviceWorker.ready,
    "This browser could not start the app's service worker, so it cannot show notifications.");
}

/** Me → "Notifications on this device": subscribes this browser to the server's pushes and registers it as a device,
 *  or unsubscribes and forgets it. What went wrong shows in the section's status line. */
function notificationsOnThisDevice(api) {
  const userId = api.user.id;
  const status = h("p", { class: "hint", role: "status", id: "push-status" });
  const button = h("button", { type: "button", "aria-describedby": "push-status" });
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

  function render(isOn) {
    button.textContent = isOn ? "Turn off notifications" : "Turn on notifications";
    button.dataset.on = String(isOn);
    button.hidden = !supported;
  }

  async function turnOn() {
    const permission = await Notification.requestPermission();
    if (permission === "denied") {
      throw failure("Notifications are blocked for this site. Allow them in the browser's site settings, then try " +
        "again.");
    }
    if (permission !== "granted") throw failure("Notifications stay off: the browser did not allow them.");
    let publicKey;
    try {
      ({ publicKey } = await api.get("/v1/push/web"));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw failure("This server does not send notifications.");
      throw error;
    }
    const registration = await workerRegistration();
    let subscription;
    try {
      const options = { userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) };
      // NB: a browser that cannot reach its push service may never answer (headless Chromium offline).
      subscription = await within(20, registration.pushManager.subscribe(options),
        "This browser's push service did not answer. Notifications stay off; try again later.");
    } catch (error) {
      if (error?.detail) throw error;
      const reason = error?.message || "no reason given";
      throw failure(`This browser could not subscribe to its push service (${reason}). Notifications stay off.`);
    }
    try {
      const { id } = await api.post("/v1/devices", { platform: "web", subscription: subscription.toJSON() });
      localStorage.setItem(DEVICE_KEY, JSON.stringify({ userId, id }));
    } catch (error) {
      await subscription.unsubscribe().catch(() => {});
      throw error;
    }
    status.textContent = "Notifications are on: this device is told of what comes while the app is closed.";
  }

  async function turnOff() {
    const registration = await workerRegistration().catch(() => null);
    await (await registration?.pushManager.getSubscription())?.unsubscribe();
    const id = storedDevice(userId);
    if (id) {
      try {
        await api.delete(`/v1/devices/${encodeURIComponent(id)}`);
      } catch (error) {
        // Already gone: the server forgets a device its push service refused.
        if (!(error instanceof ApiError && error.status === 404)) throw error;
      }
    }
    localStorage.removeItem(DEVICE_KEY);
    status.textContent = "Notifications are off on this device.";
  }

  button.addEventListener("click", async () => {
    const isOn = button.dataset.on === "true";
    button.disabled = true;
    status.textContent = isOn ? "Turning notifications off…" : "Turning notifications on…";
    try {
      await (isOn ? turnOff() : turnOn());
      render(!isOn);
    } catch (error) {
      status.textContent = describe(error);
    } finally {
      button.disabled = false;
    }
  });

  render(false);
  if (!supported) {
    status.textContent = "This browser cannot show notifications from a web page.";
  } else if (storedDevice(userId)) {
    // On only while the browser still holds the subscription that was registered.
    workerRegistration()
      .then((registration) => registration.pushManager.getSubscription())
      .then((subscription) => render(Boolean(subscription)))
      .catch(() => {});
  }
  return h("section", { class: "device-notifications", "aria-labelledby": "push-title" },
    h("h3", { id: "push-title" }, "Notifications on this device"),
    h("p", { class: "hint" }, "Get a notification on this device of what comes while the app is closed."),
    h("div", { class: "actions" }, button),
    status);
}

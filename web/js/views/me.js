// The person: name, campus, bio and photo as others see them, whom they blocked, logging out, and deleting the
// account.

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
      h("button", { type: "button", class: "danger", onclick: () => api.logout() }, "Log out"),
      h("details", { class: "delete-account" }, h("summary", {}, "Delete my account"), deletion)));
  loadBlocked();
  showPhoto(user.photoId);
  api.get("/v1/me").then((fresh) => api.setUser(fresh)).catch(() => {});
  return () => images.stop();
}

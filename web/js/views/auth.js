// Logging in, signing up with a campus email, and confirming the email when the campus asks for it.

import { field, form, h, replace, values } from "../dom.js";

export function mount(root, { api }) {
  let mode = "login";
  let pendingEmail = "";

  function input(name, type, autocomplete, extra = {}) {
    return h("input", { name, type, autocomplete, required: true, ...extra });
  }

  function render() {
    const heading = { login: "Log in", signup: "Sign up", verify: "Confirm your email" }[mode];
    const switcher =
      mode === "verify"
        ? null
        : h(
            "p",
            { class: "switch" },
            mode === "login" ? "New here? " : "Have an account? ",
            h("button", { type: "button", class: "link", onclick: () => {
              mode = mode === "login" ? "signup" : "login";
              render();
            } }, mode === "login" ? "Sign up" : "Log in"),
          );
    replace(root, h("section", { class: "card auth", "aria-labelledby": "auth-title" },
      h("h2", { id: "auth-title" }, heading),
      mode === "signup" ? campusHint : null,
      mode === "verify" ? h("p", { class: "hint" }, `We sent a six-digit code to ${pendingEmail}.`) : null,
      screens[mode](),
      switcher));
    root.querySelector("input")?.focus();
  }

  const screens = {
    login: () =>
      form({ "aria-label": "Log in" }, [
        field("Email", input("email", "email", "username")),
        field("Password", input("password", "password", "current-password")),
        h("button", { type: "submit", class: "primary" }, "Log in"),
      ], async (element) => {
        const answer = await api.request("POST", "/v1/auth/login", { body: values(element), anonymous: true });
        api.begin(answer);
      }),
    signup: () =>
      form({ "aria-label": "Sign up" }, [
        field("Name", input("name", "text", "name", { maxlength: 80 })),
        field("Campus email", input("email", "email", "email")),
        field("Password", input("password", "password", "new-password", { minlength: 8 }), "At least 8 characters."),
        h("button", { type: "submit", class: "primary" }, "Sign up"),
      ], async (element) => {
        const body = values(element);
        const answer = await api.request("POST", "/v1/auth/signup", { body, anonymous: true });
        if (answer.accessToken) return api.begin(answer);
        pendingEmail = body.email;
        pendingPassword = body.password;
        mode = "verify";
        render();
      }),
    verify: () =>
      form({ "aria-label": "Confirm your email" }, [
        field("Code", input("code", "text", "one-time-code", { inputmode: "numeric", pattern: "[0-9]{6}", maxlength: 6 })),
        h("button", { type: "submit", class: "primary" }, "Confirm"),
      ], async (element) => {
        await api.request("POST", "/v1/auth/verify", { body: { email: pendingEmail, code: values(element).code }, anonymous: true });
        const answer = await api.request("POST", "/v1/auth/login", {
          body: { email: pendingEmail, password: pendingPassword },
          anonymous: true,
        });
        api.begin(answer);
      }),
  };
  let pendingPassword = "";

  // NB: filled in where it stands, so that the form being typed in is not drawn anew.
  const campusHint = h("p", { class: "hint", id: "campus-hint" });
  api.request("GET", "/v1/campuses", { anonymous: true })
    .then((answer) => {
      // Each served domain with its campus's name: "Use your email at a.fi (A), b.fi (B) or c.fi (C)."
      const served = answer.campuses.map((campus) => `${campus.domain} (${campus.name})`);
      const listed = served.length > 1 ? `${served.slice(0, -1).join(", ")} or ${served.at(-1)}` : served[0];
      campusHint.textContent = `Use your email at ${listed}.`;
    })
    .catch(() => {});
  render();
}

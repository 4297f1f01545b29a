// Logging in, signing up with a campus email, confirming the email when the campus asks for it (by the code typed or
// by the link in the email), and setting a new password with a code sent by email.

import { describe, field, form, h, replace, values } from "../dom.js";

/** `link` is the email and code of a confirmation link the page was opened at: confirmed at once. */
export function mount(root, { api, link = null }) {
  let mode = link ? "verify" : "login";
  let pendingEmail = link?.email ?? "";
  let pendingPassword = "";
  let notice = "";

  function input(name, type, autocomplete, extra = {}) {
    return h("input", { name, type, autocomplete, required: true, ...extra });
  }

  function go(next, message = "") {
    mode = next;
    notice = message;
    render();
  }

  /** A line under the form with a button that goes to the screen `next`. */
  function switchTo(question, text, next) {
    return h("p", { class: "switch" }, question, h("button", { type: "button", class: "link", onclick: () => go(next) },
      text));
  }

  function render() {
    const heading = {
      login: "Log in",
      signup: "Sign up",
      verify: "Confirm your email",
      forgot: "Reset your password",
      reset: "Reset your password",
    }[mode];
    const hint = {
      verify: `We sent a six-digit code to ${pendingEmail}.`,
      reset: `If ${pendingEmail} has an account, we sent a six-digit code to it.`,
    }[mode];
    const switcher = {
      login: [
        switchTo("New here? ", "Sign up", "signup"),
        switchTo("", "Forgot your password?", "forgot"),
      ],
      signup: switchTo("Have an account? ", "Log in", "login"),
      forgot: switchTo("Remembered it? ", "Log in", "login"),
      reset: switchTo("Remembered it? ", "Log in", "login"),
    }[mode];
    replace(root, h("section", { class: "card auth", "aria-labelledby": "auth-title" },
      h("h2", { id: "auth-title" }, heading),
      mode === "signup" ? campusHint : null,
      hint ? h("p", { class: "hint" }, hint) : null,
      mode === "login" && notice ? h("p", { class: "notice", role: "status" }, notice) : null,
      screens[mode](),
      switcher));
    const inputs = [...root.querySelectorAll("input")];
    (inputs.find((element) => !element.value) ?? inputs[0])?.focus();
  }

  async function logIn(email, password) {
    api.begin(await api.request("POST", "/v1/auth/login", { body: { email, password }, anonymous: true }));
  }

  function codeField(value) {
    const extra = { inputmode: "numeric", pattern: "[0-9]{6}", maxlength: 6, value };
    return field("Code", input("code", "text", "one-time-code", extra));
  }

  const screens = {
    login: () =>
      form({ "aria-label": "Log in" }, [
        field("Email", input("email", "email", "email", { value: pendingEmail })),
        field("Password", input("password", "password", "current-password")),
        h("button", { type: "submit", class: "primary" }, "Log in"),
      ], async (element) => {
        const { email, password } = values(element);
        await logIn(email, password);
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
        go("verify");
      }),
    verify: () => {
      const status = h("p", { class: "hint", role: "status", "aria-live": "polite" });
      const resend = h("button", { type: "button", onclick: async () => {
        resend.disabled = true;
        try {
          await api.request("POST", "/v1/auth/verify/resend", { body: { email: pendingEmail }, anonymous: true });
          status.textContent = "A new code is on its way.";
        } catch (error) {
          status.textContent = describe(error);
        } finally {
          resend.disabled = false;
        }
      } }, "Send the code again");
      const confirm = form({ "aria-label": "Confirm your email" }, [
        codeField(link?.code),
        h("button", { type: "submit", class: "primary" }, "Confirm"),
      ], async (element) => {
        await api.request("POST", "/v1/auth/verify", { body: { email: pendingEmail, code: values(element).code }, anonymous: true });
        if (pendingPassword) return logIn(pendingEmail, pendingPassword);
        go("login", "Your email is confirmed. Log in.");
      });
      return [confirm, h("div", { class: "actions" }, resend), status];
    },
    forgot: () =>
      form({ "aria-label": "Reset your password" }, [
        field("Email", input("email", "email", "email", { value: pendingEmail })),
        h("button", { type: "submit", class: "primary" }, "Send the code"),
      ], async (element) => {
        pendingEmail = values(element).email;
        await api.request("POST", "/v1/auth/password-reset", { body: { email: pendingEmail }, anonymous: true });
        go("reset");
      }),
    reset: () =>
      form({ "aria-label": "Set a new password" }, [
        codeField(),
        field("New password", input("password", "password", "new-password", { minlength: 8 }), "At least 8 characters."),
        h("button", { type: "submit", class: "primary" }, "Set password"),
      ], async (element) => {
        const { code, password } = values(element);
        await api.request("POST", "/v1/auth/password-reset/confirm", {
          body: { email: pendingEmail, code, password },
          anonymous: true,
        });
        await logIn(pendingEmail, password);
      }),
  };

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
  if (link) {
    root.querySelector("form").requestSubmit();
    link = null;
  }
}

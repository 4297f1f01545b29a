// Building the page from data. Text always goes in as text (textContent, attributes), never as markup: a name
// like `<img src=x onerror=...>` shows as those characters.

/** An element: `h("button", {type: "submit", onclick: f}, "Send")`. Children are nodes, strings or arrays of them;
 *  null and false are skipped. Props starting with `on` are listeners; `dataset` and `aria` take objects. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      Object.assign(element.dataset, value);
    } else if (key === "class") {
      element.className = value;
    } else if (key in element && typeof value !== "string") {
      element[key] = value;
    } else {
      element.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `element` holds. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

let nextId = 0;

/** A labelled form control with a place for its error below it: `{field, input, error}`. The input's `name` is the
 *  request field it feeds, so that a problem naming that field shows its detail here. */
export function field(label, input, hint) {
  const id = input.id || `field-${++nextId}`;
  input.id = id;
  const error = h("p", { class: "field-error", id: `${id}-error`, role: "alert" });
  const hintElement = hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null;
  input.setAttribute("aria-describedby", [hintElement?.id, error.id].filter(Boolean).join(" "));
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hintElement, error);
}

/** A form that sends itself with `submit(form)`, shows a problem's detail next to the field it names (or at the top
 *  of the form), and keeps its button disabled while the request is under way. */
export function form(props, children, submit) {
  const general = h("p", { class: "form-error", role: "alert" });
  const element = h("form", { ...props, novalidate: true }, general, children);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(element);
    const buttons = [...element.querySelectorAll("button")];
    buttons.forEach((button) => (button.disabled = true));
    try {
      await submit(element);
    } catch (error) {
      showError(element, error);
    } finally {
      buttons.forEach((button) => (button.disabled = false));
    }
  });
  return element;
}

/** The named controls of a form as an object of trimmed strings (passwords as typed). */
export function values(element) {
  const result = {};
  for (const control of element.elements) {
    if (!control.name || ((control.type === "radio" || control.type === "checkbox") && !control.checked)) continue;
    result[control.name] = control.type === "password" ? control.value : control.value.trim();
  }
  return result;
}

/** Empties the error places of a form. */
export function clearErrors(container) {
  for (const place of container.querySelectorAll(".field-error, .form-error")) place.textContent = "";
  for (const input of container.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
}

/** Shows an error inside `container`: next to the control whose name is the problem's field, else in the form's
 *  general place (or a toast when there is none). */
export function showError(container, error) {
  const detail = describe(error);
  const name = error?.field;
  const input = name ? container.querySelector(`[name="${CSS.escape(name)}"]`) : null;
  const place = input ? container.querySelector(`#${CSS.escape(input.id)}-error`) : container.querySelector(".form-error");
  if (input) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
  if (place) {
    place.textContent = detail;
    if (!input) place.scrollIntoView({ block: "nearest" });
  } else {
    toast(detail, "error");
  }
}

/** What to tell a person about an error: the problem's detail, or a plain sentence. */
export function describe(error) {
  if (error?.detail) return error.detail;
  if (error?.title) return error.title;
  if (error instanceof TypeError) return "The server cannot be reached. Check the connection and try again.";
  return error?.message || "Something went wrong.";
}

/** A button that asks before it acts. Pressed, it puts `question` with a `yes` and a `no` button in place of what its
 *  row (the button's parent) holds: `no` (or Escape) puts the row back, `yes` waits while `act()` runs. A failure puts
 *  the row back and goes to `failed(error)` (a toast when not given); on success, what `act` changed redraws the
 *  screen. Focus goes to `no`, and back to the button with the row. */
export function confirmButton(text, props, { question, yes, no = "Keep it", act, failed }) {
  const button = h("button", { type: "button", class: "danger", ...props }, text);
  button.addEventListener("click", () => {
    const row = button.parentElement;
    const before = [...row.childNodes];
    const back = () => {
      replace(row, before);
      button.focus();
    };
    const keep = h("button", { type: "button", onclick: back }, no);
    const sure = h("button", { type: "button", class: "danger" }, yes);
    sure.addEventListener("click", async () => {
      sure.disabled = keep.disabled = true;
      try {
        await act();
      } catch (error) {
        back();
        if (failed) failed(error);
        else toast(describe(error), "error");
      }
    });
    const id = `question-${++nextId}`;
    const escape = (event) => {
      if (event.key === "Escape" && !keep.disabled) back();
    };
    replace(row, h("div", { class: "confirm", role: "group", "aria-labelledby": id, onkeydown: escape },
      h("p", { class: "question", id }, question),
      h("div", { class: "actions" }, sure, keep)));
    keep.focus();
  });
  return button;
}

/** A short message at the bottom of the screen. */
export function toast(text, kind = "info") {
  const box = document.getElementById("toasts");
  const item = h("p", { class: `toast ${kind}` }, text);
  box.append(item);
  setTimeout(() => item.remove(), 6000);
}

/** "350 m", "1.2 km". */
export function distance(meters) {
  if (meters === undefined || meters === null) return "";
  return meters < 1000 ? `${Math.round(meters)} m` : `${(meters / 1000).toFixed(1)} km`;
}

/** "14:05", or "Mon 14:05" when not today. */
export function clock(iso) {
  const date = new Date(iso);
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return date.toDateString() === new Date().toDateString()
    ? time
    : `${date.toLocaleDateString([], { weekday: "short" })} ${time}`;
}

/** A random UUID (crypto.randomUUID needs a secure context, which a phone on the LAN is not). */
export function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Ids compare without regard to case (the services answer them in either). */
export function sameId(a, b) {
  return typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
}

/** A problem of the page's own, shown like the API's: next to the control named `field`. */
export function problem(field, detail) {
  return Object.assign(new Error(detail), { field, detail });
}

/** A link to a match's chat (the conversation's id is the match's). */
export function chatLink(matchId, text, props = {}) {
  return h("a", { ...props, href: `#/chats/${encodeURIComponent(matchId)}` }, text);
}

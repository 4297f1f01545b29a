// Tutoring (MentorMate): one's tutoring profile, cards of people who share a course to like or pass one at a time
// (buttons, arrow keys, or a sideways drag on a phone), "It's a match!" with the way to the chat, and the matches with
// their full profiles and unmatching. #/tutoring shows the cards, #/tutoring/matches the matches, #/tutoring/profile
// the profile.

import { chatLink, describe, field, form, h, problem, replace, sameId, toast } from "../dom.js";
import { imageKeeper } from "../images.js";
import { lifetime } from "../lifetime.js";

const roles = { student: "Student", tutor: "Tutor" };
const money = new Intl.NumberFormat(undefined, { style: "currency", currency: "EUR" });
// How far a card is dragged before letting go counts as a swipe.
const swipeDistance = 110;

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "tutoring",
  title: "Tutoring",
  stylesheet: "css/tutoring.css",
  notices: {
    "tutoring.matched": () => "It's a match!",
  },
};

export function mount(root, context) {
  const { api, feed, params } = context;
  const me = api.user.id;
  const screen = ["matches", "profile"].includes(params[0]) ? params[0] : "cards";
  const images = imageKeeper(api);
  const celebrated = new Set();
  const life = lifetime();

  const banner = h("div", { class: "match-place" });
  const body = h("div", { class: "tutoring-body" });
  const tabs = [["cards", "#/tutoring", "Cards"], ["matches", "#/tutoring/matches", "Matches"], ["profile", "#/tutoring/profile", "My profile"]];
  replace(root, h("section", { class: "card tutoring", "aria-labelledby": "tutoring-title" },
    h("h2", { id: "tutoring-title" }, "Tutoring"),
    h("nav", { class: "subnav", "aria-label": "Tutoring" }, tabs.map(([name, href, text]) =>
      h("a", { href, "aria-current": name === screen ? "page" : false }, text))),
    banner,
    body));

  /** "It's a match!" once per match, whether the swipe's answer or the socket told first. */
  function celebrate(matchId, name, courses = []) {
    const key = matchId.toLowerCase();
    if (celebrated.has(key)) return;
    celebrated.add(key);
    const chat = chatLink(matchId, "Open chat", { class: "button primary" });
    replace(banner, h("section", { class: "match", role: "status", "aria-labelledby": "match-title", dataset: { matchId: key } },
      h("h3", { id: "match-title" }, "It's a match!"),
      h("p", {}, `You and ${name} both said yes`, courses.length ? ` (${courses.join(", ")})` : "", ". Say hello in your chat."),
      h("div", { class: "actions" }, chat, h("button", { type: "button", onclick: () => replace(banner) }, "Keep swiping"))));
    chat.focus({ preventScroll: true });
    banner.scrollIntoView({ block: "nearest" });
  }

  life.add(feed.on("tutoring.matched", (data) => {
    const other = data.members?.find((member) => !sameId(member.userId, me));
    celebrate(data.matchId, other?.name ?? "someone", data.courses ?? []);
  }));

  life.add(feed.on("tutoring.unmatched", (data) => {
    if (data.matchId && banner.querySelector(`[data-match-id="${CSS.escape(data.matchId.toLowerCase())}"]`)) replace(banner);
  }));

  // ---- Profile ----

  function profileScreen(profile, intro) {
    const courses = h("input", { name: "courses", autocomplete: "off", required: true, value: profile?.courses.join(", ") ?? "", placeholder: "MAT-101, PHYS-102" });
    const rate = h("input", {
      name: "rateCents", type: "number", min: 0, max: 1000, step: "any", inputmode: "decimal",
      value: profile ? String(profile.rateCents / 100) : "",
    });
    const element = form({ "aria-label": "Tutoring profile", class: "tutoring-profile" }, [
      field("I am", h("select", { name: "role" },
        h("option", { value: "student", selected: profile?.role !== "tutor" }, "a student looking for a tutor"),
        h("option", { value: "tutor", selected: profile?.role === "tutor" }, "a tutor"))),
      field("Courses", courses, "Course codes separated by commas, such as MAT-101, PHYS-102."),
      field("Description", h("textarea", { name: "description", rows: 3, maxlength: 1000 }, profile?.description ?? ""),
        "What you need help with, or what you teach."),
      field("Rate (€ per hour)", rate, "What you ask as a tutor, or offer to pay as a student."),
      field("Availability", h("input", { name: "availability", maxlength: 200, value: profile?.availability ?? "", placeholder: "Weekday evenings" })),
      field("Preferences", h("textarea", { name: "preferences", rows: 2, maxlength: 500 }, profile?.preferences ?? ""),
        "Where and how you like to meet."),
      h("button", { type: "submit", class: "primary" }, "Save profile"),
    ], async (formElement) => {
      const controls = formElement.elements;
      const euros = controls.rateCents.value.trim() === "" ? 0 : Number(controls.rateCents.value);
      if (!Number.isFinite(euros) || euros < 0) throw problem("rateCents", "Write the rate in euros, such as 15 or 12.50.");
      const saved = await api.put("/v1/tutoring/profile", {
        role: controls.role.value,
        courses: controls.courses.value.split(/[,;\n]/).map((code) => code.trim()).filter(Boolean),
        description: controls.description.value.trim(),
        rateCents: Math.round(euros * 100),
        availability: controls.availability.value.trim(),
        preferences: controls.preferences.value.trim(),
      });
      toast("Profile saved");
      if (screen === "profile") context.go("tutoring");
      else if (life.alive) showCards(saved);
    });
    replace(body, intro ? h("p", { class: "notice" }, intro) : null, element);
    if (!profile) courses.focus();
  }

  async function profile() {
    try {
      return await api.get("/v1/tutoring/profile");
    } catch (error) {
      if (error.status === 404) return null;
      throw error;
    }
  }

  // ---- Cards ----

  async function cards() {
    const mine = await profile();
    if (!life.alive) return;
    if (mine) showCards(mine);
    else profileScreen(null, "Make your tutoring profile to see who shares your courses.");
  }

  let deck = null;

  function showCards(mine) {
    deck?.stop();
    deck = cardDeck(mine);
  }

  function cardDeck(mine) {
    let queue = [];
    let loads = 0;
    let busy = false;
    let current = null;
    const course = h("select", { name: "course", onchange: () => load() },
      h("option", { value: "" }, "All my courses"),
      mine.courses.map((code) => h("option", { value: code }, code)));
    const place = h("div", { class: "deck", "aria-live": "polite" });
    replace(body,
      h("p", { class: "hint" }, `You are a ${roles[mine.role].toLowerCase()}: these are ${mine.role === "student" ? "tutors" : "students"} who share a course with you.`),
      field("Course", course),
      place);

    async function load() {
      const token = ++loads;
      images.releaseWithin(place);
      current = null;
      replace(place, h("p", { class: "hint" }, "Looking for cards…"));
      try {
        const answer = await api.get("/v1/tutoring/feed", { course: course.value, limit: 20 });
        if (token !== loads || !life.alive) return;
        queue = answer.cards;
        show();
      } catch (error) {
        if (token !== loads || !life.alive) return;
        if (error.status === 409) return profileScreen(null, describe(error));
        replace(place, h("p", { class: "form-error", role: "alert" }, describe(error)),
          h("button", { type: "button", onclick: () => load() }, "Try again"));
      }
    }

    function show() {
      images.releaseWithin(place);
      const card = queue[0];
      current = card ?? null;
      if (!card) {
        replace(place, h("p", { class: "hint empty" }, "No more cards for now. People who join your courses show up here."),
          h("button", { type: "button", onclick: () => load() }, "Look again"));
        return;
      }
      replace(place, cardElement(card));
    }

    function cardElement(card) {
      const titleId = `card-${card.userId.toLowerCase()}`;
      const photo = h("img", { class: "avatar large", alt: `${card.name}'s photo`, hidden: true });
      if (card.photoId) images.show(photo, card.photoId, "small");
      const error = h("p", { class: "form-error", role: "alert" });
      const pass = h("button", { type: "button", class: "pass", "aria-label": `Pass on ${card.name}`, onclick: () => swipe(false) }, "Pass");
      const like = h("button", { type: "button", class: "primary like", "aria-label": `Like ${card.name}`, onclick: () => swipe(true) }, "Like");
      const article = h("article", { class: "swipe-card tutoring-card", "aria-labelledby": titleId, dataset: { userId: card.userId.toLowerCase() } },
        h("div", { class: "row" }, photo,
          h("div", {},
            h("h3", { id: titleId, class: "name" }, card.name),
            h("span", { class: "tag role" }, roles[card.role] ?? card.role))),
        h("ul", { class: "courses", "aria-label": "Courses" }, card.courses.map((entry) =>
          h("li", { class: entry.shared ? "tag shared" : "tag" }, entry.code,
            entry.shared ? h("span", { class: "visually-hidden" }, " (shared)") : null))),
        card.description ? h("p", { class: "description" }, card.description) : null,
        h("p", { class: "facts" }, h("span", {}, `${money.format(card.rateCents / 100)} per hour`),
          card.availability ? h("span", {}, card.availability) : null),
        error,
        h("div", { class: "actions swipe-actions" }, pass, like),
        h("p", { class: "hint keys" }, "Arrow keys: ← pass, → like."));

      async function swipe(isLike) {
        if (busy || current !== card) return;
        busy = true;
        error.textContent = "";
        pass.disabled = like.disabled = true;
        article.dataset.leaving = isLike ? "like" : "pass";
        try {
          const answer = await api.post("/v1/tutoring/swipes", { userId: card.userId, like: isLike });
          if (answer.matched && answer.matchId) {
            celebrate(answer.matchId, card.name, card.courses.filter((entry) => entry.shared).map((entry) => entry.code));
          }
          next();
        } catch (failure) {
          if (failure.status === 409 || failure.status === 404) {
            // Swiped already (in another tab), or gone: the card is not to be answered again.
            toast(describe(failure));
            next();
          } else {
            delete article.dataset.leaving;
            error.textContent = describe(failure);
            pass.disabled = like.disabled = false;
          }
        } finally {
          busy = false;
        }
      }
      article.swipe = swipe;
      draggable(article, swipe);
      return article;
    }

    function next() {
      if (!life.alive) return;
      queue.shift();
      if (queue.length) show();
      else load();
    }

    // Arrow keys answer the card shown, unless the person is typing or choosing in a control.
    function keys(event) {
      if (!current || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (event.target.closest?.("input, select, textarea")) return;
      const article = place.querySelector(".tutoring-card");
      if (!article) return;
      if (event.key === "ArrowRight") article.swipe(true);
      else if (event.key === "ArrowLeft") article.swipe(false);
      else return;
      event.preventDefault();
    }
    document.addEventListener("keydown", keys);
    load();
    return {
      stop() {
        loads++;
        document.removeEventListener("keydown", keys);
      },
    };
  }

  // ---- Matches ----

  function matches() {
    const list = h("ul", { class: "list matches", "aria-label": "Matches" });
    const empty = h("p", { class: "hint", hidden: true }, "No matches yet. Like cards: when someone likes you back, they show up here.");
    const error = h("p", { class: "form-error", role: "alert" });
    replace(body, error, empty, list);
    let loads = 0;

    async function load() {
      const token = ++loads;
      try {
        const answer = await api.get("/v1/tutoring/matches");
        if (token !== loads || !life.alive) return;
        error.textContent = "";
        images.releaseWithin(list);
        replace(list, answer.matches.map(entry));
        empty.hidden = answer.matches.length > 0;
      } catch (failure) {
        if (token === loads && life.alive) error.textContent = describe(failure);
      }
    }

    function remove(matchId) {
      const item = list.querySelector(`li[data-id="${CSS.escape(matchId.toLowerCase())}"]`);
      if (!item) return;
      images.releaseWithin(item);
      item.remove();
      empty.hidden = list.children.length > 0;
    }

    function entry(match) {
      const id = match.id.toLowerCase();
      const photo = h("img", { class: "avatar", alt: `${match.name}'s photo`, hidden: true });
      if (match.photoId) images.show(photo, match.photoId, "small");
      const details = h("div", { class: "match-profile", id: `profile-${id}`, hidden: true });
      const problem = h("p", { class: "form-error", role: "alert" });
      const toggle = h("button", { type: "button", "aria-expanded": "false", "aria-controls": details.id, "aria-label": `Profile of ${match.name}` }, "Profile");
      toggle.addEventListener("click", async () => {
        const open = toggle.getAttribute("aria-expanded") === "true";
        toggle.setAttribute("aria-expanded", String(!open));
        details.hidden = open;
        if (open || details.childElementCount) return;
        replace(details, h("p", { class: "hint" }, "Loading…"));
        try {
          const full = await api.get(`/v1/tutoring/profiles/${encodeURIComponent(match.userId)}`);
          replace(details, profileFacts(full));
        } catch (failure) {
          replace(details, h("p", { class: "form-error", role: "alert" }, describe(failure)));
        }
      });
      const actions = h("div", { class: "actions" });
      function normalActions() {
        replace(actions,
          chatLink(match.id, "Chat", { class: "button primary", "aria-label": `Chat with ${match.name}` }),
          toggle,
          h("button", { type: "button", class: "danger", "aria-label": `Unmatch ${match.name}`, onclick: confirmUnmatch }, "Unmatch"));
      }
      function confirmUnmatch() {
        const keep = h("button", { type: "button", onclick: () => { normalActions(); actions.querySelector("button.danger").focus(); } }, "Keep");
        replace(actions,
          h("p", { class: "question" }, `Unmatch ${match.name}? The chat closes and neither of you sees the other again.`),
          h("button", { type: "button", class: "danger", onclick: async (event) => {
            event.currentTarget.disabled = true;
            problem.textContent = "";
            try {
              await api.delete(`/v1/tutoring/matches/${encodeURIComponent(match.id)}`);
              remove(match.id);
              toast(`Unmatched ${match.name}`);
            } catch (failure) {
              problem.textContent = describe(failure);
              normalActions();
            }
          } }, "Yes, unmatch"),
          keep);
        keep.focus();
      }
      normalActions();
      return h("li", { dataset: { id } },
        h("div", { class: "row" }, photo,
          h("div", {},
            h("p", { class: "name" }, match.name),
            h("p", { class: "hint" }, `${roles[match.role] ?? match.role} · ${match.courses.join(", ")}`))),
        actions, problem, details);
    }

    life.add(feed.on("tutoring.matched", () => load()));
    life.add(feed.on("tutoring.unmatched", (data) => {
      if (data.matchId) remove(data.matchId);
      load();
    }));
    load();
  }

  function profileFacts(full) {
    const facts = [
      ["Role", roles[full.role] ?? full.role],
      ["Courses", full.courses.join(", ")],
      ["Rate", `${money.format(full.rateCents / 100)} per hour`],
      ["Availability", full.availability],
      ["Preferences", full.preferences],
      ["About", full.bio],
      ["Description", full.description],
    ].filter(([, value]) => value);
    return h("dl", { class: "facts-list" }, facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
  }

  function fail(error) {
    if (life.alive) replace(body, h("p", { class: "form-error", role: "alert" }, describe(error)));
  }

  if (screen === "cards") cards().catch(fail);
  else if (screen === "matches") matches();
  else profile().then((mine) => life.alive && profileScreen(mine, mine ? null : "Make your tutoring profile: your role and courses.")).catch(fail);

  return () => {
    life.end();
    deck?.stop();
    images.stop();
  };
}

/** Drags a card sideways with a finger or a mouse; far enough and let go is a swipe that way. */
function draggable(article, swipe) {
  let start = null;
  article.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest("button, a")) return;
    start = { x: event.clientX, id: event.pointerId };
    article.setPointerCapture(event.pointerId);
    article.classList.add("dragging");
  });
  article.addEventListener("pointermove", (event) => {
    if (!start || event.pointerId !== start.id) return;
    const dx = event.clientX - start.x;
    article.style.transform = `translateX(${dx}px) rotate(${dx / 25}deg)`;
    if (dx > swipeDistance / 2) article.dataset.lean = "like";
    else if (dx < -swipeDistance / 2) article.dataset.lean = "pass";
    else delete article.dataset.lean;
  });
  const end = (event, cancelled) => {
    if (!start || event.pointerId !== start.id) return;
    const dx = event.clientX - start.x;
    start = null;
    article.classList.remove("dragging");
    article.style.transform = "";
    delete article.dataset.lean;
    if (!cancelled && Math.abs(dx) >= swipeDistance) swipe(dx > 0);
  };
  article.addEventListener("pointerup", (event) => end(event, false));
  article.addEventListener("pointercancel", (event) => end(event, true));
}

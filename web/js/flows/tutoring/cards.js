// The cards: people who share a course, to like or pass one at a time (buttons, arrow keys, or a sideways drag on a
// phone). Without a profile the screen asks for one first.

import { describe, field, h, replace, toast } from "../../dom.js";
import { safetyActions } from "../../safety.js";
import { profileOf, profileScreen } from "./profile.js";
import { money, roles } from "./shared.js";

// How far a card is dragged before letting go counts as a swipe.
const swipeDistance = 110;

export async function cards(page) {
  const { life } = page;
  let deck = null;
  life.add(() => deck?.stop());
  const askProfile = (intro) => profileScreen(page, null, intro, (saved) => life.alive && showCards(saved));

  function showCards(mine) {
    deck?.stop();
    deck = cardDeck(page, mine, askProfile);
  }

  const mine = await profileOf(page.context.api);
  if (!life.alive) return;
  if (mine) showCards(mine);
  else askProfile("Make your tutoring profile to see who shares your courses.");
}

/** The deck of cards for the profile `mine`; `noProfile(why)` when the server says there is none. Answers {stop}. */
function cardDeck({ context, life, images, body, celebrate }, mine, noProfile) {
  const { api } = context;
  let queue = [];
  let loads = 0;
  let busy = false;
  let current = null;
  // Those blocked from this deck: matching hears of a block a moment later, and a feed asked meanwhile may hold them.
  const blocked = new Set();
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
      queue = answer.cards.filter((card) => !blocked.has(card.userId.toLowerCase()));
      show();
    } catch (error) {
      if (token !== loads || !life.alive) return;
      if (error.status === 409) return noProfile(describe(error));
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
    const article = h("article", { class: "tutoring-card", "aria-labelledby": titleId, dataset: { userId: card.userId.toLowerCase() } },
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
      h("p", { class: "hint keys" }, "Arrow keys: ← pass, → like."),
      // Blocking: neither sees the other anywhere from then on.
      safetyActions(api, {
        userId: card.userId, name: card.name,
        onBlocked: () => {
          blocked.add(card.userId.toLowerCase());
          if (current === card) next();
        },
      }));

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

// Tutoring (MentorMate): one's tutoring profile, cards of people who share a course to like or pass one at a time,
// "It's a match!" with the way to the chat, and the matches with their full profiles and unmatching. #/tutoring shows
// the cards (cards.js), #/tutoring/matches the matches (matches.js), #/tutoring/profile the profile (profile.js).

import { chatLink, describe, h, replace, sameId } from "../../dom.js";
import { imageKeeper } from "../../images.js";
import { lifetime } from "../../lifetime.js";
import { cards } from "./cards.js";
import { matches } from "./matches.js";
import { profileOf, profileScreen } from "./profile.js";

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "tutoring",
  title: "Tutoring",
  stylesheet: new URL("tutoring.css", import.meta.url).href,
  notices: {
    "tutoring.matched": () => "It's a match!",
  },
};

/** The tutoring section with its screens' tabs and the match banner; the screen shows in its body. */
export function mount(root, context) {
  const { api, feed, params } = context;
  const screen = ["matches", "profile"].includes(params[0]) ? params[0] : "cards";
  const images = imageKeeper(api);
  const life = lifetime();
  life.add(() => images.stop());

  const banner = h("div", { class: "match-place" });
  const body = h("div", { class: "tutoring-body" });
  const tabs = [["cards", "#/tutoring", "Cards"], ["matches", "#/tutoring/matches", "Matches"], ["profile", "#/tutoring/profile", "My profile"]];
  replace(root, h("section", { class: "card tutoring", "aria-labelledby": "tutoring-title" },
    h("h2", { id: "tutoring-title" }, "Tutoring"),
    h("nav", { class: "subnav", "aria-label": "Tutoring" }, tabs.map(([name, href, text]) =>
      h("a", { href, "aria-current": name === screen ? "page" : false }, text))),
    banner,
    body));

  const celebrated = new Set();
  /** "It's a match!" once per match, whether the swipe's answer or the socket told first. */
  function celebrate(matchId, name, courses = []) {
    const key = matchId.toLowerCase();
    if (celebrated.has(key)) return;
    celebrated.add(key);
    const chat = chatLink(matchId, "Open chat", { class: "button primary" });
    replace(banner, h("section", { class: "match", role: "status", "aria-labelledby": "match-title", dataset: { matchId: key } },
      h("h3", { id: "match-title" }, "It's a match!"),
      h("p", {}, `You and ${name} both said yes`, courses.length ? ` (${courses.join(", ")})` : "", ". Say hello in your chat."),
      h("div", { class: "actions" }, chat, h("button", { type: "button", onclick: keepSwiping }, "Keep swiping"))));
    chat.focus({ preventScroll: true });
    banner.scrollIntoView({ block: "nearest" });
  }

  /** Takes the banner away and puts the focus back on the deck (the next card's Like, or Look again). */
  function keepSwiping() {
    replace(banner);
    body.querySelector(".deck .like, .deck button")?.focus();
  }

  life.add(feed.on("tutoring.matched", (data) => {
    const other = data.members?.find((member) => !sameId(member.userId, api.user.id));
    celebrate(data.matchId, other?.name ?? "someone", data.courses ?? []);
  }));
  life.add(feed.on("tutoring.unmatched", (data) => {
    if (data.matchId && banner.querySelector(`[data-match-id="${CSS.escape(data.matchId.toLowerCase())}"]`)) replace(banner);
  }));

  const page = {
    context, life, images, body, celebrate,
    fail(error) {
      if (life.alive) replace(body, h("p", { class: "form-error", role: "alert" }, describe(error)));
    },
  };
  if (screen === "cards") cards(page).catch(page.fail);
  else if (screen === "matches") matches(page);
  else {
    profileOf(api)
      .then((mine) => life.alive && profileScreen(page, mine, mine ? null : "Make your tutoring profile: your role and courses.",
        () => context.go("tutoring")))
      .catch(page.fail);
  }
  return () => life.end();
}

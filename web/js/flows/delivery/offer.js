// The deliverer's offer: who asks them to bring what, from where to where, answered before its countdown ends.

import { describe, h, replace, sameId, toast } from "../../dom.js";
import { attempt, errorPlace, facts, key } from "./shared.js";

// Offers heard on the socket, and offers this page ended, while the page lives: the offer screen shows one heard
// without reading the feed, and one ended here counts as ended at once (the feed hears of it a moment later).
const heard = new Map();
const ended = new Set();

/** Keeps an offer heard on the socket for the offer screen. */
export function offerHeard(offer) {
  heard.set(key(offer.offerId), offer);
}

/** The newest offer of the person's feed that nobody has answered, withdrawn or let expire (with `offerId`, that
 *  one), from the last entries of the feed: an offer outlives a reload or a visit to another tab. */
export async function openOffer(api, feed, offerId) {
  const entries = [];
  let after = Math.max(0, (feed.lastSeq ?? 0) - 50);
  for (let page = 0; page < 5; page++) {
    const answer = await api.get("/v1/notifications", { after, limit: 100 });
    entries.push(...answer.entries);
    if (!answer.next || answer.entries.length === 0) break;
    after = answer.next;
  }
  const over = new Set(ended);
  const taken = new Set();
  for (const entry of entries) {
    if (["offer.declined", "offer.expired", "offer.withdrawn"].includes(entry.type)) over.add(key(entry.data.offer?.offerId));
    if (entry.type === "match.accepted") taken.add(key(entry.data.match?.orderId));
  }
  const open = entries.filter((entry) => entry.type === "offer.made"
    && !over.has(key(entry.data.offerId)) && !taken.has(key(entry.data.orderId))
    && Date.parse(entry.data.expiresAt) > Date.now()
    && (!offerId || sameId(entry.data.offerId, offerId)));
  return open.at(-1)?.data ?? null;
}

/** "0:24". */
function minutesAndSeconds(seconds) {
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

export function offerScreen(root, context, offerId, life) {
  const { api, feed } = context;
  replace(root, h("section", { class: "card delivery" }, h("p", { class: "hint", role: "status" }, "Loading the offer…")));
  const cached = heard.get(key(offerId));
  (cached ? Promise.resolve(cached) : openOffer(api, feed, offerId))
    .then((offer) => {
      if (!life.alive) return;
      if (!offer || Date.parse(offer.expiresAt) <= Date.now()) return leave("This offer is no longer open.");
      showOffer(offer);
    })
    .catch((error) => life.alive && leave(describe(error)));

  /** The offer is over for this page. */
  function over() {
    heard.delete(key(offerId));
    ended.add(key(offerId));
  }

  /** Ends the offer and goes back to the deliverer's run, telling why. */
  function leave(text) {
    if (!life.alive) return;
    life.end();
    over();
    toast(text);
    location.replace("#/delivery");
  }

  function showOffer(offer) {
    let answering = false;
    const problem = errorPlace();
    const countdown = h("span", { class: "countdown" });
    const accept = h("button", { type: "button", class: "primary" }, "Accept");
    const decline = h("button", { type: "button" }, "Decline");
    replace(root, h("section", { class: "card delivery offer", "aria-labelledby": "offer-title", dataset: { offerId: key(offer.offerId) } },
      h("h2", { id: "offer-title" }, "New order for you"),
      h("p", { class: "who" }, h("span", { class: "name" }, offer.ordererName), " asks you to bring"),
      h("p", { class: "items" }, offer.items),
      facts([["From", offer.restaurant?.name], ["To", offer.destination?.name]]),
      h("p", { class: "timer", role: "timer", "aria-label": "Time left to answer" }, "Time left to answer: ", countdown),
      problem,
      h("div", { class: "actions" }, accept, decline)));

    const tick = () => {
      const left = Math.max(0, Math.ceil((Date.parse(offer.expiresAt) - Date.now()) / 1000));
      countdown.textContent = minutesAndSeconds(left);
      if (left === 0 && !answering) leave("The offer expired.");
    };
    tick();
    life.every(250, tick);
    accept.addEventListener("click", () => {
      answering = true;
      decline.disabled = true;
      attempt(problem, accept, async () => {
        const match = await api.post(`/v1/offers/${offer.offerId}/accept`);
        over();
        location.replace(`#/delivery/match/${match.id}`);
      }).finally(() => {
        answering = false;
        decline.disabled = false;
      });
    });
    decline.addEventListener("click", () => {
      answering = true;
      accept.disabled = true;
      attempt(problem, decline, async () => {
        await api.post(`/v1/offers/${offer.offerId}/decline`);
        leave("Declined. The order goes to someone else.");
      }).finally(() => {
        answering = false;
        accept.disabled = false;
      });
    });
    const endings = {
      "offer.expired": "The offer expired.",
      "offer.withdrawn": "The offer was withdrawn: the order was cancelled or your run closed.",
      "offer.declined": "Declined. The order goes to someone else.",
    };
    for (const [type, text] of Object.entries(endings)) {
      life.add(feed.on(type, (data) => {
        if (sameId(data.offer?.offerId, offer.offerId) && !answering) leave(text);
      }));
    }
  }
}

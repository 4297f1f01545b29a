// The swap, for both sides: who brings what, the chat, calling it off, marking it done, and the review after.

import { chatLink, confirmButton, describe, field, form, h, replace, sameId, toast, values } from "../../dom.js";
import { onExchange } from "./shared.js";

const exchangeStatuses = { in_progress: "In progress", exchanged: "Swapped", cancelled: "Called off" };
// The screen looks again this often (ms) while the swap is under way: the other side marking it done sends no event
// until both have.
const swapRefresh = 5000;

export function swap(page, id) {
  const { context, life, body } = page;
  const { api, feed } = context;
  const me = api.user.id;
  const place = h("div", { class: "swap" });
  replace(body, place);
  let loads = 0;
  let timer = null;
  let shown = null;

  async function load() {
    const token = ++loads;
    const exchange = await api.get(`/v1/exchanges/${encodeURIComponent(id)}`);
    if (token !== loads || !life.alive) return;
    // A screen the person is using (a review half written) is not redrawn for nothing.
    const key = JSON.stringify(exchange);
    if (key !== shown) {
      shown = key;
      replace(place, render(exchange));
    }
    clearTimeout(timer);
    if (exchange.status === "in_progress") timer = setTimeout(refresh, swapRefresh);
  }

  function refresh() {
    if (document.visibilityState === "visible") load().catch(() => {});
    else timer = setTimeout(refresh, swapRefresh);
  }

  function render(exchange) {
    const isOwner = sameId(exchange.owner.id, me);
    const mine = isOwner ? exchange.owner : exchange.taker;
    const other = isOwner ? exchange.taker : exchange.owner;
    const error = h("p", { class: "form-error", role: "alert" });
    const party = (who, role) => h("li", { class: "spread" },
      h("span", {}, h("span", { class: "name" }, sameId(who.id, me) ? `${who.name} (you)` : who.name), ` ${role}`),
      h("span", { class: who.completed ? "tag done" : "tag" }, who.completed ? "Marked done" : "Not done yet"));
    return [
      h("h3", {}, `Swap: ${exchange.offered}`),
      h("p", { class: "status", role: "status", dataset: { status: exchange.status } }, exchangeStatuses[exchange.status] ?? exchange.status),
      h("ul", { class: "list parties", "aria-label": "Who swaps" },
        party(exchange.owner, "offers it"),
        party(exchange.taker, exchange.offering ? `brings ${exchange.offering}` : "takes it")),
      error,
      exchange.status === "in_progress" ? underway(exchange, mine, other, error) : null,
      exchange.status === "exchanged" ? done(exchange, mine, other) : null,
      exchange.status === "cancelled" ? h("p", { class: "notice" }, "This swap was called off; the listing is available again.") : null,
      h("p", {}, h("a", { href: `#/exchange/listings/${encodeURIComponent(exchange.listingId)}` }, "See the listing")),
    ];
  }

  function underway(exchange, mine, other, error) {
    const act = async (path, what) => {
      error.textContent = "";
      await api.post(`/v1/exchanges/${encodeURIComponent(exchange.id)}/${path}`);
      toast(what);
      await load();
    };
    const failed = (failure) => (error.textContent = describe(failure));
    const complete = h("button", { type: "button", class: "primary" }, "Complete");
    complete.addEventListener("click", () => {
      complete.disabled = true;
      act("complete", "Marked done").catch((failure) => {
        complete.disabled = false;
        failed(failure);
      });
    });
    const cancel = confirmButton("Cancel swap", {}, {
      question: `Call off this swap with ${other.name}? The chat closes.`,
      yes: "Yes, call it off",
      act: () => act("cancel", "Swap called off"),
      failed,
    });
    return [
      mine.completed && !other.completed ? h("p", { class: "notice" }, `You marked it done. Waiting for ${other.name}.`) : null,
      h("p", { class: "hint" }, "Meet, swap, then both mark it done."),
      h("div", { class: "actions" },
        chatLink(exchange.id, "Open chat", { class: "button primary", "aria-label": `Chat with ${other.name}` }),
        mine.completed ? null : complete,
        cancel),
    ];
  }

  function done(exchange, mine, other) {
    if (mine.reviewed) return h("p", { class: "notice" }, `Swapped! Thanks for reviewing ${other.name}.`);
    return [
      h("p", { class: "notice" }, `Swapped! How was it with ${other.name}?`),
      form({ "aria-label": "Review", class: "review" }, [
        field("Stars", h("select", { name: "stars" },
          [5, 4, 3, 2, 1].map((stars) => h("option", { value: String(stars) }, `${"★".repeat(stars)}${"☆".repeat(5 - stars)} ${stars}`)))),
        field("Review (optional)", h("textarea", { name: "text", rows: 2, maxlength: 1000 })),
        h("button", { type: "submit", class: "primary" }, "Send review"),
      ], async (element) => {
        const { stars, text } = values(element);
        await api.post(`/v1/exchanges/${encodeURIComponent(exchange.id)}/review`, { stars: Number(stars), text: text || undefined });
        toast("Review sent");
        await load();
      }),
    ];
  }

  onExchange(page, (data) => sameId(data.exchangeId, id), () => load().catch(() => {}));
  life.add(feed.on("conversation.closed", (data) => sameId(data.conversationId, id) && load().catch(() => {})));
  life.add(() => clearTimeout(timer));
  load().catch(page.fail);
}

// Chats: the open conversations with their unread counts, and one conversation with its history (paged back), live
// messages, typing hints and read markers. A closed conversation leaves the list and takes no more messages.

import { clock, describe, field, form, h, replace, sameId, uuid, values } from "../dom.js";
import { flows } from "../flows.js";
import { safetyActions } from "../safety.js";

// A conversation's subject starts with the title of the flow whose match opened it.
const flowTitles = Object.fromEntries(flows.map(({ flow }) => [flow.name, flow.title]));

export function mount(root, context) {
  return context.params[0] ? conversation(root, context, context.params[0]) : list(root, context);
}

function list(root, { api, feed }) {
  const items = h("ul", { class: "list", "aria-label": "Conversations" });
  const empty = h("p", { class: "hint", hidden: true }, "No open chats. A match opens one.");
  replace(root, h("section", { class: "card", "aria-labelledby": "chats-title" }, h("h2", { id: "chats-title" }, "Chats"), empty, items));

  async function load() {
    const { conversations } = await api.get("/v1/conversations");
    empty.hidden = conversations.length > 0;
    replace(items, conversations.map((entry) => {
      const other = entry.otherMember?.name ?? entry.otherMembers?.map((member) => member.name).join(", ") ?? "";
      return h("li", {},
        h("a", { href: `#/chats/${encodeURIComponent(entry.id)}`, class: "conversation", dataset: { id: entry.id.toLowerCase() } },
          h("span", { class: "who" }, other),
          entry.unreadCount ? h("span", { class: "badge", "aria-label": `${entry.unreadCount} unread` }, String(entry.unreadCount)) : null,
          h("span", { class: "subject" }, `${flowTitles[entry.flow] ?? entry.flow}: ${entry.subject}`),
          entry.lastMessage ? h("span", { class: "last" }, entry.lastMessage.text) : null));
    }));
  }
  load().catch(() => {});
  const stops = ["message.sent", "message.removed", "conversation.opened", "conversation.closed", "conversation.read"].map((type) => feed.on(type, () => load().catch(() => {})));
  return () => stops.forEach((stop) => stop());
}

function conversation(root, { api, feed, calls, refreshUnread }, id) {
  const me = api.user.id;
  const shown = new Map();
  let older = null;
  let lastRead = null;
  const messages = h("ol", { class: "messages", "aria-label": "Messages", "aria-live": "polite" });
  const earlier = h("button", { type: "button", class: "link", hidden: true, onclick: () => page().catch(() => {}) }, "Earlier messages");
  const typing = h("p", { class: "typing hint", "aria-live": "polite" });
  const title = h("h2", { id: "chat-title" }, "Chat");
  const subject = h("p", { class: "hint" });
  const closed = h("p", { class: "notice", hidden: true, role: "status" }, "This chat is closed.");
  const text = h("textarea", { name: "text", rows: 2, maxlength: 2000, required: true, placeholder: "Message" });
  let typingSentAt = 0;
  text.addEventListener("input", () => {
    if (Date.now() - typingSentAt > 3000) {
      typingSentAt = Date.now();
      feed.typing(id);
    }
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  const composer = form({ "aria-label": "Send a message", class: "composer" }, [
    field("Message", text),
    h("button", { type: "submit", class: "primary" }, "Send"),
  ], async (element) => {
    const body = { id: uuid(), text: values(element).text };
    if (!body.text) return;
    // The same id makes a retry harmless: after a lost answer, or when chat asks to wait while it is busy.
    const message = await api.request("POST", `/v1/conversations/${id}/messages`, { body, retryBusy: true });
    text.value = "";
    add(message, "end");
    markRead();
  });

  // Calling the other member, by voice or with video (js/calls.js), while the chat is open.
  const callProblem = h("p", { class: "form-error", role: "alert" });
  const callButtons = ["Call", "Video call"].map((text, index) => {
    const button = h("button", { type: "button" }, text);
    button.addEventListener("click", () => {
      callProblem.textContent = "";
      calls.start(id, title.textContent, index === 1).catch((error) => (callProblem.textContent = describe(error)));
    });
    return button;
  });
  const callRow = h("div", { class: "actions call-buttons", hidden: true }, callButtons, callProblem);
  // Blocking the other member ends what is open between them, this chat with it, in every flow.
  const blockPlace = h("div", { hidden: true });
  replace(root, h("section", { class: "card chat", "aria-labelledby": "chat-title" },
    h("p", {}, h("a", { href: "#/chats" }, "← Chats")), title, subject, callRow, earlier, messages, typing, closed, composer, blockPlace));

  function offerBlock(member) {
    if (!member?.id) return;
    replace(blockPlace, safetyActions(api, {
      userId: member.id, name: member.name, onBlocked: () => (location.hash = "#/chats"),
    }));
    blockPlace.hidden = false;
  }

  function bubble(message) {
    const mine = sameId(message.senderId, me);
    return h("li", { class: mine ? "mine" : "theirs", dataset: { id: message.id.toLowerCase() } },
      message.removed
        ? h("span", { class: "text removed" }, "This message was removed.")
        : h("span", { class: "text" }, message.text),
      h("time", { datetime: message.sentAt }, clock(message.sentAt)));
  }

  function add(message, where) {
    const key = message.id.toLowerCase();
    if (shown.has(key)) return;
    shown.set(key, message);
    if (where === "end") {
      messages.append(bubble(message));
      messages.lastElementChild.scrollIntoView({ block: "nearest" });
    } else {
      messages.prepend(bubble(message));
    }
  }

  async function page() {
    const answer = await api.get(`/v1/conversations/${id}/messages`, { limit: 30, before: older ?? undefined });
    for (const message of answer.messages) add(message, "start");
    older = answer.next ?? null;
    earlier.hidden = !older;
  }

  /** Moves the read marker to the newest message shown, while the page is in view. */
  function markRead() {
    const target = shown.get(messages.lastElementChild?.dataset.id);
    if (!target || target.id === lastRead || document.visibilityState !== "visible") return;
    lastRead = target.id;
    api.post(`/v1/conversations/${id}/read`, { messageId: target.id }).then(refreshUnread).catch(() => {});
  }

  function close() {
    closed.hidden = false;
    composer.hidden = true;
    callRow.hidden = true;
  }

  async function load() {
    // NB: chat hears of a new match through an event, so a chat opened right after the match may not exist for a
    // moment: the messages are asked for until it does, and the list after them.
    const answer = await api.whenKnown(() => api.get(`/v1/conversations/${id}/messages`, { limit: 30 }));
    const { conversations } = await api.get("/v1/conversations");
    const entry = conversations.find((conversation) => sameId(conversation.id, id));
    if (entry) {
      title.textContent = entry.otherMember?.name ?? "Chat";
      offerBlock(entry.otherMember);
      callRow.hidden = !entry.otherMember;
      subject.textContent = `${flowTitles[entry.flow] ?? entry.flow}: ${entry.subject}`;
    } else {
      close();
    }
    // The first page, newest first: shown oldest at the top.
    for (const message of answer.messages.reverse()) add(message, "end");
    older = answer.next ?? null;
    earlier.hidden = !older;
    markRead();
  }

  let typingTimer = null;
  const stops = [
    feed.on("message.sent", (data) => {
      if (!sameId(data.conversationId, id)) return;
      add({ id: data.messageId, senderId: data.senderId, text: data.text, sentAt: data.sentAt }, "end");
      typing.textContent = "";
      markRead();
    }),
    // A call of this conversation is over: its line ("Call, 4 min") is the newest message, the caller's own.
    feed.on("call.ended", (data) => {
      if (!sameId(data.conversationId, id)) return;
      api.get(`/v1/conversations/${id}/messages`, { limit: 5 })
        .then(({ messages: newest }) => newest.reverse().forEach((message) => add(message, "end")))
        .catch(() => {});
    }),
    // Its author deleted their account: what they wrote goes at once.
    feed.on("message.removed", (data) => {
      if (!sameId(data.conversationId, id)) return;
      for (const messageId of data.messageIds) {
        const key = messageId.toLowerCase();
        const message = shown.get(key);
        if (!message) continue;
        const removed = { ...message, text: "", removed: true };
        shown.set(key, removed);
        messages.querySelector(`li[data-id="${key}"]`)?.replaceWith(bubble(removed));
      }
    }),
    feed.on("conversation.closed", (data) => {
      if (sameId(data.conversationId, id)) close();
    }),
    feed.on("typing", (data) => {
      if (!sameId(data.conversationId, id) || sameId(data.userId, me)) return;
      typing.textContent = `${title.textContent} is typing…`;
      clearTimeout(typingTimer);
      typingTimer = setTimeout(() => (typing.textContent = ""), 5000);
    }),
  ];
  const visible = () => markRead();
  document.addEventListener("visibilitychange", visible);
  load().catch((error) => {
    close();
    closed.textContent = error.detail ?? "This chat cannot be opened.";
  });
  return () => {
    stops.forEach((stop) => stop());
    clearTimeout(typingTimer);
    document.removeEventListener("visibilitychange", visible);
  };
}

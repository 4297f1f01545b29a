// The one WebSocket of the page: the user's feed (entries with a `seq`, replayed after the last one seen when the
// socket comes back) and live frames without one (typing, a position on its way). It reconnects after a drop, when
// the network returns and when the page becomes visible again, and shows its state in the header.

import { api } from "./api.js";

const states = { connecting: "Connecting…", live: "Live", offline: "Offline", reconnecting: "Reconnecting…" };

class Feed {
  constructor() {
    this.socket = null;
    this.lastSeq = 0;
    this.userId = null;
    this.handlers = new Map();
    this.retry = 0;
    this.timer = null;
    this.state = "offline";
    window.addEventListener("online", () => this.reconnectNow());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.reconnectNow();
    });
  }

  /** Calls `handler(data, frame)` for each frame of `type` ("*" for every feed entry); answers a function that stops. */
  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(handler);
    return () => this.handlers.get(type)?.delete(handler);
  }

  seqKey() {
    return `tarrare.feed.${this.userId}`;
  }

  /** Starts the socket for the logged-in user, from the last seq this browser saw of their feed. */
  start(userId) {
    this.stop();
    this.userId = userId;
    this.lastSeq = Number(localStorage.getItem(this.seqKey()) ?? 0);
    this.connect();
  }

  stop() {
    clearTimeout(this.timer);
    this.userId = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.setState("offline");
  }

  /** Drops the socket as a lost network would; it comes back by itself. */
  drop() {
    this.socket?.close(4000, "dropped");
  }

  reconnectNow() {
    if (!this.userId || (this.socket && this.socket.readyState <= WebSocket.OPEN)) return;
    clearTimeout(this.timer);
    this.retry = 0;
    this.connect();
  }

  setState(state) {
    this.state = state;
    const element = document.getElementById("connection");
    if (element) {
      element.dataset.state = state;
      element.textContent = states[state];
    }
  }

  async connect() {
    const userId = this.userId;
    this.setState(this.retry === 0 && this.lastSeq === 0 ? "connecting" : "reconnecting");
    let token;
    try {
      token = await api.accessToken();
    } catch {
      token = null;
    }
    if (userId !== this.userId) return;
    if (!token) return this.scheduleRetry();
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    // NB: the one place a token goes in a URL: browsers cannot set a WebSocket's headers. The gateway keeps queries
    // out of its logs.
    const query = new URLSearchParams({ after: String(this.lastSeq), access_token: token });
    const socket = new WebSocket(`${scheme}//${location.host}/v1/stream?${query}`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      if (this.socket !== socket) return;
      this.retry = 0;
      this.setState("live");
    });
    socket.addEventListener("message", (event) => {
      if (this.socket === socket) this.receive(event.data);
    });
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.scheduleRetry();
    });
  }

  scheduleRetry() {
    if (!this.userId) return;
    this.setState(navigator.onLine === false ? "offline" : "reconnecting");
    const delay = Math.min(15_000, 500 * 2 ** this.retry) * (0.75 + Math.random() / 2);
    this.retry += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof frame?.type !== "string") return;
    if (typeof frame.seq === "number") {
      // A replay can overlap what was already shown: each entry is handled once.
      if (frame.seq <= this.lastSeq) return;
      this.lastSeq = frame.seq;
      localStorage.setItem(this.seqKey(), String(frame.seq));
      this.dispatch("*", frame);
    }
    this.dispatch(frame.type, frame);
  }

  dispatch(type, frame) {
    for (const handler of [...(this.handlers.get(type) ?? [])]) {
      try {
        handler(frame.data ?? {}, frame);
      } catch (error) {
        console.error(error);
      }
    }
  }

  /** Tells the other members of a conversation that this user is typing. */
  typing(conversationId) {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: "typing", conversationId }));
    }
  }
}

export const feed = new Feed();

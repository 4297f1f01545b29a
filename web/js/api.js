// The public API through the gateway, and the session that authenticates it. The session (tokens and the user) is
// kept in localStorage so that a reload stays logged in; the refresh token is spent once, so a refresh is done by
// one tab at a time and a tab that finds a newer session stored takes it instead of refreshing again.

const STORAGE_KEY = "tarrare.session";

/** A problem answered by the API (RFC 9457), thrown by `api.request`. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.title = problem?.title;
    this.detail = problem?.detail;
    this.field = problem?.field;
  }
}

function stored() {
  try {
    return JSON.parse(localStorage.getItem(STORAGE_KEY)) ?? null;
  } catch {
    return null;
  }
}

function store(session) {
  if (session) localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else localStorage.removeItem(STORAGE_KEY);
}

/** Runs `body` while holding the tab-wide refresh lock, where the browser has one (secure contexts). */
function exclusively(body) {
  return navigator.locks ? navigator.locks.request("tarrare.refresh", body) : body();
}

class Api {
  constructor() {
    this.session = stored();
    this.listeners = new Set();
    // Another tab logged in, out, or refreshed.
    window.addEventListener("storage", (event) => {
      if (event.key !== STORAGE_KEY) return;
      const before = this.session?.user?.id;
      this.session = stored();
      if (this.session?.user?.id !== before) this.changed();
    });
  }

  get user() {
    return this.session?.user ?? null;
  }

  /** Calls `listener()` when someone logs in or out. */
  onChange(listener) {
    this.listeners.add(listener);
  }

  changed() {
    for (const listener of this.listeners) listener();
  }

  adopt(answer) {
    this.session = {
      accessToken: answer.accessToken,
      refreshToken: answer.refreshToken,
      expiresAt: Date.now() + (answer.expiresIn ?? 600) * 1000,
      user: answer.user,
    };
    store(this.session);
  }

  setUser(user) {
    if (!this.session) return;
    this.session = { ...this.session, user };
    store(this.session);
  }

  /** Logs in with an answer of signup or login that carries tokens. */
  begin(answer) {
    this.adopt(answer);
    this.changed();
  }

  async logout() {
    const refreshToken = this.forget();
    if (refreshToken) await this.request("POST", "/v1/auth/logout", { body: { refreshToken }, anonymous: true }).catch(() => {});
  }

  /** Ends the session on this device only (the server ended it already, as after a deletion); returns its refresh
   * token. */
  forget() {
    const refreshToken = this.session?.refreshToken;
    this.session = null;
    store(null);
    this.changed();
    return refreshToken;
  }

  /** An access token valid for a while yet, refreshed when it is close to expiring; null when logged out. */
  async accessToken() {
    if (!this.session) return null;
    if (this.session.expiresAt - Date.now() > 30_000) return this.session.accessToken;
    await this.refresh();
    return this.session?.accessToken ?? null;
  }

  async refresh() {
    const spent = this.session?.refreshToken;
    if (!spent) return;
    await exclusively(async () => {
      const latest = stored();
      if (latest && latest.refreshToken !== spent) {
        // Another tab refreshed first.
        this.session = latest;
        return;
      }
      const response = await fetch("/v1/auth/refresh", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refreshToken: spent }),
      });
      if (response.ok) {
        this.adopt(await response.json());
      } else if (response.status === 401 || response.status === 400) {
        this.session = null;
        store(null);
        this.changed();
      } else {
        throw new ApiError(response.status, await problemOf(response));
      }
    });
  }

  /** Sends a request and answers its JSON (or null for 204). Throws ApiError with the problem for any other status;
   *  a 401 is answered once by a refresh and a retry. Options: `body` (JSON, or a Blob sent as is), `query` (an
   *  object), `headers`, `anonymous`, `raw` (answer the Response). */
  async request(method, path, options = {}) {
    const url = new URL(path, location.origin);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
    }
    for (let attempt = 0; ; attempt++) {
      const headers = { ...(options.headers ?? {}) };
      if (!options.anonymous) {
        const token = await this.accessToken();
        if (token) headers.Authorization = `Bearer ${token}`;
      }
      let body;
      if (options.body instanceof Blob) {
        body = options.body;
        headers["Content-Type"] ??= options.body.type || "application/octet-stream";
      } else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["Content-Type"] = "application/json";
      }
      const response = await fetch(url, { method, headers, body });
      if (response.status === 401 && !options.anonymous && attempt === 0 && this.session) {
        await this.refresh();
        if (this.session) continue;
      }
      // A request that is safe to repeat (`retryBusy`) waits as long as a busy service asks, a few times.
      const wait = Number(response.headers.get("Retry-After") ?? NaN);
      if (response.status === 503 && options.retryBusy && attempt < 5 && wait >= 0 && wait <= 30) {
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        continue;
      }
      if (options.raw && response.ok) return response;
      if (!response.ok) throw new ApiError(response.status, await problemOf(response));
      if (response.status === 204) return null;
      const text = await response.text();
      return text ? JSON.parse(text) : null;
    }
  }

  get(path, query) {
    return this.request("GET", path, { query });
  }

  post(path, body = {}) {
    return this.request("POST", path, { body });
  }

  put(path, body) {
    return this.request("PUT", path, { body });
  }

  patch(path, body) {
    return this.request("PATCH", path, { body });
  }

  delete(path) {
    return this.request("DELETE", path);
  }

  /** Repeats a request while it answers 404: what another service has just learned (a new user, a photo) takes a
   *  moment to reach the one asked. */
  async whenKnown(call, { attempts = 20, pause = 300 } = {}) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 404 || attempt >= attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** An image of media as an object URL for an <img> (its GET needs the token, which an <img> cannot send). */
  async imageURL(id, size = "small") {
    const response = await this.request("GET", `/v1/media/${encodeURIComponent(id)}`, { query: { size }, raw: true });
    return URL.createObjectURL(await response.blob());
  }
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return { title: response.statusText || `HTTP ${response.status}` };
  }
}

export const api = new Api();

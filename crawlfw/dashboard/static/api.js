// The dashboard server's HTTP API, as the page calls it. The token comes from the page's own
// address (/?token=T); every request sends it (Authorization: Bearer for fetch, ?token= for
// the event stream, which cannot send headers), besides the cookie the server set on the
// page's load.

const TOKEN = new URLSearchParams(window.location.search).get("token");

/** The error thrown for an answer that is not 2xx: `status` is the HTTP status. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function headers(extra) {
  const h = { Accept: "application/json", ...extra };
  if (TOKEN) h.Authorization = `Bearer ${TOKEN}`;
  return h;
}

async function answer(resp) {
  if (!resp.ok) {
    let message = `${resp.status} ${resp.statusText}`;
    try {
      const body = await resp.json();
      if (body && body.error) message = `${message}: ${body.error}`;
    } catch (e) { /* not JSON */ }
    throw new ApiError(resp.status, message);
  }
  return resp.json();
}

/** GET a JSON document. Raises ApiError on a non-2xx answer, TypeError when unreachable. */
export async function getJSON(path) {
  return answer(await fetch(path, { headers: headers(), credentials: "same-origin", cache: "no-store" }));
}

/** POST with an empty body; returns the JSON answer ({"ok": true}). */
export async function post(path) {
  return answer(await fetch(path, { method: "POST", headers: headers(), credentials: "same-origin" }));
}

/** Reconnections tried in a row before the live stream is given up. */
const MAX_RETRIES = 10;

const crawlPath = (id) => `/api/crawls/${encodeURIComponent(id)}`;

/** [{id, name, pid, started, state, workers}] */
export const listCrawls = () => getJSON("/api/crawls");
/** {interval, samples: [SAMPLE]} */
export const crawlHistory = (id) => getJSON(`${crawlPath(id)}/history`);
/** action: "pause" | "resume" | "stop" */
export const crawlAction = (id, action) => post(`${crawlPath(id)}/${action}`);
/** Every worker of the shared crawl the crawl `id` here is a worker of; action: "pause" |
 * "resume" | "stop". {ok, command, frontier, published: {via, seq}|null, error,
 * workers: [{worker, crawl, reached, via: "control"|"redis"|null, error, last_seen_s}]} */
export const sharedAction = (id, action) => post(`/api/shared/${encodeURIComponent(id)}/${action}`);

/** The crawl's live stream (server-sent events): `onSample(sample)` each second,
 * `onError(error)` for each error the crawl logs, `onEnd(reason)` when the crawl is gone
 * (the stream is closed then), `onStatus("live"|"reconnecting"|"ended")` as the connection
 * goes. Returns {close()}.
 *
 * The browser reconnects by itself after a dropped connection (the server resumes after
 * the Last-Event-ID); `onReopen()` is called on every open after the first. After
 * MAX_RETRIES failed reconnections in a row (the server is gone with its crawl), or when
 * the server refuses the stream, it is given up: `onEnd(reason)`. */
export function crawlEvents(id, { onSample, onError, onEnd, onStatus, onReopen }) {
  let url = `${crawlPath(id)}/events`;
  if (TOKEN) url += `?token=${encodeURIComponent(TOKEN)}`;
  const source = new EventSource(url, { withCredentials: true });
  let opened = 0;
  let failures = 0;
  source.addEventListener("open", () => {
    opened += 1;
    failures = 0;
    onStatus("live");
    if (opened > 1 && onReopen) onReopen();
  });
  source.addEventListener("sample", (ev) => {
    let sample;
    try { sample = JSON.parse(ev.data); } catch (e) { return; }
    onSample(sample);
  });
  source.addEventListener("end", (ev) => {
    source.close();
    let reason = "";
    try { reason = JSON.parse(ev.data).reason || ""; } catch (e) { /* no reason */ }
    onStatus("ended");
    if (onEnd) onEnd(reason);
  });
  // "error" is both the server's event (a MessageEvent with data) and the browser's own
  // connection error (a plain Event).
  source.addEventListener("error", (ev) => {
    if (typeof ev.data === "string" && ev.data) {
      let error;
      try { error = JSON.parse(ev.data); } catch (e) { return; }
      onError(error);
      return;
    }
    failures += 1;
    if (source.readyState === EventSource.CLOSED || failures > MAX_RETRIES) {
      source.close();
      onStatus("disconnected");
      if (onEnd) onEnd(null);
      return;
    }
    onStatus("reconnecting");
  });
  return { close: () => source.close() };
}

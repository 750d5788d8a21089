// Figures the page derives from the crawl's samples, and how it writes them: pure functions,
// no DOM. A sample is the dashboard's SAMPLE dict (crawlfw/dashboard's docstrings): counters
// are cumulative since the crawl started, so every rate here is a difference of two samples
// divided by the seconds between them.

/** Per-second rate between two cumulative readings, or null when it cannot be told (no
 * earlier sample, no time between them, or a counter that went back, as after a restart). */
export function rate(prev, cur, dt) {
  if (prev == null || cur == null || !(dt > 0)) return null;
  const d = cur - prev;
  return d < 0 ? null : d / dt;
}

/** The samples of one crawl as column arrays for the charts, with the rates derived as the
 * samples come, each over the last `window` samples (a moving average); a shared crawl's
 * whole figures over the last `sharedWindow` (they change when a worker publishes, every
 * 2 s: over 5 samples a rate would swing between 2 and 3 publications' worth). push()
 * takes samples in time order and drops one no newer than the last (the live stream may
 * repeat the end of the history). At most `maxPoints` are kept. */
export class SampleStore {
  constructor(maxPoints = 30000, window = 5, sharedWindow = 10) {
    this.maxPoints = maxPoints;
    this.window = window;
    this.sharedWindow = sharedWindow;
    this.clear();
  }

  clear() {
    this.last = null;
    this.t = [];
    this.pagesRate = [];
    this.itemsRate = [];
    this.bytesRate = [];
    this.status = new Map();      // "200" -> rates
    this.errors = new Map();      // "kind" -> rates
    this.frontier = { queued: [], in_flight: [], leased: [], on_disk: [] };
    this.hosts = { ready: [], waiting: [] };
    this.memory = { rss: [], warning: [], limit: [] };
    this.revisitDue = [];
    // A shared (Redis) crawl's whole figures, as the workers last published them: the
    // combined rates, the shared queue, and each worker's pages per second.
    this.sharedPagesRate = [];
    this.sharedItemsRate = [];
    this.sharedQueue = { queued: [], leased: [] };
    this.workerPages = new Map();  // worker id -> pages/s
    this.hasShared = false;
    this.samples = [];            // the raw samples (latency windows read them)
    this.hasSpill = false;
    this.hasRevisit = false;
    this.hasLimit = false;
    this.hasWarning = false;
  }

  get length() { return this.t.length; }

  /** Add one sample; return false when it was dropped as not newer than the last. */
  push(s) {
    if (!s || typeof s.t !== "number") return false;
    if (this.last && s.t <= this.last.t) return false;
    // Rates over the last `window` samples: one second's count of rare events is all spikes.
    const prev = this.samples.length ? this.samples[Math.max(0, this.samples.length - this.window)] : null;
    const dt = prev ? s.t - prev.t : 0;
    const n = this.t.length;
    this.t.push(s.t);
    this.pagesRate.push(prev ? rate(prev.pages, s.pages, dt) : null);
    this.itemsRate.push(prev ? rate(prev.items, s.items, dt) : null);
    this.bytesRate.push(prev ? rate(prev.bytes, s.bytes, dt) : null);
    pushKeyed(this.status, prev && prev.status, s.status, dt, n, !!prev);
    pushKeyed(this.errors, prev && prev.errors, s.errors, dt, n, !!prev);
    const f = s.frontier || {};
    for (const k of Object.keys(this.frontier)) this.frontier[k].push(f[k] ?? null);
    if (f.on_disk != null) this.hasSpill = true;
    const h = s.hosts || {};
    this.hosts.ready.push(h.ready ?? null);
    this.hosts.waiting.push(h.waiting ?? null);
    const m = s.memory || {};
    this.memory.rss.push(m.rss ?? null);
    this.memory.warning.push(m.warning ?? null);
    this.memory.limit.push(m.limit ?? null);
    if (m.limit != null) this.hasLimit = true;
    if (m.warning != null) this.hasWarning = true;
    this.revisitDue.push(s.revisit ? s.revisit.due_now ?? null : null);
    if (s.revisit) this.hasRevisit = true;
    const sh = s.shared || null;
    // the oldest of the last `sharedWindow` samples that has the shared figures
    let sprev = null;
    for (let i = Math.max(0, this.samples.length - this.sharedWindow); i < this.samples.length; i++) {
      if (this.samples[i].shared) { sprev = this.samples[i]; break; }
    }
    const psh = sprev ? sprev.shared : null;
    const sdt = sprev ? s.t - sprev.t : 0;
    this.sharedPagesRate.push(sh && psh ? rate(psh.pages, sh.pages, sdt) : null);
    this.sharedItemsRate.push(sh && psh ? rate(psh.items, sh.items, sdt) : null);
    this.sharedQueue.queued.push(sh ? sh.queued ?? null : null);
    this.sharedQueue.leased.push(sh ? sh.leased ?? null : null);
    pushKeyed(this.workerPages, psh && workerCounts(psh, "pages"), sh ? workerCounts(sh, "pages") : {},
      sdt, n, !!psh && !!sh);
    if (sh) this.hasShared = true;
    this.samples.push(s);
    this.last = s;
    if (this.t.length > this.maxPoints) this.trim(Math.ceil(this.maxPoints / 10));
    return true;
  }

  trim(count) {
    const cut = (a) => a.splice(0, count);
    cut(this.t); cut(this.pagesRate); cut(this.itemsRate); cut(this.bytesRate); cut(this.samples);
    for (const a of this.status.values()) cut(a);
    for (const a of this.errors.values()) cut(a);
    for (const a of Object.values(this.frontier)) cut(a);
    for (const a of Object.values(this.hosts)) cut(a);
    for (const a of Object.values(this.memory)) cut(a);
    cut(this.revisitDue);
    cut(this.sharedPagesRate); cut(this.sharedItemsRate);
    for (const a of Object.values(this.sharedQueue)) cut(a);
    for (const a of this.workerPages.values()) cut(a);
  }

  /** The newest sample at least `seconds` older than the last one (the first when none is). */
  sampleBefore(seconds) {
    if (!this.last) return null;
    const target = this.last.t - seconds;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i].t <= target) return this.samples[i];
    }
    return this.samples[0];
  }
}

/** {worker id: count} of a sample's shared figures (`field`: "pages" or "items"). */
export function workerCounts(shared, field) {
  const out = {};
  for (const w of (shared && Array.isArray(shared.by_worker)) ? shared.by_worker : []) {
    out[String(w.worker)] = w[field] ?? 0;
  }
  return out;
}

function pushKeyed(map, prevCounts, counts, dt, n, hasPrev) {
  counts = counts || {};
  for (const key of Object.keys(counts)) {
    if (!map.has(key)) {
      // Before the key appeared its count was 0; the first sample has no rate at all.
      const fill = new Array(n).fill(0);
      if (n > 0) fill[0] = null;
      map.set(key, fill);
    }
  }
  for (const [key, rates] of map) {
    const cur = counts[key] ?? 0;
    const before = prevCounts ? prevCounts[key] ?? 0 : null;
    rates.push(hasPrev ? rate(before, cur, dt) : null);
  }
}

/** Keys of a keyed series ordered for a legend: HTTP statuses numerically, the rest by name. */
export function orderedKeys(map) {
  return [...map.keys()].sort((a, b) => {
    const na = Number(a), nb = Number(b);
    if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** Per-bucket counts of a latency reading {buckets: [upper bounds, s], counts: [...]}.
 *
 * `counts` holds one count per bucket (responses slower than the bucket before and no slower
 * than this one), and may hold one more for responses slower than the last bound. Returns
 * {bounds: [s, ..., Infinity?], counts: [...]} or null without a reading. */
export function latencyBuckets(latency) {
  if (!latency || !Array.isArray(latency.buckets) || !Array.isArray(latency.counts)) return null;
  const bounds = latency.buckets.slice();
  const counts = latency.counts.slice(0, bounds.length + 1).map((c) => c || 0);
  if (counts.length > bounds.length) bounds.push(Infinity);
  while (counts.length < bounds.length) counts.push(0);
  return { bounds, counts };
}

/** The per-bucket difference of two latency readings (the responses between them). */
export function latencyDelta(older, newer) {
  const b = latencyBuckets(newer);
  if (!b) return null;
  const a = latencyBuckets(older);
  if (!a || a.counts.length !== b.counts.length) return b;
  return { bounds: b.bounds, counts: b.counts.map((c, i) => Math.max(0, c - a.counts[i])) };
}

/** The upper bound of the bucket holding quantile `q` (0..1) of a bucketed reading, or null
 * when it holds no response. */
export function quantileBound(buckets, q) {
  if (!buckets) return null;
  const total = buckets.counts.reduce((x, y) => x + y, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < buckets.counts.length; i++) {
    seen += buckets.counts[i];
    if (seen >= q * total) return buckets.bounds[i];
  }
  return buckets.bounds[buckets.bounds.length - 1];
}

/** The sum of a {key: count} dict. */
export function total(counts) {
  let n = 0;
  for (const v of Object.values(counts || {})) n += v || 0;
  return n;
}

/** The crawls grouped as one shared (Redis) crawl per `shared.frontier` (its Redis and
 * key; without it, per set of workers that overlap), each
 * other crawl alone: [{crawls, shared: combined figures|null, workers: [{worker, pages,
 * items, last_seen_s, crawl: the crawl of this worker here, or null}], best: the crawl
 * whose figures are shown (the freshest)}]. The combined figures and the workers' come
 * from the same (freshest) entry, so they add up. A worker is this machine's crawl when
 * the crawl says it is that worker (its entry's `worker`, FRONTIER_WORKER), else when its
 * id ends with the crawl's pid (FRONTIER_WORKER's default <hostname>-<pid>); a crawl of
 * the group matched to none gets a row of its own. */
export function groupShared(crawls) {
  const groups = [];
  const byWorker = new Map();
  const byFrontier = new Map();
  for (const c of crawls) {
    if (!c.shared) {
      groups.push({ crawls: [c], shared: null, workers: [] });
      continue;
    }
    const ids = (Array.isArray(c.workers) ? c.workers : []).map((w) => String(w.worker));
    // The shared crawl's identity (its Redis and key) when the entry gives it; else
    // (a crawl of an older crawlfw) the workers it shares with another entry.
    const frontier = c.shared.frontier || null;
    let group = frontier ? byFrontier.get(frontier) : ids.map((id) => byWorker.get(id)).find((g) => g);
    if (!group) {
      group = { crawls: [], shared: null, workers: [], best: null };
      groups.push(group);
      if (frontier) byFrontier.set(frontier, group);
    }
    group.crawls.push(c);
    if (!frontier) for (const id of ids) byWorker.set(id, group);
    if (!group.best || (c.shared.pages || 0) > (group.best.shared.pages || 0)) group.best = c;
  }
  for (const g of groups) {
    if (!g.best) continue;
    g.shared = g.best.shared;
    const known = new Map();
    for (const c of [g.best, ...g.crawls]) {
      for (const w of c.workers || []) {
        const id = String(w.worker);
        if (!known.has(id)) known.set(id, { ...w, worker: id, crawl: null });
      }
    }
    for (const c of g.crawls) {
      const own = c.worker != null ? known.get(String(c.worker)) : null;
      const w = own && !own.crawl ? own
        : [...known.values()].find((x) => !x.crawl && x.worker.endsWith(`-${c.pid}`));
      if (w) w.crawl = c;
      else known.set(`${c.id}`, { worker: String(c.id), pages: null, items: null, crawl: c });
    }
    g.workers = [...known.values()];
  }
  return groups;
}

/** Unix seconds of a time given as unix seconds or an ISO 8601 string (null: unknown). */
export function unixSeconds(v) {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v) {
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? null : ms / 1000;
  }
  return null;
}

/** CPU use (percent of one core) of each actor between two samples: {name: percent}. The
 * samples' `actors[].cpu` are the actor thread's CPU seconds so far. */
export function actorCpuPercent(older, newer) {
  const out = {};
  if (!older || !newer || !(newer.t > older.t)) return out;
  const before = new Map((older.actors || []).map((a) => [a.name, a.cpu]));
  for (const a of newer.actors || []) {
    const b = before.get(a.name);
    if (a.cpu != null && b != null && a.cpu >= b) out[a.name] = (100 * (a.cpu - b)) / (newer.t - older.t);
  }
  return out;
}

// ---- how figures are written ----

const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB"];

/** Bytes in binary multiples: 1536 -> "1.5 KB". */
export function fmtBytes(n) {
  if (n == null || Number.isNaN(n)) return "–";
  let u = 0;
  let v = Math.abs(n);
  while (v >= 1024 && u < BYTE_UNITS.length - 1) { v /= 1024; u++; }
  const digits = u === 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return (n < 0 ? "-" : "") + v.toFixed(digits) + " " + BYTE_UNITS[u];
}

/** A count with thousands separators: 12345 -> "12,345". */
export function fmtCount(n) {
  if (n == null || Number.isNaN(n)) return "–";
  return Math.round(n).toLocaleString("en-US");
}

/** A rate: 0.25 -> "0.25", 12.34 -> "12.3", 10 -> "10", 1234 -> "1,234". */
export function fmtRate(n) {
  if (n == null || Number.isNaN(n)) return "–";
  if (n >= 100) return fmtCount(n);
  if (n >= 10) return n.toFixed(1).replace(/\.0$/, "");
  return n.toFixed(2).replace(/\.?0+$/, "") || "0";
}

/** Seconds as a duration: 3725 -> "1h 02m", 65 -> "1m 05s", 4.2 -> "4.2 s". */
export function fmtDuration(s) {
  if (s == null || Number.isNaN(s)) return "–";
  if (s < 0) s = 0;
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s).toString()) + " s";
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  const p2 = (x) => String(x).padStart(2, "0");
  if (d > 0) return `${d}d ${p2(h)}h`;
  if (h > 0) return `${h}h ${p2(m)}m`;
  return `${m}m ${p2(sec)}s`;
}

/** Seconds of latency: 0.0123 -> "12 ms", 1.5 -> "1.5 s", Infinity -> "more". */
export function fmtSeconds(s) {
  if (s == null || Number.isNaN(s)) return "–";
  if (s === Infinity) return "more";
  if (s < 1) return `${+(s * 1000).toPrecision(3)} ms`;
  return `${+s.toPrecision(3)} s`;
}

/** A unix time as local clock time, "14:03:07". */
export function fmtClock(t) {
  if (t == null) return "–";
  const d = new Date(t * 1000);
  const p2 = (x) => String(x).padStart(2, "0");
  return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}

/** A unix time as a local date and time, "2026-11-29 14:03". */
export function fmtDateTime(t) {
  if (t == null) return "–";
  const d = new Date(t * 1000);
  const p2 = (x) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}`;
}

// The dashboard page: the crawl list (#/) and one crawl's view (#/crawl/<id>). Server data
// reaches the page only as text (textContent) or chart numbers, never as markup.

import { listCrawls, crawlHistory, crawlAction, sharedAction, crawlEvents, ApiError } from "./api.js";
import { SampleStore, orderedKeys, latencyBuckets, latencyDelta, quantileBound, total,
  unixSeconds, actorCpuPercent, groupShared, workerCounts, fmtBytes, fmtCount, fmtRate, fmtDuration, fmtSeconds,
  fmtClock, fmtDateTime } from "./derive.js";
import { TimeChart, LatencyChart, PALETTE, statusColour } from "./charts.js";

const $ = (id) => document.getElementById(id);
const MAX_ERRORS = 200;
const LIST_REFRESH_MS = 2000;
const WHOLE_BUTTONS = ["btn-pause-all", "btn-resume-all", "btn-stop-all"];

/** Make an element: `props` are set as properties (className, textContent, href...). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (v !== undefined && v !== null) node[k] = v;
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function setText(id, text) {
  const node = $(id);
  if (node.textContent !== text) node.textContent = text;
}

let noticeTimer = null;

/** Show `text` above the view ("" hides it); an "info" one goes after a few seconds. */
function notice(text, kind = "info", transient = false) {
  clearTimeout(noticeTimer);
  if (transient && text) noticeTimer = setTimeout(() => notice(""), 4000);
  const n = $("notice");
  n.textContent = text || "";
  n.dataset.kind = kind;
  n.hidden = !text;
}

function connection(state) {
  const c = $("conn");
  c.dataset.state = state;
  c.textContent = state;
}

function crawlHref(id) {
  return `#/crawl/${encodeURIComponent(id)}`;
}

/** The whole view of a shared crawl, read from the samples of its worker `id` here. */
function sharedHref(id) {
  return `#/shared/${encodeURIComponent(id)}`;
}

// ---- the crawl list ----

class ListView {
  constructor() {
    this.gone = false;
    this.timer = null;
    this.crawls = [];
  }

  async show() {
    $("list-view").hidden = false;
    document.body.dataset.view = "list";
    setText("crumb", "crawls");
    document.title = "crawlfw dashboard";
    await this.refresh();
    if (this.gone) return;  // left while the list loaded: no refreshing
    this.timer = setInterval(() => this.refresh(), LIST_REFRESH_MS);
  }

  hide() {
    this.gone = true;
    clearInterval(this.timer);
    this.timer = null;
    $("list-view").hidden = true;
  }

  async refresh() {
    let crawls;
    try {
      crawls = await listCrawls();
      if (this.gone) return;
    } catch (e) {
      if (this.gone) return;
      connection("unreachable");
      notice(e instanceof ApiError && e.status === 403
        ? "Refused: open the address with its ?token= as printed by crawlfw."
        : `Cannot list the crawls: ${e.message}`, "error");
      return;
    }
    connection("live");
    notice("");
    this.crawls = crawls;
    this.render(crawls);
  }

  render(crawls) {
    const rows = [];
    const stateCell = (state) => el("td", {},
      el("span", { className: "state", dataset: { state: state || "" }, textContent: state || "–" }));
    const crawlRow = (c, className, prefix, figures = c) => {
      const started = unixSeconds(c.started);
      const name = el("td", {});
      if (prefix) name.append(el("span", { className: "indent", textContent: prefix }));
      name.append(el("a", { href: crawlHref(c.id), textContent: c.name || String(c.id) }),
        el("span", { className: "muted id", textContent: ` ${c.crawl_id ?? c.id}` }));
      return el("tr", { className, dataset: { crawlId: String(c.id) } }, name,
        el("td", { className: "num", textContent: c.pid ?? "–" }),
        el("td", { textContent: started ? fmtDateTime(started) : "–" }),
        stateCell(c.state),
        el("td", { className: "num", textContent: fmtCount(figures.pages) }),
        el("td", { className: "num", textContent: fmtCount(figures.items) }),
        el("td", { className: "num", textContent: "–" }));
    };
    for (const group of groupShared(crawls)) {
      if (!group.shared) {
        rows.push(crawlRow(group.crawls[0], "crawl-row"));
        continue;
      }
      // A shared (Redis) crawl: its figures combined, then each worker: a process here
      // (a crawl of its own, with its view) or one elsewhere (as the frontier knows it).
      const first = group.crawls[0];
      const sh = group.shared;
      rows.push(el("tr", { className: "crawl-row shared-row" },
        el("td", {}, el("a", { href: sharedHref(group.best.id), textContent: `${first.name} ` }),
          el("span", { className: "muted", textContent: `shared frontier, ${group.workers.length} worker${group.workers.length === 1 ? "" : "s"} combined` })),
        el("td", {}), el("td", {}),
        el("td", { className: "muted", textContent: `${fmtCount(sh.leased)} leased` }),
        el("td", { className: "num", textContent: fmtCount(sh.pages) }),
        el("td", { className: "num", textContent: fmtCount(sh.items) }),
        el("td", { className: "num", textContent: fmtCount(sh.queued) })));
      for (const w of group.workers) {
        if (w.crawl) {
          // The frontier's figures of the worker: the combined row is their sum.
          rows.push(crawlRow(w.crawl, "worker-row", `↳ ${w.worker} `, w.pages != null ? w : w.crawl));
          continue;
        }
        const seen = w.last_seen_s != null ? `seen ${fmtDuration(w.last_seen_s)} ago` : "";
        rows.push(el("tr", { className: "worker-row" },
          el("td", {}, el("span", { className: "indent", textContent: `↳ ${w.worker} ` }),
            el("span", { className: "muted", textContent: "(another machine)" })),
          el("td", {}), el("td", { className: "muted", textContent: seen }), el("td", {}),
          el("td", { className: "num", textContent: fmtCount(w.pages) }),
          el("td", { className: "num", textContent: fmtCount(w.items) }),
          el("td", {})));
      }
    }
    $("crawl-list").tBodies[0].replaceChildren(...rows);
    $("crawl-list-empty").hidden = crawls.length > 0;
  }
}

/** A worker's state in the whole view: its own for a worker here, else what the last
 * whole-crawl command did for it ("pause sent through Redis"), else "–". */
function workerState(crawl, sent, command) {
  if (crawl && crawl.state) return crawl.state;
  if (!sent || !command) return "–";
  if (!sent.reached) return `${command.action} not sent`;
  return `${command.action} sent${sent.via === "redis" ? " through Redis" : ""}`;
}

// ---- one crawl ----

class CrawlView {
  /** `mode`: "crawl" (the crawl's own figures) or "shared" (the whole shared crawl it is a
   * worker of, as its samples' `shared` figures say: every worker, here or elsewhere). */
  constructor(id, mode = "crawl") {
    this.id = id;
    this.mode = mode;
    this.gone = false;  // hidden: its stream closed, nothing more to draw
    this.crawls = [];
    this.listed = 0;
    this.store = new SampleStore();
    this.events = null;
    this.errorCount = 0;
    this.started = null;
    this.state = null;
    this.clock = null;
    this.drawPending = false;
    this.pending = null;
    this.command = null;  // the whole view's last command: {action, answer, until}
    this.buildCharts();
    this.wireButtons();
  }

  buildCharts() {
    for (const id of ["chart-throughput", "chart-status", "chart-errors", "chart-latency",
      "chart-frontier", "chart-hosts", "chart-memory", "chart-revisit", "chart-shared-throughput",
      "chart-shared-workers", "chart-shared-queue"]) $(id).replaceChildren();
    if (this.mode === "shared") {
      this.charts = {
        throughput: new TimeChart($("chart-shared-throughput"), {
          axes: { y: "rate" },
          series: [
            { key: "pages", label: "pages/s", colour: PALETTE[0] },
            { key: "items", label: "items/s", colour: PALETTE[1] },
          ],
        }),
        workers: new TimeChart($("chart-shared-workers"), { axes: { y: "rate" } }),
        queue: new TimeChart($("chart-shared-queue"), {
          axes: { y: "count" },
          series: [
            { key: "queued", label: "queued", colour: PALETTE[0] },
            { key: "leased", label: "leased", colour: PALETTE[3] },
          ],
        }),
      };
      return;
    }
    this.charts = {
      throughput: new TimeChart($("chart-throughput"), {
        axes: { y: "rate", y2: "bytesRate" },
        series: [
          { key: "pages", label: "pages/s", colour: PALETTE[0] },
          { key: "items", label: "items/s", colour: PALETTE[1] },
          { key: "bytes", label: "bandwidth", colour: PALETTE[2], scale: "y2", dash: [4, 3] },
        ],
      }),
      status: new TimeChart($("chart-status"), { axes: { y: "rate" } }),
      errors: new TimeChart($("chart-errors"), { axes: { y: "rate" } }),
      latency: new LatencyChart($("chart-latency")),
      frontier: new TimeChart($("chart-frontier"), {
        axes: { y: "count" },
        series: [
          { key: "queued", label: "queued", colour: PALETTE[0] },
          { key: "in_flight", label: "in flight", colour: PALETTE[1] },
          { key: "leased", label: "leased", colour: PALETTE[3] },
        ],
      }),
      hosts: new TimeChart($("chart-hosts"), {
        axes: { y: "count" }, fill: true,
        series: [
          { key: "ready", label: "ready", colour: PALETTE[1] },
          { key: "waiting", label: "waiting", colour: PALETTE[2] },
        ],
      }),
      memory: new TimeChart($("chart-memory"), {
        axes: { y: "bytes" },
        series: [{ key: "rss", label: "RSS", colour: PALETTE[0] }],
      }),
      revisit: null,
    };
  }

  wireButtons() {
    this.onPause = () => this.act("pause");
    this.onResume = () => this.act("resume");
    this.onStop = () => {
      if (window.confirm(`Stop crawl ${this.name || this.id}? It closes as on Ctrl-C: what is in flight finishes, the feed is stored.`)) this.act("stop");
    };
    $("btn-pause").addEventListener("click", this.onPause);
    $("btn-resume").addEventListener("click", this.onResume);
    $("btn-stop").addEventListener("click", this.onStop);
    // The whole view: every worker of the shared crawl, here and elsewhere.
    this.onAll = {
      "btn-pause-all": () => this.actAll("pause"),
      "btn-resume-all": () => this.actAll("resume"),
      "btn-stop-all": () => {
        if (window.confirm(`Stop every worker of ${this.name || this.id}, here and on other machines? Each closes as on Ctrl-C: what is in flight finishes, its feed is stored.`)) this.actAll("stop");
      },
    };
    for (const [id, fn] of Object.entries(this.onAll)) $(id).addEventListener("click", fn);
  }

  async show(crawls) {
    $("crawl-view").hidden = false;
    document.body.dataset.view = this.mode;
    document.body.dataset.samples = "0";
    this.crawls = crawls || [];
    this.listed = Date.now();
    const info = this.crawls.find((c) => String(c.id) === String(this.id));
    this.name = info && info.name ? info.name : String(this.id);
    this.started = info ? unixSeconds(info.started) : null;
    $("shared-link").href = sharedHref(this.id);
    const wl = $("worker-link");
    wl.href = crawlHref(this.id);
    wl.textContent = `read from worker ${info && info.worker ? info.worker : this.id}`;
    wl.hidden = false;
    if (this.mode === "shared") {
      setText("crawl-title", `${this.name}: whole crawl`);
      setText("crawl-meta", "shared frontier");
      setText("crumb", `crawls › ${this.name} (all workers)`);
      document.title = `${this.name} (all workers) · crawlfw`;
    } else {
      setText("crawl-title", this.name);
      setText("crawl-meta", info ? [info.crawl_id, info.worker ? `worker ${info.worker}` : null,
        info.pid != null ? `pid ${info.pid}` : null,
        this.started ? `started ${fmtDateTime(this.started)}` : null].filter(Boolean).join(" · ") : "");
      setText("crumb", crawls && crawls.length > 1 ? `crawls › ${this.name}` : this.name);
      document.title = `${this.name} · crawlfw`;
    }
    if (info && info.state) this.setState(info.state);
    this.clock = setInterval(() => this.tick(), 1000);
    await this.loadHistory();
    if (this.gone) return;  // left (another view) while the history loaded: no stream
    this.events = crawlEvents(this.id, {
      onSample: (s) => this.addSample(s),
      onError: (e) => this.addError(e),
      onEnd: (reason) => {
        if (this.mode === "shared") {  // (ended, or its server no longer answers for it)
          this.followAnotherWorker(reason);
          return;
        }
        if (reason === null) {
          notice("The dashboard server does not answer (its crawl may have ended): reload the page to try again.", "error");
          return;
        }
        notice(`The crawl has ended${reason ? ` (${reason})` : ""}.`, "info");
        this.setState("finished");
      },
      onStatus: (s) => connection(s),
    });
  }

  hide() {
    this.gone = true;
    if (this.events) this.events.close();
    clearInterval(this.clock);
    for (const chart of Object.values(this.charts)) if (chart) chart.destroy();
    $("revisit-panel").hidden = true;
    $("shared-link").hidden = true;
    $("worker-link").hidden = true;
    $("workers-table").tBodies[0].replaceChildren();
    setText("errors-count", "");
    $("btn-pause").removeEventListener("click", this.onPause);
    $("btn-resume").removeEventListener("click", this.onResume);
    $("btn-stop").removeEventListener("click", this.onStop);
    for (const [id, fn] of Object.entries(this.onAll)) $(id).removeEventListener("click", fn);
    $("whole-command").hidden = true;
    $("crawl-view").hidden = true;
    $("error-list").replaceChildren();
    $("error-list-empty").hidden = false;
  }

  async loadHistory() {
    let history;
    try {
      history = await crawlHistory(this.id);
    } catch (e) {
      notice(e instanceof ApiError && e.status === 404
        ? `No crawl ${this.id} here (it may have finished).`
        : `Cannot read the crawl's history: ${e.message}`, "error");
      return;
    }
    if ($("notice").dataset.kind === "error") notice("");  // (an info one stays its time)
    this.store.clear();
    for (const s of history.samples || []) this.store.push(s);
    if (Array.isArray(history.errors)) {
      $("error-list").replaceChildren();
      this.errorCount = 0;
      for (const e of history.errors) this.addError(e);
    }
    this.draw();
  }

  addSample(s) {
    if (!this.store.push(s)) return;
    // Several samples may come at once (a tab in the background): draw once per frame.
    if (!this.drawPending) {
      this.drawPending = true;
      requestAnimationFrame(() => { this.drawPending = false; this.draw(); });
      // Background tabs do not run animation frames: draw anyway within a second.
      setTimeout(() => { if (this.drawPending) { this.drawPending = false; this.draw(); } }, 1000);
    }
  }

  addError(e) {
    if (!e || typeof e !== "object") return;
    this.errorCount += 1;
    const when = typeof e.t === "number" ? fmtClock(e.t) : "";
    const summary = el("summary", {},
      el("time", { textContent: when }),
      el("span", { className: "kind", textContent: String(e.kind ?? "error") }),
      el("span", { className: "message", textContent: String(e.message ?? "") }));
    const details = el("details", {}, summary);
    if (e.url) details.append(el("div", { className: "url", textContent: String(e.url) }));
    if (e.traceback) details.append(el("pre", { textContent: String(e.traceback) }));
    const list = $("error-list");
    list.prepend(el("li", {}, details));
    while (list.children.length > MAX_ERRORS) list.lastElementChild.remove();
    $("error-list-empty").hidden = true;
    setText("errors-count", this.errorCount > MAX_ERRORS
      ? `the last ${MAX_ERRORS} of ${fmtCount(this.errorCount)}` : `${fmtCount(this.errorCount)}`);
  }

  async act(action) {
    const buttons = ["btn-pause", "btn-resume", "btn-stop"].map($);
    for (const b of buttons) b.disabled = true;
    try {
      await crawlAction(this.id, action);
      notice(`${action[0].toUpperCase()}${action.slice(1)} sent.`, "info", true);
      this.pending = { action, until: Date.now() + 10000 };
      this.setState({ pause: "pausing", resume: "resuming", stop: "stopping" }[action]);
    } catch (e) {
      notice(`Could not ${action} the crawl: ${e.message}`, "error");
      this.setState(this.state);
    }
  }

  /** Pause, resume or stop every worker of the shared crawl: the server sends it to each
   * worker here and writes it in the shared frontier (Redis) for the others. */
  async actAll(action) {
    for (const b of WHOLE_BUTTONS.map($)) b.disabled = true;
    try {
      const answer = await sharedAction(this.id, action);
      this.command = { action, answer, until: Date.now() + 10000 };
      this.showCommand(answer);
      notice(`${action[0].toUpperCase()}${action.slice(1)} sent to every worker.`, "info", true);
      setTimeout(() => listCrawls().then((crawls) => {  // (the server lists anew each second)
        this.crawls = crawls;
        this.listed = Date.now();
      }, () => {}), 1200);
    } catch (e) {
      notice(`Could not ${action} the workers: ${e.message}`, "error");
    }
    this.setWholeButtons();
  }

  /** Which workers a command reached, and how (as text). */
  showCommand(answer) {
    const done = { pause: "Paused", resume: "Resumed", stop: "Stopping" }[answer.command];
    const names = (ws) => ws.map((w) => w.worker).join(", ");
    const here = answer.workers.filter((w) => w.reached && w.via === "control");
    const away = answer.workers.filter((w) => w.reached && w.via === "redis");
    const missed = answer.workers.filter((w) => !w.reached);
    const parts = [];
    if (here.length) parts.push(`${names(here)} here, at once`);
    if (away.length) parts.push(`${names(away)} through the shared frontier (within 2 s, if it runs)`);
    let text = `${done}: ${parts.join("; ") || "no worker"}.`;
    if (answer.published) {
      if (answer.command === "pause") text += " A worker joining later stays paused until Resume all.";
    } else {
      text += ` Not written in the shared frontier (${answer.error}): workers elsewhere were not reached.`;
    }
    if (missed.length) text += ` Not reached: ${missed.map((w) => `${w.worker} (${w.error})`).join("; ")}.`;
    const p = $("whole-command");
    p.textContent = text;
    p.dataset.kind = answer.ok ? "info" : "error";
    p.hidden = false;
  }

  /** The whole view's buttons, from the workers' states here and, for those elsewhere
   * (whose states the page does not see), the last whole-crawl command: before any, both
   * Pause and Resume stay possible. */
  setWholeButtons() {
    const info = this.crawls.find((c) => String(c.id) === String(this.id));
    const frontier = info && info.shared ? info.shared.frontier : null;
    const here = this.crawls.filter((c) => c.shared && frontier && c.shared.frontier === frontier);
    const known = new Set(here.map((c) => String(c.worker)));
    const last = this.store.last;
    const elsewhere = !here.length || ((last && last.shared && last.shared.by_worker) || [])
      .some((w) => !known.has(String(w.worker)));
    const cmd = this.command ? this.command.action : null;
    const fresh = this.command && Date.now() < this.command.until;  // (states here may lag)
    const pause = (elsewhere && cmd !== "pause")
      || (here.some((c) => c.state === "running") && !(fresh && cmd === "pause"));
    const resume = (elsewhere && cmd !== "resume")
      || (here.some((c) => c.state === "paused") && !(fresh && cmd === "resume"));
    const stopped = cmd === "stop";
    $("btn-pause-all").disabled = !pause || stopped;
    $("btn-resume-all").disabled = !resume || stopped;
    $("btn-stop-all").disabled = stopped;
  }

  setState(state) {
    this.state = state;
    const s = $("crawl-state");
    s.textContent = state || "–";
    s.dataset.state = state || "";
    const running = state === "running" || state === "resuming";
    const paused = state === "paused" || state === "pausing";
    const over = ["stopping", "closing", "finished", "closed", "stopped"].includes(state);
    $("btn-pause").disabled = !running;
    $("btn-resume").disabled = !paused;
    $("btn-stop").disabled = over || !state;
  }

  tick() {
    const last = this.store.last;
    const now = Date.now() / 1000;
    const start = this.started ?? (this.store.samples[0] ? this.store.samples[0].t : null);
    setText("uptime", start ? fmtDuration((last && this.state !== "running" ? last.t : now) - start) : "–");
    setText("last-sample", last ? `updated ${fmtDuration(Math.max(0, now - last.t))} ago` : "");
  }

  draw() {
    const st = this.store;
    document.body.dataset.samples = String(st.length);
    const last = st.last;
    if (!last) return;
    if (last.state) {
      // After a button, show "pausing"... until a sample shows the change (or 10 s pass).
      const p = this.pending;
      const reached = p && (p.action === "pause" ? last.state !== "running"
        : p.action === "resume" ? last.state !== "paused" : !["running", "paused"].includes(last.state));
      if (!p || reached || Date.now() > p.until) {
        this.pending = null;
        this.setState(last.state);
      }
    }
    if (this.mode === "shared") {
      this.drawWhole(last);
    } else {
      this.drawTiles(last);
      this.drawCharts();
      this.drawTables(last);
    }
    this.tick();
  }

  /** The whole shared crawl: its sums, each worker's pages per second, the shared queue,
   * and the workers (a link to the view of each one running here). */
  drawWhole(last) {
    const st = this.store;
    const sh = last.shared;
    if (!sh) {
      setText("whole-note", "no shared figures (yet): not a shared crawl, or not published");
      return;
    }
    setText("whole-pages", fmtCount(sh.pages));
    setText("whole-pages-rate", `${fmtRate(this.recentSharedRate("pages"))} /s`);
    setText("whole-items", fmtCount(sh.items));
    setText("whole-items-rate", `${fmtRate(this.recentSharedRate("items"))} /s`);
    setText("whole-queued", fmtCount(sh.queued));
    setText("whole-leased", `${fmtCount(sh.leased)} leased`);
    setText("whole-workers", fmtCount(sh.workers));
    setText("whole-note", "as they last published");
    const c = this.charts;
    c.throughput.setData(st.t, { pages: st.sharedPagesRate, items: st.sharedItemsRate });
    orderedKeys(st.workerPages).forEach((k, i) => {
      if (!c.workers.has(k)) c.workers.addSeries({ key: k, label: k, colour: PALETTE[i % PALETTE.length] });
    });
    c.workers.setData(st.t, Object.fromEntries(st.workerPages));
    c.queue.setData(st.t, st.sharedQueue);

    const before = this.store.sampleBefore(10);
    const older = before && before !== last && before.shared ? workerCounts(before.shared, "pages") : {};
    const dt = before ? last.t - before.t : 0;
    const info = this.crawls.find((x) => String(x.id) === String(this.id));
    const frontier = info && info.shared ? info.shared.frontier : null;  // (this shared crawl's)
    const here = new Map(this.crawls.filter((x) => x.worker != null
      && (!frontier || (x.shared && x.shared.frontier === frontier))).map((x) => [String(x.worker), x]));
    const sent = new Map(this.command ? this.command.answer.workers.map((w) => [String(w.worker), w]) : []);
    const rows = (sh.by_worker || []).map((w) => {
      const id = String(w.worker);
      const r = dt > 0 && older[id] != null && w.pages >= older[id] ? (w.pages - older[id]) / dt : null;
      const crawl = here.get(id);
      const where = crawl ? el("a", { href: crawlHref(crawl.id), textContent: `pid ${crawl.pid}` })
        : el("span", { className: "muted", textContent: "elsewhere" });
      return el("tr", { dataset: { worker: id } },
        el("td", { textContent: id }),
        el("td", { className: "num", textContent: fmtCount(w.pages) }),
        el("td", { className: "num", textContent: fmtCount(w.items) }),
        el("td", { className: "num", textContent: fmtRate(r) }),
        el("td", { className: "state-cell", textContent: workerState(crawl, sent.get(id), this.command) }),
        el("td", {}, where));
    });
    $("workers-table").tBodies[0].replaceChildren(...rows);
    this.setWholeButtons();
    if (Date.now() - this.listed > 5000) {  // workers here that started since
      this.listed = Date.now();
      listCrawls().then((crawls) => { this.crawls = crawls; }, () => {});
    }
  }

  /** The whole crawl's rate of `field` ("pages", "items") over the last `seconds`. */
  recentSharedRate(field, seconds = 10) {
    const last = this.store.last;
    const before = this.store.sampleBefore(seconds);
    if (!last || !before || before === last || !last.shared || !before.shared) return null;
    const a = before.shared[field];
    const b = last.shared[field];
    if (a == null || b == null || b < a) return null;
    return (b - a) / (last.t - before.t);
  }

  /** The worker this view reads has ended: read the whole crawl from another worker here
   * (its own history), or say that none is left. */
  async followAnotherWorker(reason) {
    const known = new Set(((this.store.last && this.store.last.shared
      && this.store.last.shared.by_worker) || []).map((w) => String(w.worker)));
    let crawls = [];
    try { crawls = await listCrawls(); } catch (e) { /* none reachable */ }
    if (this.gone) return;
    const other = crawls.find((c) => String(c.id) !== String(this.id) && c.shared
      && (c.workers || []).some((w) => known.has(String(w.worker))));
    if (other) {
      nextNotice = [`Worker ${this.id} has ended: the whole crawl is now read from ${other.id}.`, "info"];
      window.location.hash = sharedHref(other.id);
      return;
    }
    notice(`The crawl has ended here${reason ? ` (${reason})` : ""}: no worker of it is left on this machine.`, "info");
    this.setState("finished");
  }

  /** A rate over the last `seconds` of samples (steadier than the last second's). */
  recentRate(field, seconds = 10) {
    const last = this.store.last;
    const before = this.store.sampleBefore(seconds);
    if (!last || !before || before === last) return null;
    const a = field === "errors" ? total(before.errors) : before[field];
    const b = field === "errors" ? total(last.errors) : last[field];
    if (a == null || b == null || b < a) return null;
    return (b - a) / (last.t - before.t);
  }

  drawTiles(last) {
    setText("pages-total", fmtCount(last.pages));
    setText("pages-rate", `${fmtRate(this.recentRate("pages"))} /s`);
    setText("items-total", fmtCount(last.items));
    setText("items-rate", `${fmtRate(this.recentRate("items"))} /s`);
    setText("bytes-total", fmtBytes(last.bytes));
    const br = this.recentRate("bytes");
    setText("bytes-rate", br == null ? "–" : `${fmtBytes(br)}/s`);
    setText("errors-total", fmtCount(total(last.errors)));
    setText("errors-rate", `${fmtRate(this.recentRate("errors"))} /s`);
    const f = last.frontier || {};
    setText("queued-total", fmtCount(f.queued));
    setText("inflight-total", `${fmtCount(f.in_flight)} in flight${f.on_disk != null ? `, ${fmtCount(f.on_disk)} on disk` : ""}`);
    const m = last.memory || {};
    setText("memory-rss", fmtBytes(m.rss));
    setText("memory-limit", m.limit != null ? `limit ${fmtBytes(m.limit)}`
      : m.warning != null ? `warning at ${fmtBytes(m.warning)}` : "no limit set");
    const w = $("memory-warning");
    const over = m.rss != null && m.warning != null && m.rss >= m.warning;
    w.hidden = !over;
    if (over) {
      w.textContent = `Memory ${fmtBytes(m.rss)} is above the warning level (MEMUSAGE_WARNING_MB, ${fmtBytes(m.warning)})`
        + (m.limit != null ? `; the crawl closes at ${fmtBytes(m.limit)} (MEMUSAGE_LIMIT_MB).` : ".");
    }
    const sh = last.shared;
    $("shared-tile").hidden = !sh;
    $("shared-link").hidden = !sh;
    if (sh) {
      setText("shared-pages", fmtCount(sh.pages));
      setText("shared-sub", `${fmtCount(sh.items)} items, ${fmtCount(sh.workers)} workers, ${fmtCount(sh.queued)} queued`);
    }
  }

  drawCharts() {
    const st = this.store;
    const c = this.charts;
    c.throughput.setData(st.t, { pages: st.pagesRate, items: st.itemsRate, bytes: st.bytesRate });

    orderedKeys(st.status).forEach((k, i) => {
      if (!c.status.has(k)) c.status.addSeries({ key: k, label: k, colour: statusColour(k, i) });
    });
    c.status.setData(st.t, Object.fromEntries(st.status));
    orderedKeys(st.errors).forEach((k, i) => {
      if (!c.errors.has(k)) c.errors.addSeries({ key: k, label: k, colour: PALETTE[(i + 4) % PALETTE.length] });
    });
    c.errors.setData(st.t, Object.fromEntries(st.errors));

    const whole = latencyBuckets(st.last.latency);
    const before = st.sampleBefore(60);
    const recent = before && before !== st.last ? latencyDelta(before.latency, st.last.latency) : whole;
    c.latency.update(recent, whole);
    const q = (b, x) => fmtSeconds(quantileBound(b, x));
    setText("latency-quantiles", whole ? `median ≤ ${q(recent, 0.5)}, p95 ≤ ${q(recent, 0.95)} (last minute)` : "");

    if (st.hasSpill && !c.frontier.has("on_disk")) c.frontier.addSeries({ key: "on_disk", label: "on disk", colour: PALETTE[8] });
    c.frontier.setData(st.t, st.frontier);
    c.hosts.setData(st.t, st.hosts);
    if (st.hasWarning && !c.memory.has("warning")) c.memory.addSeries({ key: "warning", label: "warning", colour: PALETTE[2], dash: [3, 3] });
    if (st.hasLimit && !c.memory.has("limit")) c.memory.addSeries({ key: "limit", label: "limit", colour: PALETTE[4], dash: [6, 4] });
    c.memory.setData(st.t, st.memory);

    if (st.hasRevisit) {
      $("revisit-panel").hidden = false;
      if (!c.revisit) {
        c.revisit = new TimeChart($("chart-revisit"), {
          axes: { y: "count" }, series: [{ key: "due", label: "due now", colour: PALETTE[3] }] });
      }
      c.revisit.setData(st.t, { due: st.revisitDue });
      const r = st.last.revisit;
      setText("revisit-next", r && r.next_due != null
        ? `next due ${r.next_due > 1e9 ? `at ${fmtClock(r.next_due)}` : `in ${fmtDuration(r.next_due)}`}` : "");
    }
  }

  drawTables(last) {
    const hosts = (last.hosts && last.hosts.busiest) || [];
    const counted = last.hosts && last.hosts.ready != null;
    setText("hosts-note", counted ? ""
      : last.shared ? "The hosts of a shared crawl are counted in Redis, not here."
        : "Counted while a dashboard looks (a crawl of over 2,000 hosts): from the next samples on.");
    const none = (text) => el("tr", {}, el("td", { className: "muted", colSpan: 4, textContent: text }));
    $("hosts-table").tBodies[0].replaceChildren(...(hosts.length ? [] : [none("No host has requests queued or in flight.")]),
      ...hosts.map((h) => el("tr", {},
      el("td", { textContent: String(h.host) }),
      el("td", { className: "num", textContent: fmtCount(h.queued) }),
      el("td", { className: "num", textContent: fmtCount(h.in_flight) }),
      el("td", { className: "num", textContent: h.delay == null ? "–" : fmtSeconds(h.delay) }))));
    const actors = last.actors || [];
    const cpu = actorCpuPercent(this.store.sampleBefore(10), last);
    $("actors-table").tBodies[0].replaceChildren(...(actors.length ? [] : [none("No actor reported.")]),
      ...actors.map((a) => el("tr",
      { className: a.restarts ? "restarted" : "" },
      el("td", { textContent: String(a.name) }),
      el("td", { className: "num", textContent: fmtCount(a.restarts) }),
      el("td", { className: "num", textContent: fmtCount(a.mailbox) }),
      el("td", { className: "num", textContent: cpu[a.name] == null ? "–" : `${fmtRate(cpu[a.name])} %`,
        title: a.cpu == null ? "" : `${a.cpu} s of CPU so far` }))));
  }
}

// ---- routing ----

let current = null;
let navigation = 0;      // go() calls so far: a go() that a later one overtook stops
let nextNotice = null;   // [text, kind] to show once the next view is up

function route() {
  const m = window.location.hash.match(/^#\/(crawl|shared)\/(.+)$/);
  return m ? { view: m[1], id: decodeURIComponent(m[2]) } : { view: "list" };
}

async function go() {
  const mine = ++navigation;
  if (current) current.hide();
  current = null;
  notice("");
  if (nextNotice) {
    notice(nextNotice[0], nextNotice[1], true);
    nextNotice = null;
  }
  let crawls = [];
  try {
    crawls = await listCrawls();
    if (mine !== navigation) return;  // another address was opened meanwhile
    connection("live");
  } catch (e) {
    if (mine !== navigation) return;
    connection("unreachable");
    notice(e instanceof ApiError && e.status === 403
      ? "Refused: open the address with its ?token= as printed by crawlfw."
      : `Cannot reach the dashboard server: ${e.message}`, "error");
    return;
  }
  let r = route();
  // One crawl (the crawl's own dashboard): straight to it.
  if (r.view === "list" && !window.location.hash && crawls.length === 1
      && !(Array.isArray(crawls[0].workers) && crawls[0].workers.length)) {
    window.history.replaceState(null, "", crawlHref(crawls[0].id));
    r = { view: "crawl", id: String(crawls[0].id) };
  }
  $("nav-list").hidden = false;
  if (r.view === "crawl" || r.view === "shared") {
    current = new CrawlView(r.id, r.view);
    await current.show(crawls);
  } else {
    current = new ListView();
    await current.show();
  }
}

window.addEventListener("hashchange", go);
go();

// The charts, drawn with uPlot (vendored: uPlot.iife.min.js, see README.md here). A
// TimeChart is a line chart over time whose series may grow (a new status code or error
// kind); a BarChart is the latency distribution.

import { fmtBytes, fmtRate, fmtCount, fmtSeconds, fmtClock } from "./derive.js";

const uPlot = globalThis.uPlot;
const HEIGHT = 190;

export const PALETTE = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2",
  "#65a30d", "#db2777", "#475569", "#ca8a04"];

/** A colour for an HTTP status: greens for 2xx, blues for 3xx, ambers for 4xx, reds for 5xx. */
export function statusColour(code, index) {
  const shades = {
    2: ["#16a34a", "#15803d", "#4ade80"],
    3: ["#2563eb", "#1d4ed8", "#60a5fa"],
    4: ["#d97706", "#b45309", "#f59e0b", "#92400e"],
    5: ["#dc2626", "#991b1b", "#f87171", "#7f1d1d"],
  }[String(code)[0]];
  if (!shades) return PALETTE[index % PALETTE.length];
  return shades[(Number(code) % 7) % shades.length];
}

/** Axis steps by kind: whole numbers for counts, powers of two for bytes (uPlot's own
 * decimal steps for rates). */
const COUNT_INCRS = [];
for (let p = 1; p <= 1e12; p *= 10) COUNT_INCRS.push(p, 2 * p, 5 * p);
const BYTE_INCRS = [];
for (let p = 1; p <= 2 ** 50; p *= 2) BYTE_INCRS.push(p);
export const INCRS = { count: COUNT_INCRS, bytes: BYTE_INCRS, bytesRate: BYTE_INCRS };

/** How an axis and a legend write values of a kind. */
export const FORMATS = {
  count: fmtCount,
  rate: fmtRate,
  bytes: fmtBytes,
  bytesRate: (v) => (v == null ? "–" : `${fmtBytes(v)}/s`),
};

function widthOf(el) {
  return Math.max(240, Math.floor(el.clientWidth || el.parentElement.clientWidth || 400));
}

/** The last value of a column that is not null (what a legend shows without a cursor). */
function lastValue(column) {
  for (let i = column.length - 1; i >= 0; i--) if (column[i] != null) return column[i];
  return null;
}

function axisValues(fmt) {
  return (u, splits) => splits.map((v) => (v == null ? "" : fmt(v)));
}

/** What every chart shares: its element, its uPlot chart (null until built), and its
 * width following the element's. */
class Chart {
  constructor(el) {
    this.el = el;
    this.plot = null;
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(el);
  }

  /** Remove the chart from the page. */
  destroy() {
    this.observer.disconnect();
    if (this.plot) this.plot.destroy();
    this.plot = null;
  }

  resize() {
    if (!this.plot) return;
    const w = widthOf(this.el);
    if (w !== this.plot.width) this.plot.setSize({ width: w, height: HEIGHT });
  }
}

/** A line chart over time.
 *
 * `series`: [{key, label, colour, scale ("y" or "y2"), format}]; `axes`: {y: format name,
 * y2?: format name}. `setData(t, columns)` takes the time column (unix s) and {key: column}.
 * A series added later (addSeries) rebuilds the chart. */
export class TimeChart extends Chart {
  constructor(el, { series = [], axes = { y: "count" }, fill = false, stepped = false } = {}) {
    super(el);
    this.axes = axes;
    this.fill = fill;
    this.stepped = stepped;
    this.series = [];
    this.t = [];
    this.columns = {};
    for (const s of series) this.series.push(s);
    this.build();
  }

  has(key) { return this.series.some((s) => s.key === key); }

  addSeries(s) {
    this.series.push(s);
    this.build();
  }

  build() {
    if (this.plot) this.plot.destroy();
    const axisOpts = (scale, side) => {
      const fmt = FORMATS[this.axes[scale]] || fmtCount;
      return { scale, side, size: scale === "y2" ? 78 : 64, values: axisValues(fmt),
        incrs: INCRS[this.axes[scale]], grid: { show: side === 3, stroke: "#eef0f3" },
        stroke: "#64748b", ticks: { stroke: "#e2e8f0" } };
    };
    const opts = {
      width: widthOf(this.el),
      height: HEIGHT,
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ stroke: "#64748b", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e2e8f0" } },
        axisOpts("y", 3)],
      // Without a cursor on the chart, the legend shows the latest values.
      series: [{ label: "time", value: (u, v, si, idx) => fmtClock(idx == null ? lastValue(u.data[0]) : v) }],
    };
    if (this.axes.y2) {
      opts.scales.y2 = { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] };
      opts.axes.push(axisOpts("y2", 1));
    }
    const paths = this.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
    for (const s of this.series) {
      const fmt = FORMATS[s.format || this.axes[s.scale || "y"]] || fmtCount;
      opts.series.push({
        label: s.label,
        scale: s.scale || "y",
        stroke: s.colour,
        width: 1.5,
        dash: s.dash,
        fill: this.fill ? `${s.colour}1f` : undefined,
        paths,
        spanGaps: false,
        points: { show: false },
        value: (u, v, si, idx) => fmt(idx == null ? lastValue(u.data[si]) : v),
      });
    }
    this.plot = new uPlot(opts, this.data(), this.el);
  }

  data() {
    return [this.t, ...this.series.map((s) => this.columns[s.key] || this.t.map(() => null))];
  }

  /** Replace the data: `t` the times (unix s), `columns` {series key: values}. */
  setData(t, columns) {
    this.t = t;
    this.columns = columns;
    this.plot.setData(this.data());
    this.el.dataset.points = String(t.length);
    // the values drawn (not null), all series together: what a test reads
    let values = 0;
    for (const s of this.series) for (const v of this.columns[s.key] || []) if (v != null) values += 1;
    this.el.dataset.values = String(values);
  }

}

/** The latency distribution: two bar series per bucket (the last minute and the whole
 * crawl), each as a share of its responses. */
export class LatencyChart extends Chart {
  constructor(el) {
    super(el);
    this.labels = [];
    this.build([]);
  }

  build(labels) {
    if (this.plot) this.plot.destroy();
    this.labels = labels;
    const bars = (align) => uPlot.paths.bars({ size: [0.4, 60], align });
    const pct = (u, v, si, idx) => (idx == null ? "" : v == null ? "–" : `${v.toFixed(1)} %`);
    const opts = {
      width: widthOf(this.el),
      height: HEIGHT,
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { live: true },
      scales: {
        x: { time: false, range: (u, min, max) => [-0.6, Math.max(0, this.labels.length - 1) + 0.6] },
        y: { range: (u, min, max) => [0, Math.max(10, Math.ceil((max || 0) / 10) * 10)] },
      },
      axes: [
        { stroke: "#64748b", grid: { show: false }, ticks: { stroke: "#e2e8f0" },
          splits: () => this.labels.map((_, i) => i),
          values: (u, splits) => splits.map((i) => this.labels[i] ?? "") },
        { stroke: "#64748b", size: 48, grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e2e8f0" },
          values: (u, splits) => splits.map((v) => `${v} %`) },
      ],
      series: [
        { label: "latency", value: (u, i) => {
          const label = i == null ? null : this.labels[i];
          return label == null ? "" : label.startsWith(">") ? label : `≤ ${label}`;
        } },
        { label: "last minute", stroke: "#2563eb", fill: "#2563eb99", width: 1, paths: bars(-1), points: { show: false }, value: pct },
        { label: "whole crawl", stroke: "#94a3b8", fill: "#94a3b866", width: 1, paths: bars(1), points: { show: false }, value: pct },
      ],
    };
    this.plot = new uPlot(opts, this.empty(), this.el);
  }

  empty() {
    return [this.labels.map((_, i) => i), this.labels.map(() => null), this.labels.map(() => null)];
  }

  /** `recent`, `whole`: {bounds: [s...], counts: [...]} (derive.latencyBuckets). Only
   * the buckets from the first to the last one holding a response are drawn, each
   * labelled with its upper bound. */
  update(recent, whole) {
    const src = whole || recent;
    if (!src) return;
    const used = src.counts.map((c, i) => (c > 0 || (recent && recent.counts[i] > 0) ? i : -1)).filter((i) => i >= 0);
    const lo = used.length ? used[0] : 0;
    const hi = used.length ? used[used.length - 1] : src.counts.length - 1;
    const cut = (b) => (b ? { bounds: b.bounds.slice(lo, hi + 1), counts: b.counts.slice(lo, hi + 1) } : b);
    [recent, whole] = [cut(recent), cut(whole)];
    const bounds = src.bounds.slice(lo, hi + 1);
    const labels = bounds.map((b, i) =>
      (b === Infinity ? `> ${fmtSeconds(src.bounds[lo + i - 1] ?? 0)}` : fmtSeconds(b)));
    if (labels.join("|") !== this.labels.join("|")) this.build(labels);
    // Shares of all the responses of each reading (the cut buckets held none).
    const totals = [recent, whole].map((b) => (b ? b.counts.reduce((x, y) => x + y, 0) : 0));
    const share = (b, n) => (b ? b.counts.map((c) => (n ? (100 * c) / n : null)) : labels.map(() => null));
    this.plot.setData([labels.map((_, i) => i), share(recent, totals[0]), share(whole, totals[1])]);
  }

}

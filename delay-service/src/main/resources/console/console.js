// The kdelay console: a page over the admin API, nothing more. Every figure it shows comes from
// the API, asked with the token typed in (kept in sessionStorage, for this tab only). Data is put
// into the page as text, never as markup.
"use strict";

const TOKEN_KEY = "kdelay.token";
const REFRESH_MS = 5000;
let refreshTimer = null;

// ---- the API ----

class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.error ? body.error + ": " : "") + (body.message || "")) || "HTTP " + status);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) {
    headers.Authorization = "Bearer " + token;
  }
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    if (body !== undefined) {
      init.body = JSON.stringify(body);
    }
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch (e) {
    json = { message: text };
  }
  if (!response.ok) {
    throw new ApiError(response.status, json);
  }
  return json;
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") {
      search.set(name, value);
    }
  }
  const text = search.toString();
  return text ? "?" + text : "";
}

const segment = (text) => encodeURIComponent(text);

// A schedule's page: its id as its tenant sent it, and its tenant's name if it has one (a
// deployment with tenants keeps each tenant's ids apart; the API finds one with ?tenant=).
const scheduleHref = (id, tenant) => "#/schedule/" + segment(id) + query({ tenant });
const tenantOf = (params) => params.get("tenant") || "";

// ---- building the page ----

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (name.startsWith("on")) {
      node.addEventListener(name.substring(2), value);
    } else if (name === "class") {
      node.className = value;
    } else {
      node.setAttribute(name, value === true ? "" : value);
    }
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null && child !== false) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function show(...nodes) {
  const page = document.getElementById("page");
  page.replaceChildren(...nodes.flat().filter((node) => node !== "" && node !== null && node !== undefined));
}

function notice(text, error) {
  const box = document.getElementById("notice");
  box.replaceChildren(text ? el("p", { class: error ? "error" : "", id: "notice-text" }, text) : "");
}

function failed(e) {
  if (e instanceof ApiError && e.status === 401) {
    notice("This needs a token: type one in at the top right. (" + e.message + ")", true);
  } else if (e instanceof ApiError && e.status === 403) {
    notice("Refused: " + e.message, true);
  } else {
    notice(e.message || String(e), true);
  }
}

function table(columns, rows, id) {
  columns = columns.filter(Boolean); // a column that does not apply is given as null
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { id },
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { class: c.narrow ? "hide-narrow" : "" }, c.title)))),
      el(
        "tbody",
        {},
        rows.length === 0
          ? el("tr", {}, el("td", { colspan: columns.length, class: "muted" }, "nothing"))
          : rows.map((row) =>
              el("tr", row.attributes || {}, columns.map((c) => el("td", { class: (c.mono ? "mono " : "") + (c.narrow ? "hide-narrow" : "") }, c.cell(row)))),
            ),
      ),
    ),
  );
}

function card(label, value, id) {
  return el("div", { class: "card" }, el("div", { class: "label" }, label), el("div", { class: "value", id }, value));
}

function field(label, input) {
  return [el("label", { for: input.id }, label), input];
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() + "" : "—");

function ago(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 1) return "none";
  if (seconds < 120) return Math.round(seconds) + " s";
  if (seconds < 7200) return Math.round(seconds / 60) + " min";
  return Math.round(seconds / 3600) + " h";
}

function bytesPreview(preview) {
  if (!preview) return el("span", { class: "muted" }, "none (tombstone)");
  if (preview.text !== undefined && preview.text !== null) {
    return el("pre", { class: "payload" }, preview.text + (preview.truncated ? "\n… (cut)" : ""));
  }
  if (preview.base64 !== undefined) {
    return el("pre", { class: "payload" }, hex(preview.base64) + (preview.truncated ? "\n… (cut)" : ""));
  }
  return el("span", { class: "muted" }, "none");
}

/** Base64 bytes as a hex dump, 16 bytes a line. */
function hex(base64) {
  const bytes = atob(base64);
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const chunk = bytes.substring(i, i + 16);
    const hexes = Array.from(chunk, (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(chunk, (c) => (c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127 ? c : ".")).join("");
    lines.push(i.toString(16).padStart(6, "0") + "  " + hexes.padEnd(48) + "  " + ascii);
  }
  return lines.join("\n");
}

function headersText(text) {
  const headers = {};
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const colon = trimmed.indexOf(":");
    if (colon < 1) throw new Error("a header line must be 'name: value', got '" + trimmed + "'");
    headers[trimmed.substring(0, colon).trim()] = trimmed.substring(colon + 1).trim();
  }
  return headers;
}

/** A datetime-local input's value as an ISO instant, or "" for none. */
function localToIso(value) {
  return value ? new Date(value).toISOString() : "";
}

// ---- overview ----

async function overview() {
  show(el("h2", {}, "Overview"), el("p", { class: "muted" }, "loading…"));
  const data = await api("GET", "/overview");
  const t = data.totals;
  const rejections = Object.entries(t.rejections || {});
  show(
    el("h2", {}, "Overview"),
    el(
      "div",
      { class: "cards" },
      card("Pending", t.pending + (t.complete ? "" : " (counting)"), "total-pending"),
      card("Paused", t.paused, "total-paused"),
      card("Next due", when(t.nextDueAt), "total-next-due"),
      card("Oldest overdue", ago(t.oldestOverdueSeconds), "total-overdue"),
      card("Rejected requests", rejections.reduce((sum, [, n]) => sum + n, 0), "total-rejected"),
    ),
    el("h3", {}, "Fires and lateness, this instance (" + data.instance + ")"),
    charts(data.history || [], data.historyIntervalSeconds),
    el("h3", {}, "Rejections by code"),
    table(
      [
        { title: "code", cell: (r) => el("a", { href: "#/dead-letters?code=" + encodeURIComponent(r[0]) }, r[0]), mono: true },
        { title: "requests", cell: (r) => r[1] },
      ],
      rejections,
      "rejections",
    ),
    el("h3", {}, "Instances"),
    table(
      [
        { title: "instance", cell: (i) => i.instance + (i.self ? " (this one)" : ""), mono: true },
        { title: "partitions", cell: (i) => (i.partitions || []).join(", ") || "—", mono: true },
        { title: "standby", cell: (i) => (i.standbyPartitions || []).join(", ") || "—", mono: true, narrow: true },
        { title: "pending", cell: (i) => (i.unreachable ? "unreachable: " + i.unreachable : i.pending ?? "counting") },
        { title: "paused", cell: (i) => i.paused ?? "—" },
        { title: "next due", cell: (i) => when(i.nextDueAt), narrow: true },
        { title: "oldest overdue", cell: (i) => ago(i.oldestOverdueSeconds), narrow: true },
      ],
      data.instances,
      "instances",
    ),
  );
  refreshTimer = setTimeout(() => route(), REFRESH_MS);
}

function charts(points, interval) {
  if (points.length === 0) {
    return el("p", { class: "muted", id: "charts" }, "No history yet: a point every " + (interval || 5) + " s.");
  }
  return el(
    "div",
    { class: "charts", id: "charts" },
    chart(
      "Fires per second",
      points,
      [
        { key: "firesPerSecond", color: "#1f6feb", label: "fired" },
        // Tasks fire-rate limits deferred to a later slot: they fire then, later than due.
        { key: "deferredPerSecond", color: "#a16207", label: "deferred" },
      ],
      "",
    ),
    chart(
      "Lateness, ms (bucket bounds)",
      points,
      [
        { key: "latenessP50Ms", color: "#1f6feb", label: "p50" },
        { key: "latenessP99Ms", color: "#c2410c", label: "p99" },
      ],
      " ms",
    ),
  );
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** A line chart of some series over time, as inline SVG. */
function chart(title, points, series, unit) {
  const width = 600, height = 180, left = 44, bottom = 22, top = 10, right = 8;
  const values = series.flatMap((s) => points.map((p) => p[s.key]).filter((v) => v !== null && v !== undefined));
  const max = Math.max(1, ...values) * 1.1;
  const first = points[0].atMs, last = points[points.length - 1].atMs;
  const x = (t) => left + ((t - first) / Math.max(1, last - first)) * (width - left - right);
  const y = (v) => top + (1 - v / max) * (height - top - bottom);
  const graph = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": title });
  for (const fraction of [0, 0.5, 1]) {
    const v = max * fraction;
    graph.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#e3e7ec" }));
    graph.append(svg("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#5d6775" }, round(v)));
  }
  graph.append(svg("text", { x: left, y: height - 6, "font-size": 11, fill: "#5d6775" }, new Date(first).toLocaleTimeString()));
  graph.append(svg("text", { x: width - right, y: height - 6, "text-anchor": "end", "font-size": 11, fill: "#5d6775" }, new Date(last).toLocaleTimeString()));
  for (const s of series) {
    let path = "";
    for (const p of points) {
      const v = p[s.key];
      if (v === null || v === undefined) {
        continue; // no fires in that interval: no lateness to draw
      }
      path += (path ? " L" : "M") + x(p.atMs).toFixed(1) + " " + y(v).toFixed(1);
    }
    if (path) graph.append(svg("path", { d: path, fill: "none", stroke: s.color, "stroke-width": 2 }));
  }
  const latest = points[points.length - 1];
  const legend = series.map((s) => el("span", { class: "legend-" + (s.label || "x") }, (s.label ? s.label + " " : "") + (latest[s.key] ?? "—") + unit + " "));
  return el("div", { class: "chart" }, el("div", { class: "title" }, title, " — now: ", legend), graph);
}

function round(v) {
  return v >= 10 ? Math.round(v) : Math.round(v * 10) / 10;
}

// ---- schedules ----

async function schedules(params) {
  const filters = {
    tenant: tenantOf(params),
    idPrefix: params.get("idPrefix") || "",
    topic: params.get("topic") || "",
    dueAfter: params.get("dueAfter") || "",
    dueBefore: params.get("dueBefore") || "",
  };
  const after = params.get("after") || "";
  const input = (name, label, type) =>
    el("label", {}, label, el("input", { id: "filter-" + name, name, type: type || "text", value: type === "datetime-local" ? isoToLocal(filters[name]) : filters[name] }));
  const form = el(
    "form",
    {
      class: "inline",
      id: "schedule-filters",
      onsubmit: (event) => {
        event.preventDefault();
        const next = {};
        for (const name of Object.keys(filters)) {
          const value = document.getElementById("filter-" + name).value;
          next[name] = name.startsWith("due") ? localToIso(value) : value.trim();
        }
        location.hash = "#/schedules" + query(next);
      },
    },
    input("tenant", "tenant"),
    input("idPrefix", "id starts with"),
    input("topic", "target topic"),
    input("dueAfter", "due from", "datetime-local"),
    input("dueBefore", "due before", "datetime-local"),
    el("button", { type: "submit", class: "primary", id: "filter-apply" }, "Search"),
  );
  show(el("h2", {}, "Schedules"), form, el("p", { class: "muted" }, "loading…"));
  const page = await api("GET", "/schedules" + query({ ...filters, after, limit: 50 }));
  const rows = page.tasks;
  const tenants = rows.some((t) => t.tenant);
  show(
    el("h2", {}, "Schedules"),
    form,
    el("p", { class: "muted" }, "Pending tasks in due order, all instances."),
    table(
      [
        tenants ? { title: "tenant", cell: (t) => t.tenant || "—", mono: true } : null,
        { title: "id", cell: (t) => el("a", { href: scheduleHref(t.tenantId ?? t.id, t.tenant), class: "schedule-link" }, t.tenantId ?? t.id), mono: true },
        { title: "due", cell: (t) => when(t.dueAt) },
        { title: "target topic", cell: (t) => t.target.topic, mono: true },
        { title: "kind", cell: (t) => (t.cron ? "cron " + t.cron.expression + " (" + t.cron.zone + ")" : "one-shot"), narrow: true },
        { title: "payload", cell: (t) => (t.payloadBytes === null ? "tombstone" : t.payloadBytes + " B"), narrow: true },
      ],
      rows.map((t) => ({ ...t, attributes: { "data-id": t.tenantId ?? t.id, "data-tenant": t.tenant || "" } })),
      "schedules",
    ),
    rows.length === 0 && page.next ? el("p", { class: "muted" }, "No match among the tasks read for this page; the next page reads on.") : "",
    page.unreadable ? el("p", { class: "error" }, page.unreadable.length + " unreadable task(s) left out: see the log") : "",
    el(
      "div",
      { class: "actions" },
      after ? el("a", { href: "#/schedules" + query(filters) }, "« first page") : "",
      page.next ? el("a", { href: "#/schedules" + query({ ...filters, after: page.next }), id: "next-page" }, "next page »") : "",
    ),
  );
}

function isoToLocal(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (isNaN(date)) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return local.toISOString().substring(0, 19);
}

async function schedule(id, tenant) {
  show(el("h2", {}, "Schedule ", el("span", { class: "mono" }, id)), el("p", { class: "muted" }, "loading…"));
  let view;
  try {
    view = await api("GET", "/schedules/" + segment(id) + query({ tenant }));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404 && e.body && e.body.status)) throw e;
    view = e.body;
  }
  const target = view.target || {};
  const details = el(
    "dl",
    { class: "kv", id: "schedule-detail" },
    tenant ? [el("dt", {}, "tenant"), el("dd", { id: "schedule-tenant", class: "mono" }, tenant)] : [],
    el("dt", {}, "status"),
    el("dd", { id: "schedule-status", class: "status-" + view.status }, view.status),
    el("dt", {}, "next due"),
    el("dd", { id: "schedule-next-due" }, when(view.nextDueAt)),
    view.message ? [el("dt", {}, "note"), el("dd", {}, view.message)] : [],
    el("dt", {}, "target"),
    el("dd", { class: "mono" }, target.topic ? target.topic + " key=" + target.key + (target.partition !== null ? " partition=" + target.partition : "") : "—"),
    el("dt", {}, "occurrence"),
    el("dd", {}, view.occurrence ?? "—"),
    el("dt", {}, "kind"),
    el("dd", { class: "mono" }, view.cron ? view.cron.expression + " (" + view.cron.cronType + ", " + view.cron.zone + ", misfire " + view.cron.misfire + ")" : view.status === "unknown" ? "—" : "one-shot"),
    el("dt", {}, "held by"),
    el("dd", { class: "mono" }, view.instance ? view.instance + ", partition " + view.partition : "—"),
  );
  const headers = Object.entries(view.headers || {});
  const reschedule = el(
    "form",
    {
      class: "inline",
      id: "reschedule-form",
      onsubmit: (event) => {
        event.preventDefault();
        const kind = document.getElementById("reschedule-kind").value;
        const value = document.getElementById("reschedule-value").value.trim();
        const body = {};
        // A date-time without a zone is the browser's local time; an instant, an offset or epoch ms
        // go as they are.
        const zoned = /^\d+$/.test(value) || /[zZ]$|[+-]\d\d:?\d\d$/.test(value);
        try {
          body[kind] = kind === "fireAt" && !zoned ? localToIso(value) : value;
        } catch (e) {
          notice("not a date-time: " + value, true);
          return;
        }
        action(id, tenant, "reschedule", body);
      },
    },
    el("label", {}, "move to", el("select", { id: "reschedule-kind" }, el("option", { value: "after" }, "after (PT10M, ms)"), el("option", { value: "fireAt" }, "at (ISO-8601)"), el("option", { value: "cron" }, "cron"))),
    el("label", {}, "value", el("input", { id: "reschedule-value", placeholder: "PT10M" })),
    el("button", { type: "submit", id: "action-reschedule" }, "Reschedule"),
  );
  show(
    el("h2", {}, "Schedule ", el("span", { class: "mono", id: "schedule-id" }, id)),
    el(
      "div",
      { class: "actions" },
      el("button", { id: "action-trigger", class: "primary", onclick: () => action(id, tenant, "trigger") }, "Trigger now"),
      el("button", { id: "action-pause", onclick: () => action(id, tenant, "pause") }, "Pause"),
      el("button", { id: "action-resume", onclick: () => action(id, tenant, "resume") }, "Resume"),
      el("button", { id: "action-cancel", class: "danger", onclick: () => confirm("Cancel " + id + "?") && action(id, tenant, "cancel") }, "Cancel"),
      el("button", { id: "action-refresh", onclick: () => route() }, "Refresh"),
    ),
    details,
    reschedule,
    el("h3", {}, "Headers carried"),
    headers.length || view.headers ? table([{ title: "name", cell: (h) => h[0], mono: true }, { title: "value", cell: (h) => bytesPreview(h[1]), mono: true }], headers, "schedule-headers") : el("p", { class: "muted" }, view.carriedHeaders !== undefined ? view.carriedHeaders + " header(s)" : "—"),
    el("h3", {}, "Payload" + (view.payloadBytes !== undefined && view.payloadBytes !== null ? " (" + view.payloadBytes + " bytes)" : "")),
    view.payload !== undefined ? bytesPreview(view.payload) : el("p", { class: "muted" }, view.payloadBytes === null ? "none (tombstone)" : "—"),
    view.cron ? [el("h3", {}, "Next occurrences"), el("div", { id: "cron-next" }, "…")] : "",
  );
  if (view.cron) {
    occurrences(view.cron.expression, view.cron.cronType, view.cron.zone, document.getElementById("cron-next"));
  }
}

async function action(id, tenant, name, body) {
  try {
    const path = "/schedules/" + segment(id) + (name === "cancel" ? "" : "/" + name) + query({ tenant });
    const answer = await api(name === "cancel" ? "DELETE" : "POST", path, body);
    notice(name + " of " + id + " accepted (request topic partition " + answer.partition + ", offset " + answer.offset + "); it applies in a moment: Refresh to see it.");
  } catch (e) {
    failed(e);
  }
}

// ---- next occurrences of a cron expression ----

const TRANSITIONS = {
  "in-gap": "moved: this local time is skipped when the clocks go forward",
  "in-overlap-first": "local time happens twice (clocks go back): the first",
  "in-overlap-second": "local time happens twice (clocks go back): the second",
  "after-spring-forward": "after the clocks went forward",
  "after-fall-back": "after the clocks went back",
};

let previewSequence = 0;

async function occurrences(cron, cronType, zone, into) {
  // Answers may come back out of order while an expression is typed: only the latest is shown.
  const sequence = ++previewSequence;
  into.setAttribute("data-state", "loading");
  if (!cron) {
    into.replaceChildren();
    into.setAttribute("data-state", "ready");
    return;
  }
  into.replaceChildren(el("p", { class: "muted" }, "…"));
  try {
    const preview = await api("GET", "/cron/preview" + query({ cron, cronType, zone, count: 10 }));
    if (sequence !== previewSequence) return;
    into.replaceChildren(
      el(
        "ol",
        { class: "occurrences mono" },
        preview.occurrences.map((o) => el("li", {}, o.local.replace("T", " ") + " " + o.offset + " (" + o.at + ")", o.transition ? el("span", { class: "dst" }, " — " + TRANSITIONS[o.transition]) : "")),
      ),
      preview.occurrences.length === 0 ? el("p", { class: "muted" }, "no occurrence within the horizon") : "",
    );
  } catch (e) {
    if (sequence !== previewSequence) return;
    into.replaceChildren(el("p", { class: "error cron-error" }, e.message));
  }
  into.setAttribute("data-state", "ready");
}

// ---- create ----

function create() {
  const text = (id, attributes) => el("input", { id, name: id, ...attributes });
  const preview = el("div", { id: "cron-preview", class: "full" });
  let pending = null;
  const timing = el(
    "select",
    {
      id: "timing",
      onchange: () => {
        const kind = document.getElementById("timing").value;
        for (const row of document.querySelectorAll("[data-timing]")) {
          row.hidden = row.getAttribute("data-timing") !== kind;
        }
        updatePreview();
      },
    },
    el("option", { value: "after" }, "after a delay"),
    el("option", { value: "fireAt" }, "at a time"),
    el("option", { value: "cron" }, "recurring (cron)"),
  );
  const updatePreview = () => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      const kind = document.getElementById("timing").value;
      occurrences(kind === "cron" ? document.getElementById("cron").value.trim() : "", document.getElementById("cronType").value, document.getElementById("zone").value.trim() || "UTC", preview);
    }, 300);
  };
  const row = (kind, label, input) => [el("label", { for: input.id, "data-timing": kind, hidden: kind !== "after" }, label), el("div", { "data-timing": kind, hidden: kind !== "after" }, input)];
  const form = el(
    "form",
    { class: "grid", id: "create-form", onsubmit: submit },
    field("Tenant", text("tenant", { placeholder: "none: the shared namespace (a tenant's token: its own)" })),
    field("Id", text("id", { required: true, placeholder: "order-42-timeout" })),
    field("Target topic", text("targetTopic", { required: true })),
    field("Target key", text("targetKey", { placeholder: "default: the id" })),
    field("When", timing),
    row("after", "Delay", text("after", { placeholder: "PT15M or milliseconds", value: "PT1M" })),
    row("fireAt", "Fire at", text("fireAt", { type: "datetime-local", step: 1 })),
    row("cron", "Cron", text("cron", { placeholder: "0 0 9 * * ?", oninput: () => updatePreview() })),
    row("cron", "Cron type", el("select", { id: "cronType", onchange: () => updatePreview() }, el("option", { value: "quartz" }, "quartz (with seconds)"), el("option", { value: "unix" }, "unix (5 fields)"), el("option", { value: "spring" }, "spring"))),
    row("cron", "Zone", text("zone", { placeholder: "UTC", value: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC", oninput: () => updatePreview() })),
    el("div", { class: "full", "data-timing": "cron", hidden: true }, el("span", { class: "muted" }, "Next occurrences:"), preview),
    field("Payload (text)", el("textarea", { id: "payload" })),
    field("Headers", el("textarea", { id: "headers", placeholder: "name: value, one a line" })),
    el("div", { class: "full" }, el("button", { type: "submit", class: "primary", id: "create-submit" }, "Schedule")),
  );
  async function submit(event) {
    event.preventDefault();
    const value = (id) => document.getElementById(id).value.trim();
    try {
      const body = { id: value("id"), targetTopic: value("targetTopic"), payload: document.getElementById("payload").value };
      if (value("targetKey")) body.targetKey = value("targetKey");
      const kind = value("timing");
      if (kind === "after") body.after = value("after");
      if (kind === "fireAt") body.fireAt = localToIso(value("fireAt"));
      if (kind === "cron") {
        body.cron = value("cron");
        body.cronType = value("cronType");
        body.zone = value("zone") || "UTC";
      }
      const headers = headersText(document.getElementById("headers").value);
      if (Object.keys(headers).length) body.headers = headers;
      const answer = await api("POST", "/schedules" + query({ tenant: value("tenant") }), body);
      notice("Scheduled " + answer.id + " (request topic partition " + answer.partition + ", offset " + answer.offset + ").");
      location.hash = scheduleHref(answer.id, answer.tenant);
    } catch (e) {
      failed(e);
    }
  }
  show(el("h2", {}, "New schedule"), form);
}

// ---- dead letters ----

async function deadLetters(params) {
  const code = params.get("code") || "";
  const tenant = tenantOf(params);
  const after = params.get("after") || "";
  const form = el(
    "form",
    {
      class: "inline",
      id: "dead-letter-filters",
      onsubmit: (event) => {
        event.preventDefault();
        location.hash = "#/dead-letters" + query({ tenant: document.getElementById("filter-dl-tenant").value.trim(), code: document.getElementById("filter-code").value.trim(), id: document.getElementById("filter-dl-id").value.trim() });
      },
    },
    el("label", {}, "tenant", el("input", { id: "filter-dl-tenant", value: tenant })),
    el("label", {}, "code", el("input", { id: "filter-code", value: code, placeholder: "UNKNOWN_TOPIC" })),
    el("label", {}, "schedule id", el("input", { id: "filter-dl-id", value: params.get("id") || "" })),
    el("button", { type: "submit", class: "primary" }, "Search"),
  );
  show(el("h2", {}, "Dead letters"), form, el("p", { class: "muted" }, "loading…"));
  const page = await api("GET", "/dead-letters" + query({ tenant, code, id: params.get("id"), after, limit: 50 }));
  show(
    el("h2", {}, "Dead letters"),
    form,
    el("p", { class: "muted" }, "Rejected requests and undeliverable tasks on " + page.topic + ", oldest first."),
    el("div", { id: "dead-letters" }, page.deadLetters.length === 0 ? el("p", { class: "muted" }, "none") : page.deadLetters.map((d) => letter(d, tenant))),
    el("div", { class: "actions" }, page.next ? el("a", { href: "#/dead-letters" + query({ tenant, code, id: params.get("id"), after: page.next }) }, "next page »") : ""),
  );
}

function letter(d, tenant) {
  const key = d.partition + "-" + d.offset;
  const target = (d.headers["delay-target-topic"] || {}).text || "";
  const replay = el(
    "form",
    {
      class: "inline replay-form",
      "data-letter": key,
      onsubmit: async (event) => {
        event.preventDefault();
        const body = {};
        const topic = document.getElementById("replay-topic-" + key).value.trim();
        const kind = document.getElementById("replay-kind-" + key).value;
        const time = document.getElementById("replay-time-" + key).value.trim();
        if (topic && topic !== target) body.targetTopic = topic;
        if (time) body[kind] = time;
        try {
          const answer = await api("POST", "/dead-letters/" + d.partition + "/" + d.offset + "/replay" + query({ tenant }), body);
          notice("Replayed " + answer.id + " (request topic partition " + answer.partition + ", offset " + answer.offset + ").");
        } catch (e) {
          failed(e);
        }
      },
    },
    el("label", {}, "target topic", el("input", { id: "replay-topic-" + key, value: target })),
    el("label", {}, "time", el("select", { id: "replay-kind-" + key }, el("option", { value: "after" }, "after"), el("option", { value: "fireAt" }, "at (ISO-8601)"))),
    el("label", {}, "value (empty: as it was)", el("input", { id: "replay-time-" + key, placeholder: "PT0S" })),
    el("button", { type: "submit", id: "replay-" + key }, "Replay"),
  );
  return el(
    "div",
    { class: "card dead-letter", "data-id": d.id || "", "data-letter": key },
    el("div", {}, el("strong", { class: "mono" }, d.code || "?"), " ", el("span", { class: "mono" }, d.id || "(no id)"), " ", el("span", { class: "muted" }, when(d.timestamp) + " · partition " + d.partition + " offset " + d.offset)),
    el("p", { class: "message" }, d.message || ""),
    d.omitted ? el("p", { class: "muted" }, d.omitted) : "",
    el("details", {}, el("summary", {}, "payload" + (d.payloadBytes !== null ? " (" + d.payloadBytes + " bytes)" : "") + " and headers"), bytesPreview(d.payload), table([{ title: "header", cell: (h) => h[0], mono: true }, { title: "value", cell: (h) => bytesPreview(h[1]), mono: true }], Object.entries(d.headers || {}))),
    d.id ? replay : el("p", { class: "muted" }, "no schedule id: cannot be replayed"),
  );
}

// ---- routing ----

const pages = [
  [/^#\/schedules(\?.*)?$/, (m) => schedules(new URLSearchParams(m[1] || "")), "nav-schedules"],
  [/^#\/schedule\/([^?]+)(\?.*)?$/, (m) => schedule(decodeURIComponent(m[1]), tenantOf(new URLSearchParams(m[2] || ""))), "nav-schedules"],
  [/^#\/create$/, () => create(), "nav-create"],
  [/^#\/dead-letters(\?.*)?$/, (m) => deadLetters(new URLSearchParams(m[1] || "")), "nav-dead-letters"],
  [/^.*$/, () => overview(), "nav-overview"],
];

async function route() {
  clearTimeout(refreshTimer);
  const hash = location.hash || "#/overview";
  for (const [pattern, render, nav] of pages) {
    const match = hash.match(pattern);
    if (match) {
      for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.id === nav);
      // Says when the page has its data, for whoever waits on it (the browser test does).
      const page = document.getElementById("page");
      page.setAttribute("data-state", "loading");
      try {
        await render(match);
      } catch (e) {
        failed(e);
      }
      page.setAttribute("data-state", "ready");
      return;
    }
  }
}

window.addEventListener("hashchange", () => route());

document.addEventListener("DOMContentLoaded", () => {
  const input = document.getElementById("token");
  input.value = sessionStorage.getItem(TOKEN_KEY) || "";
  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    notice(token ? "Token kept for this tab." : "No token.");
    route();
  });
  document.getElementById("token-clear").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    input.value = "";
    notice("Token forgotten.");
    route();
  });
  route();
});

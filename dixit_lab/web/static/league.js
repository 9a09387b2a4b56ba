// The league page: the leaderboard of a league folder (GET /api/leaderboard), each rating
// with its 95% interval drawn on one axis for every row, so that overlaps show at a glance.
"use strict";

const $ = (id) => document.getElementById(id);

function signed(value) {
  return value === null ? "" : (value >= 0 ? "+" : "−") + Math.abs(value).toFixed(3);
}

// An SVG bar of the interval with a dot at the estimate, on the axis [low, high].
function intervalBar(row, low, high) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 300 16");
  svg.setAttribute("class", "interval");
  svg.setAttribute("role", "img");
  const x = (v) => 4 + 292 * (v - low) / (high - low);
  const zero = document.createElementNS(ns, "line");
  for (const [k, v] of [["x1", x(0)], ["x2", x(0)], ["y1", 0], ["y2", 16]]) zero.setAttribute(k, v);
  zero.setAttribute("class", "zero");
  svg.append(zero);
  if (row.strength === null) return svg;
  if (row.ci_low !== null && row.ci_high !== null) {
    const bar = document.createElementNS(ns, "line");
    for (const [k, v] of [["x1", x(row.ci_low)], ["x2", x(row.ci_high)], ["y1", 8], ["y2", 8]]) {
      bar.setAttribute(k, v);
    }
    bar.setAttribute("class", "bar");
    svg.append(bar);
  }
  const dot = document.createElementNS(ns, "circle");
  dot.setAttribute("cx", x(row.strength));
  dot.setAttribute("cy", 8);
  dot.setAttribute("r", 4);
  dot.setAttribute("class", row.kind.startsWith("entrant") ? "entrant" : "member");
  svg.append(dot);
  svg.setAttribute("aria-label", `${row.player}: ${signed(row.strength)}, from ` +
                   `${signed(row.ci_low)} to ${signed(row.ci_high)}`);
  return svg;
}

async function start() {
  let data;
  try {
    const response = await fetch("/api/leaderboard");
    data = await response.json();
    if (!response.ok) throw new Error(data.error || response.statusText);
  } catch (error) {
    $("alert").textContent = `The leaderboard could not be read: ${error.message}`;
    return;
  }
  const pool = data.pool;
  $("where").textContent = `${data.folder}: reference pool ${pool.version}`;
  $("scale").textContent = `Rules ${pool.rules}, deck ${pool.deck}, ${pool.table_size} ` +
    `players a table. Strengths are Bradley–Terry log-strengths on the pool's scale (its ` +
    `median member at 0, its members held at their shipped values): a difference d means ` +
    `finishing above with probability 1 / (1 + e^−d). Entrants played the pool on sealed deals.`;
  const values = data.rows.flatMap((r) => [r.ci_low, r.ci_high, r.strength])
    .filter((v) => v !== null);
  const low = Math.min(0, ...values) - 0.1;
  const high = Math.max(0, ...values) + 0.1;
  $("axis").textContent = `on the pool's scale, ${signed(low)} to ${signed(high)} (the ` +
    `line: 0, the median member)`;
  const body = $("board").querySelector("tbody");
  for (const row of data.rows) {
    const interval = row.ci_low === null ? "" : `[${signed(row.ci_low)}, ${signed(row.ci_high)}]`;
    const faults = row.kind.startsWith("entrant") ? `${(100 * row.fault_share).toFixed(1)}%` : "";
    body.append(el("tr", {class: row.kind.startsWith("entrant") ? "entrant" : "member"},
      el("td", {class: "num"}, row.rank), el("th", {scope: "row", title: row.spec}, row.player),
      el("td", {}, row.kind), el("td", {class: "num"}, signed(row.strength)),
      el("td", {}, interval), el("td", {class: "wide"}, intervalBar(row, low, high)),
      el("td", {class: "num"}, row.games), el("td", {}, row.stopped), el("td", {class: "num"}, faults)));
  }
}

start();

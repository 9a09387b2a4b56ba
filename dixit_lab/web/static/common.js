// dixit-lab pages: helpers shared by the play page and the viewer. Plain JS, no build step.
"use strict";

// el("div", {class: "x", onclick: f}, child, "text", ...): a DOM element.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The picture of a card: its image, or its id for a deck without images.
function cardPicture(card, lazy) {
  if (card.image) {
    return el("img", {src: card.image, alt: card.alt, loading: lazy ? "lazy" : null,
                      width: 350, height: 350});
  }
  return el("span", {class: "noimage", role: "img", "aria-label": card.alt}, card.id);
}

// A card as a toggle button (selectable) or a figure (display only).
// opts: {label: Node|string, pressed: bool, disabled: bool, onclick, classes, aria, lazy}
function cardView(card, opts) {
  opts = opts || {};
  const label = opts.label ? el("span", {class: "label"}, opts.label) : null;
  const classes = ["card", ...(opts.classes || [])].join(" ");
  if (!opts.onclick) {
    return el("figure", {class: classes, "data-card": card.card}, cardPicture(card, opts.lazy),
              label ? el("figcaption", {}, label) : null);
  }
  return el("button", {
    type: "button", class: classes, "data-card": card.card,
    "aria-pressed": opts.pressed ? "true" : "false", disabled: opts.disabled,
    "aria-label": opts.aria || card.alt, onclick: opts.onclick,
  }, cardPicture(card), label);
}

// A score table with a track per player: rows of [name, score, points?, tags].
function scoreTable(players, scores, options) {
  options = options || {};
  const top = Math.max(options.target || 0, ...scores, 1);
  const head = el("tr", {}, el("th", {scope: "col"}, "Player"),
                  options.points ? el("th", {scope: "col", class: "num"}, "Round") : null,
                  el("th", {scope: "col", class: "num"}, "Score"),
                  el("th", {scope: "col"}, options.target ? `Track to ${options.target}` : "Track"));
  const rows = players.map((name, seat) => el("tr", {},
    el("th", {scope: "row"}, name, " ", ...(options.tags ? options.tags(seat) : [])),
    options.points ? el("td", {class: "num"}, signed(options.points[seat])) : null,
    el("td", {class: "num"}, scores[seat]),
    el("td", {}, el("div", {class: "track", role: "img",
                            "aria-label": `${name}: ${scores[seat]} points`},
                    bar(Math.min(100, 100 * scores[seat] / top))))));
  return el("table", {class: "scores"}, el("thead", {}, head), el("tbody", {}, rows));
}

// A track's filled part (its width set through the CSSOM: the pages' CSP forbids inline styles).
function bar(percent) {
  const span = el("span");
  span.style.width = `${percent}%`;
  return span;
}

function signed(value) { return value > 0 ? `+${value}` : String(value); }

// The reveal of a round: each displayed card with its owner, its voters and the storyteller's
// card marked; then the round's points and the totals.
function revealView(round, players, youSeat, target, lazy) {
  const voters = round.display.map(() => []);
  round.votes.forEach((vote, seat) => { if (vote !== null) voters[vote].push(players[seat]); });
  const cards = round.display.map((card, position) => {
    const owner = round.card_owner[position];
    const teller = owner === round.storyteller;
    const label = el("span", {},
      el("b", {}, `${position + 1}. ${players[owner]}`),
      teller ? el("span", {class: "tag teller"}, "storyteller") : null,
      owner === youSeat ? el("span", {class: "tag you"}, "you") : null,
      el("br"), voters[position].length ? `votes: ${voters[position].join(", ")}` : "no votes");
    return cardView(card, {label, lazy, classes: teller ? ["teller"] : []});
  });
  const found = round.finders.length;
  const listeners = players.length - 1;
  const outcome = found === 0 ? "No one found the storyteller's card."
    : found === listeners ? "Everyone found the storyteller's card."
    : `${found} of ${listeners} found the storyteller's card.`;
  return el("div", {class: "reveal"},
    el("p", {class: "clue"}, `${players[round.storyteller]} told `, el("q", {}, round.clue),
       ". ", outcome),
    el("div", {class: "cards"}, cards),
    scoreTable(players, round.scores, {points: round.points, target,
                                       tags: (seat) => seat === youSeat
                                         ? [el("span", {class: "tag you"}, "you")] : []}));
}

async function getJSON(url) {
  const response = await fetch(url, {cache: "no-store"});
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response.json();
}

// The play page: a client of GET/POST /api/play/TOKEN. It shows what the server says this
// seat may see, and sends the seat's moves; the server checks every move against the rules.
"use strict";

const token = decodeURIComponent(location.pathname.split("/").pop());
const api = `/api/play/${encodeURIComponent(token)}`;
const $ = (id) => document.getElementById(id);
const seenKey = `dixit-lab:${token}:seen`;

let view = null;          // the latest view from the server
let selected = [];        // chosen hand cards (tell, submit) or [display position] (vote)
let actionKey = null;     // what the action panels were last drawn for
let historyDrawn = -1;
let acknowledged = sessionStorage.getItem(seenKey);  // "game:round" of the last reveal read
let sending = false;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const roundKey = (round) => (round ? `${round.game}:${round.round}` : null);
const names = (list) => list.length <= 1 ? list.join("")
  : `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;

async function poll() {
  let after = null;
  for (;;) {
    let response;
    try {
      response = await fetch(after === null ? api : `${api}?after=${after}`, {cache: "no-store"});
    } catch (error) {
      setAlert("Connection lost; retrying…");
      await sleep(2000);
      continue;
    }
    if (response.status === 404) {
      setStatus("This seat's link is not valid (unknown token).", false);
      return;
    }
    if (!response.ok) {
      setAlert(`The server answered ${response.status}; retrying…`);
      await sleep(2000);
      continue;
    }
    const next = await response.json();
    if ($("alert").dataset.kind === "connection") setAlert("");
    show(next);
    after = next.version;
    if (next.phase === "over") return;
  }
}

function setAlert(text, kind) {
  $("alert").textContent = text;
  $("alert").dataset.kind = text ? (kind || "connection") : "";
}

function setStatus(text, thinking, turn) {
  const status = $("status");
  const words = el("span", {}, text);
  status.replaceChildren(...(thinking ? [el("span", {class: "spinner", "aria-hidden": "true"}),
                                         words] : [words]));
  status.classList.toggle("turn", Boolean(turn));
  status.setAttribute("aria-busy", thinking ? "true" : "false");
}

function show(next) {
  if (!view) performance.mark("dixit-lab:first-view");  // for benchmarks/bench_web.py
  view = next;
  const players = next.players;
  // games by their number in the results (from 0, as the viewer and show name them),
  // rounds counted from 1
  const game = next.games > 1 ? `Game ${next.game} of games 0–${next.games - 1} · ` : "";
  $("where").textContent = `${game}Round ${next.round + 1} · playing as ${next.name}`;
  const last = next.last_round;
  const revealing = Boolean(last) && roundKey(last) !== acknowledged;
  const revealKey = `${roundKey(last)}:${next.finished.length}`;  // redrawn when it ends a game
  if (revealing && $("reveal").dataset.round !== revealKey) drawReveal(last, revealKey);
  $("reveal").classList.toggle("hidden", !revealing);
  const over = next.phase === "over" && !revealing;
  $("over").classList.toggle("hidden", !over);
  if (over) drawOver(next);
  $("hand-panel").classList.toggle("hidden", revealing || over);
  $("table").classList.toggle("hidden", revealing || over || !(next.clue || next.display.length));
  const key = [next.game, next.round, next.phase, revealing,
               next.hand.map((c) => c.card).join(","), next.display.map((c) => c.card).join(",")]
    .join("|");
  if (key !== actionKey) {
    actionKey = key;
    selected = [];
    drawAction(next, revealing);
  }
  drawStatus(next, revealing);
  $("scores-panel").classList.toggle("hidden", over);
  $("scores").replaceChildren(scoreTable(players, next.scores, {
    target: next.target_score, tags: (seat) => [
      seat === next.storyteller ? el("span", {class: "tag teller"}, "storyteller") : null,
      seat === next.seat ? el("span", {class: "tag you"}, "you") : null],
  }));
  if (next.history.length !== historyDrawn) {
    historyDrawn = next.history.length;
    $("history").replaceChildren(...next.history.slice().reverse().map((round) => el("div", {},
      el("h3", {}, `Round ${round.round + 1}`),
      revealView(round, players, next.seat, next.target_score, true))));
  }
}

function drawReveal(round, key) {
  const box = $("reveal");
  const again = box.dataset.round?.startsWith(`${roundKey(round)}:`);
  box.dataset.round = key;
  const ended = view.finished.find((g) => g.game === round.game);  // the game's last round
  const players = ended ? ended.players : view.players;
  const game = view.games > 1 ? `Game ${round.game}, round` : "Round";
  $("reveal-title").textContent = `${game} ${round.round + 1} revealed`;
  const body = [revealView(round, players, players.indexOf(view.name), view.target_score)];
  if (ended) {
    const winners = names(ended.winners.map((seat) => ended.players[seat]));
    body.push(el("p", {class: "clue"}, `That was the last round: ${winners} `
                 + `${ended.winners.length > 1 ? "share the victory" : "wins"}.`));
  }
  $("reveal-body").replaceChildren(...body);
  if (!again) box.focus();
}

function drawOver(next) {
  const games = next.finished.map((game) => {
    const winners = names(game.winners.map((seat) => game.players[seat]));
    return el("div", {},
      el("p", {class: "clue"}, next.games > 1 ? `Game ${game.game}: ` : "",
         `${winners} ${game.winners.length > 1 ? "share the victory" : "wins"}.`),
      scoreTable(game.players, game.final_scores, {
        target: next.target_score,
        tags: (seat) => [
          game.winners.includes(seat) ? el("span", {class: "tag teller"}, "winner") : null,
          game.players[seat] === next.name ? el("span", {class: "tag you"}, "you") : null],
      }));
  });
  if (next.error) games.push(el("p", {class: "alert"}, `The game stopped: ${next.error}`));
  else games.push(el("p", {class: "muted"}, "Every game is saved with the results of the run."));
  $("over-body").replaceChildren(...games);
}

function drawStatus(next, revealing) {
  if (revealing) return setStatus("A round has been revealed: read it, then continue.", false);
  const teller = next.storyteller === null ? "The storyteller" : next.players[next.storyteller];
  const cards = next.n_cards === 1 ? "a card" : `${next.n_cards} cards`;
  switch (next.phase) {
    case "tell": return setStatus("You are the storyteller: choose a card of your hand and "
                                  + "say a clue.", false, true);
    case "submit": return setStatus(`${teller} told “${next.clue}”. Choose ${cards} of your `
                                    + `hand that ${next.n_cards === 1 ? "fits" : "fit"} the `
                                    + "clue.", false, true);
    case "vote": return setStatus("Vote for the card you think is the storyteller's "
                                  + (next.own_card_votes ? "(your own may be voted for, but "
                                     + "it never finds the storyteller's card)."
                                     : "(not your own)."), false, true);
    case "over": return setStatus("The game is over.", false);
    case "wait":
      if (next.seat === null) return setStatus("You sit out this game: it goes on without you.",
                                               false);
      // falls through
    default: {
      const waiting = next.waiting_for;
      const verb = waiting.length === 1 ? "is" : "are";
      return setStatus(waiting.length ? `${names(waiting)} ${verb} thinking…` : "Waiting…",
                       waiting.length > 0);
    }
  }
}

function drawAction(next, revealing) {
  const phase = revealing ? "wait" : next.phase;
  $("tell-form").classList.toggle("hidden", phase !== "tell");
  $("submit-row").classList.toggle("hidden", phase !== "submit");
  $("vote-row").classList.toggle("hidden", phase !== "vote");
  $("clue-input").maxLength = next.clue_limit;
  $("clue").replaceChildren(next.clue
    ? el("span", {}, `${next.players[next.storyteller] || "The storyteller"} told `,
         el("q", {}, next.clue)) : "");
  const playedIds = next.played.map((c) => c.card);
  const choosing = phase === "tell" || phase === "submit";
  const limit = phase === "tell" ? 1 : next.n_cards;
  const hand = next.hand.map((card, i) => choosing
    ? cardView(card, {
        aria: `Card ${i + 1} of your hand: ${card.alt}`,
        onclick: (event) => toggleCard(event.currentTarget, card.card, limit),
      })
    : cardView(card, {}));
  const played = next.played.map((card) => cardView(card, {
    classes: ["mine"], label: phase === "wait" && next.storyteller === next.seat
      ? "your card (told)" : "your card (submitted)"}));
  $("hand").replaceChildren(...hand, ...played);
  const own = next.own_positions;
  const barred = (position) => next.barred_votes.includes(position);  // the server's rule
  const display = next.display.map((card, position) => phase === "vote"
    ? cardView(card, {
        label: own.includes(position) ? el("span", {}, el("b", {}, `${position + 1}.`), " yours")
          : el("b", {}, `${position + 1}.`),
        disabled: barred(position), classes: own.includes(position) ? ["mine"] : [],
        aria: barred(position) ? `Card ${position + 1}: your own card, you cannot vote for it`
          : own.includes(position) ? `Card ${position + 1}: your own card, ${card.alt}`
          : `Card ${position + 1}: ${card.alt}`,
        onclick: (event) => chooseVote(event.currentTarget, position),
      })
    : cardView(card, {label: el("b", {}, `${position + 1}.` + (own.includes(position)
        ? " yours" : "") + (next.vote === position ? " (your vote)" : "")),
        classes: own.includes(position) ? ["mine"] : []}));
  $("display").replaceChildren(...display);
  if (playedIds.length && phase === "wait") $("hand").setAttribute("aria-describedby", "status");
  updateButtons();
  if (phase === "tell" || phase === "submit") $("hand").querySelector("button")?.focus();
  if (phase === "vote") $("display").querySelector("button:not(:disabled)")?.focus();
}

function toggleCard(button, card, limit) {
  if (selected.includes(card)) selected = selected.filter((c) => c !== card);
  else if (limit === 1) selected = [card];
  else if (selected.length < limit) selected = [...selected, card];
  for (const other of $("hand").querySelectorAll("button.card")) {
    other.setAttribute("aria-pressed", selected.includes(Number(other.dataset.card)));
  }
  updateButtons();
  if (view.phase === "tell" && selected.length) $("clue-input").focus();
  if (view.phase === "submit" && selected.length === limit) $("submit").focus();
}

function chooseVote(button, position) {
  selected = [position];
  for (const other of $("display").querySelectorAll("button.card")) {
    other.setAttribute("aria-pressed", other === button);
  }
  updateButtons();
  $("vote").focus();
}

function updateButtons() {
  if (!view) return;
  const clue = $("clue-input").value.trim();
  $("tell").disabled = sending || selected.length !== 1 || !clue;
  const n = view.n_cards;
  $("submit").disabled = sending || selected.length !== n;
  $("submit").textContent = selected.length === n
    ? `Submit ${n === 1 ? "this card" : "these cards"}` : `Choose ${n === 1 ? "a card" : n + " cards"}`;
  $("vote").disabled = sending || selected.length !== 1;
  $("vote").textContent = selected.length ? `Vote for card ${selected[0] + 1}` : "Choose a card";
}

async function send(move) {
  sending = true;
  updateButtons();
  try {
    const response = await fetch(api, {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(move),
    });
    const answer = await response.json();
    if (!response.ok) {
      setAlert(answer.error || `The server answered ${response.status}`, "move");
      return;
    }
    setAlert("");
    if (move.tell) $("clue-input").value = "";
    show(answer);
  } catch (error) {
    setAlert(`Could not send the move: ${error.message}`, "move");
  } finally {
    sending = false;
    updateButtons();
  }
}

$("tell-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if (selected.length === 1) send({tell: {card: selected[0], clue: $("clue-input").value}});
});
$("clue-input").addEventListener("input", updateButtons);
$("submit").addEventListener("click", () => send({submit: selected}));
$("vote").addEventListener("click", () => send({vote: selected[0]}));
$("continue").addEventListener("click", () => {
  acknowledged = roundKey(view.last_round);
  sessionStorage.setItem(seenKey, acknowledged);
  actionKey = null;
  show(view);
  if (document.activeElement === document.body) $("status").focus();
});

poll();

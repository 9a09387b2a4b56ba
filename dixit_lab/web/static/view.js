// The viewer: browse a results folder game by game and round by round (GET /api/runs...).
// The state (run, game, round) lives in the URL's hash, so a round can be linked to.
"use strict";

const $ = (id) => document.getElementById(id);
const PAGE = 100;
let runs = [];
let run = 0;
let loaded = 0;       // game summaries listed so far
let total = 0;
let game = null;      // the game shown
let round = 0;

// In the hash, as on the page, a game is named by its number (from 0) and a round counted
// from 1 (round=1 is the first); `round` here is its index in the game's rounds.
function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  return {run: Number(params.get("run") || 0), game: params.get("game"),
          round: Math.max(0, Number(params.get("round") || 1) - 1)};
}

function writeHash() {
  const params = new URLSearchParams({run: String(run)});
  if (game) { params.set("game", String(game.index)); params.set("round", String(round + 1)); }
  history.replaceState(null, "", `#${params}`);
}

async function start() {
  try {
    const data = await getJSON("/api/runs");
    runs = data.runs;
    $("where").textContent = `${data.folder} · ${runs.length} run(s)`;
    const select = $("run");
    select.replaceChildren(...runs.map((r) => el("option", {value: r.run},
      `${r.label || "run"} (${r.games} games)`)));
    $("run-box").classList.toggle("hidden", runs.length < 2);
    select.addEventListener("change", () => chooseRun(Number(select.value), null, 0));
    const wanted = readHash();
    await chooseRun(Math.min(wanted.run, runs.length - 1), wanted.game, wanted.round);
  } catch (error) {
    $("alert").textContent = `Could not read the results: ${error.message}`;
  }
}

async function chooseRun(number, gameIndex, roundIndex) {
  run = number;
  $("run").value = String(run);
  loaded = 0;
  $("games").replaceChildren();
  await listMore();
  const first = gameIndex === null || gameIndex === undefined ? 0 : Number(gameIndex);
  if (total) await chooseGame(Math.min(first, total - 1), roundIndex);
}

async function listMore() {
  const data = await getJSON(`/api/runs/${run}/games?start=${loaded}&count=${PAGE}`);
  total = data.total;
  for (const g of data.games) {
    const best = g.winners.map((seat) => g.players[seat]).join(", ");
    $("games").append(el("li", {}, el("button", {
      type: "button", "data-index": g.index, onclick: () => chooseGame(g.index, 0),
      "aria-label": `Game ${g.game}: ${g.rounds} rounds, won by ${best}`,
    }, el("b", {}, `Game ${g.game}`), ` · ${g.rounds} rounds · `, best)));
  }
  loaded += data.games.length;
  $("games-count").textContent = `${total} game(s)`;
  $("more").classList.toggle("hidden", loaded >= total);
}

async function chooseGame(index, roundIndex) {
  game = await getJSON(`/api/runs/${run}/games/${index}`);
  game.index = index;
  for (const button of $("games").querySelectorAll("button")) {
    button.setAttribute("aria-current", Number(button.dataset.index) === index ? "true" : "false");
  }
  $("game-title").textContent = `Game ${game.game ?? index}`;
  $("game-info").textContent = `${game.rules} rules · deck ${game.deck} · `
    + `${game.players.length} players · ${game.rounds.length} rounds · ended by `
    + game.end_reason.replaceAll("_", " ");
  $("rounds").replaceChildren(...game.rounds.map((r, i) => el("button", {
    type: "button", "data-round": i, "aria-label": `Round ${i + 1}`, onclick: () => showRound(i),
  }, String(i + 1))));
  $("final-panel").classList.remove("hidden");
  $("final").replaceChildren(scoreTable(game.players, game.final_scores, {
    tags: (seat) => [game.winners.includes(seat) ? el("span", {class: "tag teller"}, "winner")
                     : null, game.agents[seat] !== game.players[seat]
                     ? el("span", {class: "muted"}, ` (${game.agents[seat]})`) : null]}));
  showRound(Math.min(Math.max(0, roundIndex || 0), game.rounds.length - 1));
}

function showRound(index) {
  if (!game || !game.rounds.length) return;
  round = index;
  const r = game.rounds[round];
  for (const button of $("rounds").querySelectorAll("button")) {
    button.setAttribute("aria-current", Number(button.dataset.round) === round ? "true" : "false");
  }
  $("round-panel").classList.remove("hidden");
  $("round-title").textContent = `Round ${round + 1} of ${game.rounds.length}`;
  $("round").replaceChildren(revealView(r, game.players, null, null));
  $("teller-hand").replaceChildren(...r.storyteller_hand.map((card) => cardView(card, {
    classes: card.card === r.display[r.storyteller_position].card ? ["teller"] : [],
    label: card.card === r.display[r.storyteller_position].card ? "told" : null})));
  $("faults").replaceChildren(...r.faults.map((f) => el("p", {class: "alert"},
    `Fault, ${game.players[f.seat]} (${f.action}): ${f.message}`)));
  $("previous").disabled = round === 0;
  $("next").disabled = round === game.rounds.length - 1;
  writeHash();
}

$("more").addEventListener("click", listMore);
$("previous").addEventListener("click", () => showRound(round - 1));
$("next").addEventListener("click", () => showRound(round + 1));
document.addEventListener("keydown", (event) => {
  if (!game || event.target.closest("input, select, textarea")) return;
  if (event.key === "ArrowLeft" && round > 0) showRound(round - 1);
  if (event.key === "ArrowRight" && round < game.rounds.length - 1) showRound(round + 1);
});

start();

"""The league: entrants rated against a frozen, versioned reference pool on sealed deals
(``dixit-lab league``), their folders and the leaderboard."""

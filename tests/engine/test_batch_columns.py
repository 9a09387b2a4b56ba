"""The batched engine's games in columns are the batch parsed from their JSON lines, field by
field (three and five players: five cards shown at three)."""

from __future__ import annotations

import numpy as np
import pytest

from dixit_lab.records.batches import batches_of_lines
from dixit_lab.run.experiment import parse_config
from dixit_lab.run.runner import game_specs, table_setup
from dixit_lab.run.tournament import play_chunk_columns


@pytest.mark.parametrize(("players", "rules"), [
    (["literal", "literal", "softmax(temperature=0.1)", "softmax(temperature=0.1)",
      "ambiguity(target=0.4)"], "classic"),
    (["literal", "random", "softmax"], "classic"),
    # hands that shrink once the pile is empty: lists of every length
    (["literal", "random", "softmax", "random"],
     {"preset": "classic", "options": {"deck_exhausted": "play_out_hands"}}),
])
def test_the_engines_columns_are_its_lines_parsed(players, rules) -> None:
    config = parse_config({"name": "cols", "seed": 5, "games": 40, "deck": "dreams",
                           "players": players, "engine": "batched", "rules": rules})
    setup = table_setup(config)
    chunk = list(game_specs(config))[3:40]
    results, batch, text = play_chunk_columns(setup, chunk)
    assert batch is not None and text == "".join(f"{line}\n" for _, line in results)
    (parsed,) = batches_of_lines([line.encode() + b"\n" for _, line in results],
                                 np.array([index for index, _ in results]))
    for name, value in vars(parsed).items():
        if name.startswith("_"):
            continue
        mine = getattr(batch, name)
        if hasattr(value, "to_pylist"):
            assert mine.to_pylist() == value.to_pylist(), name
        elif isinstance(value, np.ndarray):
            assert mine.shape == value.shape and np.array_equal(mine, value), name
        else:
            assert mine == value, name

"""``train nnue --train-percent P``: the data-size knob of an Elo-against-positions curve. On
the bundled sample's 400 annotated games: the validation split is the same at every share, a
smaller share's training games are a subset of a larger one's, games are kept or dropped
whole, and the share of games kept is the asked one within binomial noise."""
from __future__ import annotations

import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import NnueConfig
from pipelines.kinds.nnue.module import choose_label_source, snapshot_parameters
from pipelines.train.config import TrainConfigError, preset
from pipelines.train.dataset import write_snapshot
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

SAMPLE = Path(__file__).resolve().parent.parent.parent / "data" / "sample" / "games.pgn.zst"


def snapshot(lake: Lake, folder: Path, percent: float) -> dict[bool, dict[str, set[str]]]:
    """{validation: {split_key (a game): its position keys}} of the snapshot at ``percent``."""
    config = preset(NnueConfig, "tiny", train_percent=percent)
    sources = query(connect(lake), named_query("nnue_label_sources")).to_pylist()
    engines, depth = choose_label_source(sources, config)
    path = folder / f"snapshot-{percent}.parquet"
    write_snapshot(lake, "nnue_snapshot", snapshot_parameters(config, engines, depth), path,
                   lambda batch: batch, 4096)
    games: dict[bool, dict[str, set[str]]] = {False: {}, True: {}}
    for row in pq.read_table(path, columns=["position_key", "split_key",
                                            "validation"]).to_pylist():
        games[row["validation"]].setdefault(row["split_key"], set()).add(row["position_key"])
    return games


def test_train_percent_keeps_whole_nested_games_and_the_same_validation(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "home")
    run_step(INGEST, IngestJob((SAMPLE,), IngestConfig(workers=1)), lake)
    full, half, fifth = (snapshot(lake, tmp_path, p) for p in (100, 50, 20))
    assert full[True] and half[True] == full[True] == fifth[True]
    assert set(fifth[False]) < set(half[False]) < set(full[False])
    for subset in (half, fifth):                  # a kept game keeps all its positions
        assert all(keys == full[False][game] for game, keys in subset[False].items())
    games = len(full[False])                      # about 380 training games of 400
    for subset, share in ((half, 0.5), (fifth, 0.2)):
        sd = math.sqrt(games * share * (1 - share))
        assert abs(len(subset[False]) - games * share) < 4 * sd, (len(subset[False]), games)


@pytest.mark.parametrize("percent", [0, -5, 100.5])
def test_train_percent_out_of_range_is_refused(percent: float) -> None:
    with pytest.raises(TrainConfigError, match=f"train_percent: must be in \\(0, 100\\], got "
                                               f"{percent!r}"):
        preset(NnueConfig, "tiny", train_percent=percent)

"""NNUE training end to end (issue 9, paper 002): a warehouse built by ingesting real games
(tests/fixtures/label_engines/selfplay.pgn: Stockfish self-play and Morphy's Opera game) and
labelling every position with real Stockfish at depth 4, then the tiny preset on the CPU.

The exported integer net's batch evaluation is checked against the engine side's
one-position reference (engines/nnue/reference.py).
"""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import chess
import duckdb
import lightning as L
import numpy as np
import pytest
import torch

from engines.nnue.features import halfkp_batch, psq_batch
from engines.nnue.reference import evaluate_quantised, halfkp_reference
from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.label import LABEL
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.kinds.nnue.config import KING_BUCKET_COUNTS, NnueConfig
from pipelines.kinds.nnue.data import QUERY, SNAPSHOT
from pipelines.kinds.nnue.export import saturated
from pipelines.kinds.nnue.module import (
    KING_BUCKETS,
    NnueKind,
    NnueNet,
    NnueStream,
    encode_split,
    evaluate_quantised_batch,
    king_bucket_map,
    load_npz,
    nnue_loss,
    noisy,
    quantise,
    reference_check,
)
from pipelines.label import LabelConfig
from pipelines.models.registry import ModelNotFoundError, resolve_model
from pipelines.train import TrainConfigError, preset, train
from pipelines.train.dataset import (
    NO_LIMIT,
    DatasetError,
    SplitQuery,
    pooled,
    prefetched,
    stream_batches,
)
from warehouse import Lake, connect

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
GAMES = FIXTURES / "label_engines" / "selfplay.pgn"
DEPTH = 4
OPERA = "Paul Morphy"  # White in the Opera game, 1-0


@pytest.fixture(scope="module")
def labelled_lake(tmp_path_factory: pytest.TempPathFactory, stockfish_path: str) -> Lake:
    """selfplay.pgn ingested and every position labelled by Stockfish at depth 4."""
    lake = Lake(tmp_path_factory.mktemp("nnue") / "home")
    run_step(INGEST, IngestJob((GAMES,), IngestConfig.tiny()), lake)
    summary = run_step(LABEL, LabelConfig.tiny(depths=(DEPTH,), limit=None,
                                                     batch_size=200, workers=2), lake)
    assert summary.errors == 0 and summary.labels > 800
    return lake


@pytest.fixture
def lake(labelled_lake: Lake, tmp_path: Path) -> Lake:
    """A private copy of the labelled warehouse (training writes into it)."""
    shutil.copytree(labelled_lake.home, tmp_path / "home")
    return Lake(tmp_path / "home")


def snapshot_split(lake: Lake, validation: bool, config: NnueConfig | None = None) -> Any:
    """A run's snapshot written in a scratch folder, and one split's query over it."""
    folder = lake.home / "scratch"
    folder.mkdir(exist_ok=True)
    NnueKind().data(lake, config or preset(NnueConfig, "tiny"), folder)
    return SplitQuery(str(lake.home), QUERY, {"snapshot": str(folder / SNAPSHOT),
                                              "max_positions": NO_LIMIT}, validation)


def split_rows(lake: Lake, validation: bool, epoch: int = 0) -> list[dict[str, Any]]:
    """One split's rows as the snapshot's query gives them for ``epoch``."""
    split = snapshot_split(lake, validation)
    return [row for batch in stream_batches(split, epoch, 100) for row in batch.to_pylist()]


def test_splits_are_by_game_and_cover_the_view(lake: Lake) -> None:
    """Validation positions never come from a training position's game; both splits together
    are the view's rows minus positions in check and those whose label's best move captures
    or promotes; each epoch shuffles the same rows."""
    train_rows, val_rows = split_rows(lake, False), split_rows(lake, True)
    train_keys = {r["split_key"] for r in train_rows}
    val_keys = {r["split_key"] for r in val_rows}
    assert train_keys and val_keys and not train_keys & val_keys
    games = {g for g, in connect(lake).execute("select game_id from games").fetchall()}
    assert val_keys & games and train_keys & games   # both splits hold whole games
    view = connect(lake).sql(
        "select position_key, fen, in_check, best_move from nnue_examples").fetchall()
    quiet = {key for key, fen, _, best in view
             if not chess.Board(fen).is_check() and not (best and is_noisy(fen, best))}
    assert {r["position_key"] for r in train_rows + val_rows} == quiet
    assert len(train_rows) + len(val_rows) == len(quiet)
    # positions.in_check, read from the board at ingest, is python-chess's for every position
    assert all(check == chess.Board(fen).is_check() for _, fen, check, _ in view)
    assert sum(bool(check) for _, _, check, _ in view) > 10
    reshuffled = split_rows(lake, False, epoch=1)
    assert [r["position_key"] for r in reshuffled] != [r["position_key"] for r in train_rows]
    assert sorted(r["position_key"] for r in reshuffled) == sorted(
        r["position_key"] for r in train_rows)


def test_stream_cuts_the_encoded_split_into_whole_batches_in_the_epochs_order(
        lake: Lake) -> None:
    """Training batches are the encoded split's rows in the epoch's order (a permutation drawn
    from the seed and the epoch), HalfKP-encoded as the list encoder encodes their FENs, all
    of batch_size but the last; another epoch reorders the same rows; max_positions caps an
    epoch's rows."""
    folder = lake.home / "scratch"
    folder.mkdir(exist_ok=True)
    stream = NnueKind().data(lake, preset(NnueConfig, "tiny"), folder).train.dataset
    fens = {r["position_key"]: r["fen"] for r in split_rows(lake, False)}
    encoded = stream.encoded
    assert sorted(int(k) for k in encoded.position_key) == sorted(fens)
    for batch_size in (37, 100, 64, 5000):
        epoch = NnueStream(encoded, batch_size, seed=42)
        epoch.set_epoch(2)
        batches = list(epoch)
        assert [len(b) for b in batches[:-1]] == [batch_size] * (len(batches) - 1)
        assert 0 < len(batches[-1]) <= batch_size
        keys = [int(k) for k in encoded.position_key[epoch.order()]]
        assert torch.equal(torch.cat([b.features for b in batches]).long(),
                           torch.from_numpy(halfkp_batch([fens[k] for k in keys])).long())
        assert torch.cat([b.score_cp for b in batches]).tolist() == \
            encoded.score_cp[epoch.order()].tolist()
    first, second = NnueStream(encoded, 64, seed=42), NnueStream(encoded, 64, seed=42)
    second.set_epoch(1)
    assert first.order().tolist() != second.order().tolist()
    assert sorted(first.order().tolist()) == sorted(second.order().tolist()) == list(
        range(len(encoded)))
    capped = NnueStream(encoded, 64, max_positions=50, seed=42)
    assert sum(len(b) for b in capped) == 50


def endless(closed: list[bool]) -> Any:
    """0, 0, 0, ... for ever; ``closed`` gets True when the generator is closed."""
    try:
        yield from iter(int, 1)
    finally:
        closed.append(True)


def test_prefetched_keeps_order_raises_and_stops_early() -> None:
    """The background reader gives the items in order, re-raises the producer's error in the
    consumer, and closing the consumer early closes the producer's iterator."""
    assert list(prefetched(iter(range(100)), depth=3)) == list(range(100))

    def failing() -> Any:
        yield 1
        raise DatasetError("bad row")

    consumer = prefetched(failing())
    assert next(consumer) == 1
    with pytest.raises(DatasetError, match="bad row"):
        next(consumer)
    closed: list[bool] = []
    consumer = prefetched(endless(closed))
    assert next(consumer) == 0
    consumer.close()
    assert closed == [True]


@pytest.mark.parametrize("arch", ["halfkp", "psq768"])
def test_encoding_gives_the_same_arrays_for_any_thread_count(
        lake: Lake, tmp_path: Path, arch: str) -> None:
    """With 1, 2 or 3 encoding threads a split's encoded arrays are the same: the snapshot's
    rows in epoch 0's order, each FEN encoded by the list encoder (int16 features for psq768,
    int32 for HalfKP), scores, results (nan: unknown), keys. The config's loader_threads
    reaches the trainer's encoding (default min(4, cores)); a split with other than the
    counted rows leaves no arrays."""
    split = snapshot_split(lake, False, preset(NnueConfig, "tiny", arch=arch))
    rows = [r for batch in stream_batches(split, 0, 100) for r in batch.to_pylist()]
    encode = psq_batch if arch == "psq768" else halfkp_batch
    expected = encode([r["fen"] for r in rows])
    for threads in (1, 2, 3):
        folder = tmp_path / str(threads)
        folder.mkdir()
        encoded = encode_split(split, arch, folder, len(rows), 37, threads)
        assert encoded.features.dtype == (np.int16 if arch == "psq768" else np.int32)
        assert np.array_equal(encoded.features, expected)
        assert encoded.score_cp.tolist() == [float(r["score_cp"]) for r in rows]
        assert np.array_equal(encoded.result, np.array(
            [np.nan if r["result"] is None else r["result"] for r in rows], np.float32),
            equal_nan=True)
        assert encoded.position_key.tolist() == [r["position_key"] for r in rows]
    with pytest.raises(ValueError, match="threads: must be at least 1, got 0"):
        encode_split(split, arch, tmp_path / "0", len(rows), 8, 0)
    (tmp_path / "short").mkdir()
    with pytest.raises(DatasetError, match=f"has {len(rows)} rows, its summary counted"):
        encode_split(split, arch, tmp_path / "short", len(rows) + 1, 100, 2)
    assert not list((tmp_path / "short").iterdir())
    folder = lake.home / "scratch"
    data = NnueKind().data(lake, preset(NnueConfig, "tiny", arch=arch, loader_threads=3), folder)
    assert np.array_equal(data.train.dataset.encoded.features, expected)


def test_pooled_keeps_order_raises_at_its_turn_and_stops_early() -> None:
    """Results come in the items' order although later items finish first; work's error is
    raised after the results before it; closing early stops the pool's threads and closes
    the items."""
    def work(i: int) -> int:
        time.sleep(0.02 if i % 3 == 0 else 0.0)   # the first of every three finishes last
        return i * i

    assert list(pooled(work, iter(range(40)), 3)) == [i * i for i in range(40)]

    def failing(i: int) -> int:
        if i == 5:
            raise DatasetError("bad row 5")
        return work(i)

    results = pooled(failing, iter(range(40)), 2)
    assert [next(results) for _ in range(5)] == [0, 1, 4, 9, 16]
    with pytest.raises(DatasetError, match="bad row 5"):
        next(results)
    closed: list[bool] = []
    results = pooled(work, endless(closed), 2)
    assert next(results) == 0
    results.close()
    assert closed == [True]
    assert not [t for t in threading.enumerate() if t.name.startswith("chesslab-encode")]


def test_examples_have_side_to_move_scores_and_results(lake: Lake) -> None:
    """No mate scores; the Opera game (1-0) gives White to move 1 and Black to move 0;
    the score is the label's side-to-move score."""
    con = connect(lake)
    rows = con.sql(
        "select e.side_to_move, e.result, e.score_cp, l.score_cp as label_cp, l.score_mate "
        "from nnue_examples e join labels l using (position_key, engine_id, depth) "
        "join games g using (game_id) where g.white = $white", params={"white": OPERA}).fetchall()
    assert len(rows) > 20
    assert {(side, result) for side, result, *_ in rows} == {("w", 1.0), ("b", 0.0)}
    assert all(cp == label and mate is None for _, _, cp, label, mate in rows)
    by_result = dict(con.sql("select g.result, list(distinct e.side_to_move || ':' || "
                             "coalesce(e.result::varchar, 'null')) from nnue_examples e "
                             "join games g using (game_id) group by all").fetchall())
    assert sorted(by_result["0-1"]) == ["b:1.0", "w:0.0"]   # a self-play game Black won
    assert sorted(by_result["*"]) == ["b:null", "w:null"]   # unfinished: no result
    mates = con.sql("select count(*) from labels where score_mate is not null").fetchall()[0][0]
    examples = con.sql("select count(*) from nnue_examples").fetchall()[0][0]
    labels = con.sql("select count(*) from labels").fetchall()[0][0]
    assert mates > 0 and examples == labels - mates


def test_loss_is_paper_002_mse_and_blends_the_result() -> None:
    """Paper 002: MSE of sigmoid(cp/410); lambda blends in the game result (nnue-pytorch)."""
    y = torch.tensor([0.5, -0.25])                # 300 cp and -150 cp
    score = torch.tensor([100.0, -150.0])
    result = torch.tensor([1.0, float("nan")])
    pure = nnue_loss(y, score, result, NnueConfig())
    expected = ((torch.sigmoid(torch.tensor(300 / 410)) - torch.sigmoid(torch.tensor(100 / 410)))
                ** 2 / 2)
    assert pure.item() == pytest.approx(expected.item(), rel=1e-6)
    blended = nnue_loss(y, score, result, NnueConfig(eval_lambda=0.0))
    assert blended.item() == pytest.approx(
        ((torch.sigmoid(torch.tensor(300 / 410)) - 1) ** 2 / 2).item(), rel=1e-6)


def test_factoriser_folds_into_the_exported_columns() -> None:
    """A factorised net and a plain one holding its folded columns give the same outputs on
    real positions, and the factor's columns reach every king square's copy."""
    torch.manual_seed(3)
    factorised = NnueNet(factorize=True)
    with torch.no_grad():
        factorised.factor.weight.uniform_(-0.1, 0.1)  # type: ignore[union-attr]
        factorised.factor.weight[0].zero_()  # type: ignore[union-attr]
    plain = NnueNet()
    plain.load_state_dict({k: v for k, v in factorised.state_dict().items()
                           if not k.startswith("factor.")})
    with torch.no_grad():
        plain.ft.weight.copy_(factorised.ft_weight())
    fens = [chess.STARTING_FEN, "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - "
            "4 4", "8/8/4k3/8/8/3K4/6P1/8 b - - 0 60"]
    features = torch.from_numpy(halfkp_batch(fens).astype("int64"))
    assert torch.allclose(factorised(features), plain(features), atol=1e-5)
    assert not torch.allclose(factorised(features), NnueNet()(features))
    folded = factorised.ft_weight()
    piece_square = 1 + 5 * 64 + 12  # one piece on one square, under two king squares
    assert torch.allclose(folded[piece_square] - factorised.ft.weight[piece_square],
                          folded[40 * 641 + piece_square]
                          - factorised.ft.weight[40 * 641 + piece_square])
    assert float(folded[::641].detach().abs().sum()) == 0.0


def test_factorised_real_columns_start_at_zero_and_psq_nets_keep_them_there() -> None:
    """With the factoriser the real columns start at zero (a rarely seen king square keeps the
    shared values, not random ones); without king features they stay zero through training,
    so every king square's copy of a piece-square column is the same."""
    torch.manual_seed(5)
    assert float(NnueNet(factorize=True).ft.weight.detach().abs().sum()) == 0.0
    psq = NnueNet(factorize=True, king_features=False)
    fens = [chess.STARTING_FEN, "8/8/4k3/8/8/3K4/6P1/8 b - - 0 60"]
    features = torch.from_numpy(halfkp_batch(fens).astype("int64"))
    optimiser = torch.optim.Adam([p for p in psq.parameters() if p.requires_grad], lr=0.01)
    for _ in range(3):
        optimiser.zero_grad()
        (psq(features) - torch.tensor([0.3, -0.2])).pow(2).sum().backward()
        optimiser.step()
    assert float(psq.ft.weight.detach().abs().sum()) == 0.0
    assert float(psq.factor.weight.detach().abs().sum()) > 0  # type: ignore[union-attr]
    folded = psq.ft_weight()
    piece_square = 1 + 5 * 64 + 12
    assert torch.equal(folded[piece_square], folded[40 * 641 + piece_square])
    with pytest.raises(ValueError, match="factoriser"):
        NnueNet(factorize=False, king_features=False)


def test_king_buckets_fold_into_columns_shared_inside_each_bucket() -> None:
    """With ``king_buckets=4`` the bucket tables start at zero, learn, and fold into the
    exported columns so that a plain net holding them gives the same outputs; every king
    square of a bucket (wing, back rank or not, from the perspective's side) gets the same
    columns and the four buckets differ."""
    assert king_bucket_map(4).tolist()[:16] == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert set(king_bucket_map(4)[16:]) == {2, 3}
    assert sorted(set(king_bucket_map(16))) == list(range(16))
    assert king_bucket_map(64).tolist() == list(range(64))
    assert sorted(KING_BUCKETS) == list(KING_BUCKET_COUNTS)
    torch.manual_seed(7)
    net = NnueNet(factorize=True, king_features=False, king_buckets=4)
    assert float(net.buckets.weight.detach().abs().sum()) == 0.0  # type: ignore[union-attr]
    fens = [chess.STARTING_FEN, "8/8/4k3/8/8/3K4/6P1/8 b - - 0 60",
            "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8"]
    features = torch.from_numpy(halfkp_batch(fens).astype("int64"))
    optimiser = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=0.01)
    for _ in range(3):
        optimiser.zero_grad()
        (net(features) - torch.tensor([0.3, -0.2, 0.1])).pow(2).sum().backward()
        optimiser.step()
    assert float(net.buckets.weight.detach().abs().sum()) > 0  # type: ignore[union-attr]
    plain = NnueNet()
    plain.load_state_dict({k: v for k, v in net.state_dict().items()
                           if not k.startswith(("factor.", "buckets."))})
    with torch.no_grad():
        plain.ft.weight.copy_(net.ft_weight())
    assert torch.allclose(net(features), plain(features), atol=1e-5)
    folded = net.ft_weight().detach().reshape(64, 641, -1)
    for square, bucket in enumerate(king_bucket_map(4)):
        assert torch.equal(folded[square], folded[[0, 4, 8, 12][bucket]])
    assert len({folded[sq].sum().item() for sq in (0, 4, 8, 12)}) == 4
    assert float(folded[:, 0].abs().sum()) == 0.0


def test_bias_correction_cuts_the_export_error(lake: Lake) -> None:
    """Exported with bias correction from one half of the fixture's positions, a net whose
    hidden weights are a few 1/64 steps (as trained ones are) scores the other half closer
    to its float model than the plain rounding does; the contract's arithmetic is unchanged
    (the one-position reference agrees exactly)."""
    fens = [row[0] for row in connect(lake).sql(
        "select fen from nnue_examples order by position_key").fetchall()]
    features = halfkp_batch(fens)
    calibration, measured = features[::2], features[1::2]
    torch.manual_seed(11)
    net = NnueNet(factorize=True, king_features=False)
    with torch.no_grad():
        net.factor.weight.uniform_(-0.1, 0.1)  # type: ignore[union-attr]
        net.l1.weight.uniform_(-0.02, 0.03)
        net.l2.weight.uniform_(-0.3, 0.3)
        float_cp = net.centipawns(torch.from_numpy(measured.astype("int64"))).double().numpy()
    gaps = {}
    for name, arrays in (("plain", quantise(net)), ("corrected", quantise(net, calibration))):
        quantised = evaluate_quantised_batch(arrays, measured)
        gaps[name] = float(np.abs(quantised - float_cp).mean())
        assert reference_check(arrays, measured, quantised, 20)[
            "quantised_vs_reference_max_cp"] == 0
    assert len(measured) > 300
    assert gaps["corrected"] < 0.5 * gaps["plain"], gaps


def is_noisy(fen: str, uci: str) -> bool:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    return board.is_capture(move) or move.promotion is not None


def test_noisy_moves_match_python_chess(lake: Lake) -> None:
    """The quiet filter's FEN-string reading agrees with python-chess on every labelled
    position of the fixture (captures, en passant, promotions included)."""
    rows = connect(lake).sql("select fen, best_move from nnue_examples "
                             "where best_move is not null").fetchall()
    extra = [("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "e5f6"),
             ("8/P6k/8/8/8/8/8/K7 w - - 0 1", "a7a8q"), ("8/P6k/8/8/8/8/8/K7 w - - 0 1", "a1b2")]
    assert sum(is_noisy(f, b) for f, b in rows) > 50
    assert [noisy(f, b) for f, b in rows + extra] == [is_noisy(f, b) for f, b in rows + extra]


def test_config_rejects_bad_values() -> None:
    with pytest.raises(TrainConfigError, match="eval_lambda.*1.5"):
        NnueConfig(eval_lambda=1.5)
    with pytest.raises(TrainConfigError, match="lr_decay.*1.5"):
        NnueConfig(lr_decay=1.5)
    with pytest.raises(TrainConfigError, match="optimizer.*'rmsprop'"):
        NnueConfig(optimizer="rmsprop")
    with pytest.raises(TrainConfigError, match="king_features.*factorize"):
        NnueConfig(factorize=False, king_features=False)
    with pytest.raises(TrainConfigError, match="king_buckets must be one of 1, 2, 4, 8, 16, 64, got 3"):
        NnueConfig(king_buckets=3)
    with pytest.raises(TrainConfigError, match="preset.*'huge'"):
        preset(NnueConfig, "huge")
    with pytest.raises(TrainConfigError, match="arch must be one of halfkp, psq768, got 'halfka'"):
        NnueConfig(arch="halfka")
    with pytest.raises(TrainConfigError, match="hidden: a multiple of 16 in 16..1024, got 100"):
        NnueConfig(hidden=100)
    with pytest.raises(TrainConfigError, match="activation must be one of crelu, screlu, got 'relu'"):
        NnueConfig(activation="relu")
    with pytest.raises(TrainConfigError, match="loader_threads: must be at least 1, got 0"):
        NnueConfig(loader_threads=0)
    assert NnueConfig(loader_threads=3).run_identity() == NnueConfig().run_identity()


def test_no_labels_is_a_one_line_error(home: Path) -> None:
    with pytest.raises(DatasetError, match="no nnue_examples rows for engine any"):
        train(Lake(home), "nnue", preset(NnueConfig, "tiny"))


def test_train_export_register_end_to_end(lake: Lake, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`chesslab train nnue --preset tiny`: loss falls, one metrics row per epoch, registry
    rows, nnue@1 = nnue@latest, the exported file follows the contract and its integer
    evaluation matches the float model."""
    monkeypatch.setenv("CHESSLAB_HOME", str(lake.home))
    assert cli_main(["train", "nnue", "--preset", "tiny", "--no-prefect"]) == 0
    out = capsys.readouterr().out
    assert "nnue@1 (nnue-tiny)" in out
    con = connect(lake)
    metrics = con.sql("select epoch, step, train_loss, val_loss, positions_per_s, learning_rate "
                      "from model_metrics where model_id = 'nnue@1' order by epoch").fetchall()
    assert [m[0] for m in metrics] == [0, 1, 2, 3]
    # issue 32: the command prints the final epoch's losses
    assert (f"nnue@1: train loss {metrics[-1][2]:.6f}, validation loss {metrics[-1][3]:.6f} "
            f"after 4 epochs") in out
    assert metrics[-1][2] < 0.7 * metrics[0][2]
    assert all(m[1] > 0 and m[3] > 0 and m[4] > 0 and m[5] == 1e-3 for m in metrics)
    assert [m[1] for m in metrics] == sorted({m[1] for m in metrics})
    extra = [json.loads(e) for e, in con.sql("select extra from model_metrics").fetchall()]
    assert all(0 < e["val_mae_cp"] < 1000 for e in extra)
    model = resolve_model(lake, "nnue@1")
    assert resolve_model(lake, "nnue@latest") == model
    assert (model.name, model.status, model.config["epochs"]) == ("nnue-tiny", "exported", 4)
    dataset = con.sql("select * from model_datasets").to_arrow_table().to_pylist()[0]
    rows = con.sql("select fen, best_move from nnue_examples").fetchall()
    quiet = sum(not chess.Board(fen).is_check() and not (best and is_noisy(fen, best))
                for fen, best in rows)
    assert dataset["train_rows"] + dataset["validation_rows"] == quiet < len(rows)
    assert json.loads(dataset["parameters"])["quiet_only"] is True
    assert dataset["label_depths"] == [DEPTH] and len(dataset["position_keys_hash"]) == 16
    assert json.loads(dataset["table_versions"]).keys() == {"positions", "labels", "moves",
                                                            "games"}
    events = [e for e, in con.sql("select event from model_events order by recorded_at"
                                  ).fetchall()]
    assert events == ["started", "trained", "exported"]
    check_export(lake, model.artifact_path, model.artifact_sha256)


def check_export(lake: Lake, path: Path, sha256: str) -> None:
    import hashlib

    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    net = load_npz(path)
    meta = json.loads(str(net["meta"]))
    assert meta["sizes"] == [41024, 256, 32, 32, 1] and meta["output_cp"] == 600
    assert {k: (v.dtype.name, v.shape) for k, v in net.items() if k != "meta"} == {
        "ft_weight": ("int16", (41024, 256)), "ft_bias": ("int16", (256,)),
        "l1_weight": ("int8", (32, 512)), "l1_bias": ("int32", (32,)),
        "l2_weight": ("int8", (32, 32)), "l2_bias": ("int32", (32,)),
        "out_weight": ("int16", (1, 32)), "out_bias": ("int32", (1,))}
    fens = [r["fen"] for r in split_rows(lake, True)[:12]]
    batch = evaluate_quantised_batch(net, halfkp_batch(fens))
    assert batch.tolist() == [evaluate_quantised(net, *halfkp_reference(chess.Board(f)))
                              for f in fens]
    payload = json.loads(connect(lake).sql(
        "select payload from model_events where event = 'exported'").fetchall()[0][0])
    check = payload["cross_check"]
    assert check["positions"] == 200 and payload["sha256"] == sha256   # the tiny preset's
    assert check["reference_positions"] == 100
    assert check["quantised_vs_reference_max_cp"] == 0
    # The output layer's resolution is 600/64 ~ 9 cp per weight unit, so a net whose
    # weights are still near their initial scale keeps a few cp of rounding error (11.8 cp
    # mean measured on this data set after the ingest, lake and train branches were merged).
    assert check["float_vs_quantised_mean_cp"] < 15, check
    assert check["float_vs_quantised_max_cp"] < 40
    # a net that learnt: the engine's scores of the twelve positions above differ, and the
    # float model's spread over the check's positions is wide
    assert len(set(batch.tolist())) > 6, batch
    assert check["float_cp_spread"] > 50, check


def test_a_net_that_saturates_in_training_is_named_not_passed_off(
        lake: Lake, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A learning rate far too high for the tiny preset's batches of 64 saturates every
    hidden unit: the net scores every position the same. Training still ends (the model is
    kept, its event records the spread), and one warning line names the model's folder, what
    happened and what to do."""
    monkeypatch.setenv("CHESSLAB_HOME", str(lake.home))
    assert cli_main(["train", "nnue", "--preset", "tiny", "--learning-rate", "0.1",
                     "--no-prefect"]) == 0
    payload = json.loads(connect(lake).sql(
        "select payload from model_events where event = 'exported'").fetchall()[0][0])
    check = payload["cross_check"]
    assert check["float_cp_spread"] < 1.0, check
    net = load_npz(resolve_model(lake, "nnue@1").artifact_path)
    scores = {evaluate_quantised(net, *halfkp_reference(chess.Board(r["fen"])))
              for r in split_rows(lake, True)[:20]}
    assert len(scores) == 1, scores          # the engine's own evaluation: one score for all
    warnings = [r.getMessage() for r in caplog.records if "saturated" in r.getMessage()]
    assert len(warnings) == 1
    assert str(lake.home / "models" / "nnue" / "1") in warnings[0]
    assert "scores all 200 check positions the same" in warnings[0]
    assert "lower --learning-rate" in warnings[0]


def test_saturated_only_for_one_score_on_every_position() -> None:
    assert saturated({"positions": 200, "float_cp_spread": 0.4}) is not None
    assert saturated({"positions": 200, "float_cp_spread": 1.0}) is None
    assert saturated({"positions": 1, "float_cp_spread": 0.0}) is None


class StopAtEpoch(L.Callback):
    """Stops the run like a kill when an epoch starts (after the previous checkpoint)."""

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def on_train_epoch_start(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        if trainer.current_epoch == self.epoch:
            raise InterruptedError(f"stopped at epoch {self.epoch}")


def test_resume_after_interruption(lake: Lake) -> None:
    """Rerunning the same config continues the unfinished version from its last checkpoint:
    the epochs go on where they stopped and the version is the same. A finished config
    trains a new version, bit for bit the same net (fixed seed, seeded shuffle). The
    learning rate's per-epoch decay goes on from where it stopped too."""
    config = preset(NnueConfig, "tiny", epochs=3, lr_decay=0.5)
    with pytest.raises(InterruptedError):
        train(lake, "nnue", config, callbacks=[StopAtEpoch(1)])
    con = connect(lake)
    assert con.sql("select epoch from model_metrics").fetchall() == [(0,)]
    assert con.sql("select model_id, status from model_status").fetchall() == [
        ("nnue@1", "started")]
    with pytest.raises(ModelNotFoundError, match="no model 'nnue@latest'"):
        resolve_model(lake, "nnue@latest")
    first_epoch = con.sql("select recorded_at from model_metrics").fetchall()[0][0]
    model = train(lake, "nnue", config)
    con = connect(lake)
    assert model.model_id == "nnue@1"
    rows = con.sql("select epoch, step, recorded_at, learning_rate from model_metrics "
                   "order by epoch").fetchall()
    assert [r[0] for r in rows] == [0, 1, 2] and rows[0][2] == first_epoch
    assert [r[3] for r in rows] == pytest.approx([1e-3, 5e-4, 2.5e-4])
    assert [r[1] for r in rows] == [rows[0][1] * n for n in (1, 2, 3)]  # steps continue
    parts = [str(path) for path in lake.parts("model_metrics")]
    raw = duckdb.sql(f"select count(*), count(distinct epoch) from read_parquet({parts})")
    assert raw.fetchall() == [(3, 3)]   # epoch 0 was not trained again
    events = [e for e, in con.sql("select event from model_events order by recorded_at"
                                  ).fetchall()]
    assert events == ["started", "trained", "exported"]
    other = train(lake, "nnue", preset(NnueConfig, "tiny", epochs=1))
    again = train(lake, "nnue", preset(NnueConfig, "tiny", epochs=1))
    assert (other.model_id, again.model_id) == ("nnue@2", "nnue@3")
    snapshot = lake.home / "models" / "nnue" / "1" / "dataset.parquet"
    assert duckdb.sql(f"select count(*) from '{snapshot}'").fetchall() == [(sum(
        con.sql("select train_rows + validation_rows from model_datasets "
                "where model_id = 'nnue@1'").fetchall()[0]),)]
    assert other.artifact_sha256 == again.artifact_sha256   # fixed seed: the same net


def test_a_version_number_is_claimed_by_its_folder(tmp_path: Path) -> None:
    """Two trainers on one warehouse: the one that finds its number taken takes the next."""
    from pipelines.train.trainer import claim_version

    folder = tmp_path / "models" / "nnue"
    assert claim_version(folder, 1) == 1
    (folder / "2").mkdir()                     # claimed by a trainer beside this one
    assert claim_version(folder, 2) == 3
    assert sorted(p.name for p in folder.iterdir()) == ["1", "2", "3"]


@pytest.mark.slow
def test_kill_and_rerun_the_command_resumes(lake: Lake) -> None:
    """SIGKILL `chesslab train nnue` once its first checkpoint exists; the same command then
    finishes the same version: every epoch's metrics, one 'started' event, loadable net."""
    command = [sys.executable, "-m", "flows.cli", "--home", str(lake.home), "train", "nnue",
               "--preset", "tiny", "--epochs", "6", "--no-prefect"]
    checkpoint = lake.home / "models" / "nnue" / "1" / "last.ckpt"
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        while not checkpoint.exists() and process.poll() is None:
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert checkpoint.exists() and process.returncode == -signal.SIGKILL
    assert lake.read("models").num_rows == 0   # killed while training, not after
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("nnue@1 (nnue-tiny)")
    con = connect(lake)
    assert [e for e, in con.sql("select distinct epoch from model_metrics order by 1"
                                ).fetchall()] == list(range(6))
    assert con.sql("select count(*) from model_events where event = 'started'"
                   ).fetchall() == [(1,)]
    load_npz(resolve_model(lake, "nnue@1").artifact_path)


def test_psq768_tiny_trains_exports_cross_checks_and_plays(
        lake: Lake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: `chesslab train nnue --preset tiny --arch psq768 --hidden 32` trains the
    perspective net (loss falls), exports a psq768 file whose batch evaluation equals the
    engine's compiled network and the one-position reference, cross-checked against the
    float model, and `alphabeta:eval=nnue,model=nnue@1` plays it against the HCE through the
    resolver (2 games at 300 nodes, recorded in the warehouse)."""
    from engines.nnue.features import psq_batch
    from engines.nnue.network import Network, PerspectiveNetwork
    from engines.nnue.reference import evaluate_psq_quantised, psq_features
    from pipelines.kinds.nnue.psq import evaluate_psq_batch

    monkeypatch.setenv("CHESSLAB_HOME", str(lake.home))
    assert cli_main(["train", "nnue", "--preset", "tiny", "--arch", "psq768", "--hidden", "32",
                     "--no-prefect"]) == 0
    con = connect(lake)
    losses = con.sql("select train_loss from model_metrics where model_id = 'nnue@1' "
                     "order by epoch").fetchall()
    assert len(losses) == 4 and losses[-1][0] < 0.7 * losses[0][0]
    model = resolve_model(lake, "nnue@1")
    assert model.config["arch"] == "psq768" and model.config["hidden"] == 32
    arrays = load_npz(model.artifact_path)
    meta = json.loads(str(arrays["meta"]))
    assert (meta["features"], meta["sizes"], meta["activation"]) == (
        "psq768", [768, 32, 1], "screlu")
    fens = [r["fen"] for r in split_rows(lake, True)[:40]]
    batch = evaluate_psq_batch(arrays, psq_batch(fens))
    net = Network.load(model.artifact_path)
    assert isinstance(net, PerspectiveNetwork)
    boards = [chess.Board(f) for f in fens]
    assert batch.tolist() == [net.evaluate(b) for b in boards] == [
        evaluate_psq_quantised(arrays, "screlu", psq_features(b, b.turn),
                               psq_features(b, not b.turn)) for b in boards]
    assert len(set(batch.tolist())) > 10          # a net that tells positions apart
    check = json.loads(con.sql("select payload from model_events where event = 'exported'"
                               ).fetchall()[0][0])["cross_check"]
    assert check["quantised_vs_reference_max_cp"] == 0 and check["positions"] == 200
    assert check["float_vs_quantised_mean_cp"] < 3, check
    capsys.readouterr()
    player = "alphabeta:eval=nnue,hash=4,model=nnue@1"
    assert cli_main(["tournament", player, "alphabeta:eval=hce,hash=4", "--nodes", "300",
                     "--rounds", "1", "--openings",
                     str(FIXTURES / "openings" / "two_positions.epd"), "--no-prefect"]) == 0
    rated = connect(lake).sql("select player, games from latest_ratings order by player"
                              ).fetchall()
    assert (player, 2) in rated, rated


def test_psq_export_matches_the_float_model_and_refuses_what_int16_cannot_hold() -> None:
    """quantise_psq of a float net: the integer evaluation of its file follows the float
    model (bias correction keeps the mean gap small), for both activations; weights beyond
    what clip_weights allows are an ExportError naming the layer."""
    from engines.nnue.features import psq_batch
    from pipelines.kinds.nnue.psq import ExportError, PsqNet, evaluate_psq_batch, quantise_psq

    boards = [chess.Board()]
    for move in ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be2"]:
        boards.append(boards[-1].copy())
        boards[-1].push_san(move)
    features = psq_batch([b.fen() for b in boards])
    for activation in ("crelu", "screlu"):
        torch.manual_seed(1)
        net = PsqNet(64, activation)
        with torch.no_grad():
            net.ft.weight.normal_(0, 0.1)
            net.ft.weight[768].zero_()
            net.out.weight.normal_(0, 0.1)
        net.clip_weights()
        arrays = quantise_psq(net, features)
        ints = evaluate_psq_batch(arrays, features)
        floats = net.centipawns(torch.from_numpy(features.astype(np.int64))).detach().numpy()
        # 1/255 steps in 2 x 32 active rows and 1/64 steps in 128 output weights: a few cp
        assert np.abs(ints - floats).mean() < 8 and np.std(floats) > 20
    with torch.no_grad():
        net.out.weight[0, 0] = 2.5
    with pytest.raises(ExportError, match="out_weight"):
        quantise_psq(net)

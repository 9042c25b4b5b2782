"""Tables written by ``pipelines.label``: labels and label errors (``engine_id`` references
the ``engines`` table of ``warehouse.tables.engines``)."""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

LABELS = Table(
    name="labels",
    doc="Position x engine x depth -> score, WDL, best move, PV, nodes. Scores are from the "
        "side to move's point of view (score_*) and White's (white_*).",
    schema=pa.schema([
        ("position_key", pa.uint64()),
        ("engine_id", pa.string()),        # engines.engine_id of the labelling engine
        ("depth", pa.int32()),
        ("score_cp", pa.int32()),          # side to move, centipawns; null when a mate score
        ("score_mate", pa.int32()),        # side to move, moves to mate (negative: being mated)
        ("white_cp", pa.int32()),
        ("white_mate", pa.int32()),
        ("wdl_win", pa.int32()),           # side to move, per mille
        ("wdl_draw", pa.int32()),
        ("wdl_loss", pa.int32()),
        ("best_move", pa.string()),        # UCI; null in mate or stalemate
        ("pv", pa.list_(pa.string())),     # first moves of the PV, UCI
        ("nodes", pa.int64()),
        ("seldepth", pa.int32()),
        ("time_ms", pa.int32()),
        ("search_limit", pa.string()),     # the one search the label came from: depth 7, nodes 10000
        ("run_id", pa.string()),
        ("labelled_at", NOW),
        # 'lower'/'upper': the depth's last report was a bound (score_* is at least / at most
        # the true score, side to move's view; for white_* swap them when Black moves); null:
        # exact. Added later: parts written before it read it as null.
        ("bound", pa.string()),
        # Imported training data (text, binpack, EPD, Parquet) carries the game result with
        # each position: side to move's view, 1 win, 0.5 draw, 0 loss; null for engine labels
        # (nnue_examples takes their result from the games). Added later: null in older parts.
        ("result", pa.float32()),
    ]),
    key=("position_key", "engine_id", "depth"),
    partition_by=("engine_id", "depth"),
)

LABEL_ERRORS = Table(
    name="label_errors",
    doc="Positions an engine failed on after every retry.",
    schema=pa.schema([
        ("position_key", pa.uint64()),
        ("engine_id", pa.string()),
        ("fen", pa.string()),
        ("attempts", pa.int32()),
        ("message", pa.string()),
        ("run_id", pa.string()),
        ("recorded_at", NOW),
    ]),
    key=("position_key", "engine_id", "run_id"),
)

TABLES = [LABELS, LABEL_ERRORS]

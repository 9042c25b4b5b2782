"""Tables written by ``pipelines.label``: labels and label errors (``engine_id`` references
the ``engines`` table of ``warehouse.tables.engines``)."""
import pyarrow as pa

from warehouse.tables import NOW, Table

LABELS = Table(
    name="labels",
    doc="Position x engine x depth -> score, WDL, best move, PV, nodes. Scores are from the "
        "side to move's point of view (score_*) and White's (white_*).",
    columns=[
        ("position_key", pa.uint64(), "positions.position_key of the labelled position"),
        ("engine_id", pa.string(), "engines.engine_id of the labelling engine"),
        ("depth", pa.int32(),
         "the search depth this label is the result of (several from one search)"),
        ("score_cp", pa.int32(), "side to move, centipawns; null when a mate score"),
        ("score_mate", pa.int32(), "side to move, moves to mate (negative: being mated)"),
        ("white_cp", pa.int32(), "score_cp from White's point of view"),
        ("white_mate", pa.int32(), "score_mate from White's point of view (positive: White mates)"),
        ("wdl_win", pa.int32(), "side to move, per mille: the engine's win probability"),
        ("wdl_draw", pa.int32(), "side to move, per mille: the engine's draw probability"),
        ("wdl_loss", pa.int32(), "side to move, per mille: the engine's loss probability"),
        ("best_move", pa.string(), "the engine's best move, UCI; null in mate or stalemate"),
        ("pv", pa.list_(pa.string()), "the first moves of the principal variation, UCI"),
        ("nodes", pa.int64(), "nodes the engine had searched when it reported the depth"),
        ("seldepth", pa.int32(), "selective depth the engine reported for the depth"),
        ("time_ms", pa.int32(), "milliseconds the engine had searched when it reported the depth"),
        ("search_limit", pa.string(), "the one search the label came from: depth 7, nodes 10000"),
        ("run_id", pa.string(),
         "the label run that wrote the row (imported training data: the source_id)"),
        ("labelled_at", NOW, "when the label was stored"),
        ("bound", pa.string(),
         "'lower'/'upper': the depth's last report was a bound (score_* is at least / at most "
         "the true score, side to move's view; for white_* swap them when Black moves); null: "
         "exact. Added later: parts written before it read it as null."),
        ("result", pa.float32(),
         "Imported training data (text, binpack, EPD, Parquet) carries the game result with each "
         "position: side to move's view, 1 win, 0.5 draw, 0 loss; null for engine labels "
         "(nnue_examples takes their result from the games). Added later: null in older parts."),
    ],
    key=("position_key", "engine_id", "depth"),
    partition_by=("engine_id", "depth"),
    sort_by="position_key",
)

LABEL_ERRORS = Table(
    name="label_errors",
    doc="Positions an engine failed on after every retry.",
    columns=[
        ("position_key", pa.uint64(), "positions.position_key of the position"),
        ("engine_id", pa.string(), "engines.engine_id of the engine that failed"),
        ("fen", pa.string(), "the position the engine was given"),
        ("attempts", pa.int32(), "searches tried before giving up"),
        ("message", pa.string(), "why the last attempt failed"),
        ("run_id", pa.string(), "the label run that gave up"),
        ("recorded_at", NOW, "when the failure was recorded"),
    ],
    key=("position_key", "engine_id", "run_id"),
)

TABLES = [LABELS, LABEL_ERRORS]

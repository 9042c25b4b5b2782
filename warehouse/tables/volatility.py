"""Tables of paper 003's volatility classifier, written by ``chesslab train volatility`` when a
model is exported (all on the validation split, which is split by game): the headline
figures next to the always-unstable baseline, the ROC curve, the cumulative gains curve,
Table 4.1's rows at the paper's FPR levels and the deployed net's per-position predictions.
"""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

EVALUATIONS = Table(
    name="volatility_evaluations",
    doc="One row per volatility model: validation figures and the chosen threshold.",
    schema=pa.schema([
        ("model_id", pa.string()),              # volatility@N
        ("positions", pa.int64()),              # validation positions
        ("stable_share", pa.float64()),         # share labelled stable (|V7 - V6| < beta)
        ("baseline_accuracy", pa.float64()),    # always "unstable": 1 - stable_share
        ("accuracy", pa.float64()),             # at probability 0.5
        ("roc_auc", pa.float64()),
        ("beta", pa.float64()),
        ("target_fpr", pa.float64()),           # the FPR the deployed threshold was chosen at
        ("threshold", pa.float64()),            # stable when probability > threshold
        ("flagged_share", pa.float64()),        # share of positions the threshold stops on
        ("recorded_at", NOW),
    ]),
    key=("model_id",),
)

ROC = Table(
    name="volatility_roc",
    doc="ROC curve of a volatility model (positive = stable), from the strictest threshold.",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("point", pa.int32()),                  # 0 = nothing flagged
        ("threshold", pa.float64()),            # flagged when probability > threshold
        ("fpr", pa.float64()),
        ("tpr", pa.float64()),
        ("recorded_at", NOW),
    ]),
    key=("model_id", "point"),
)

GAINS = Table(
    name="volatility_gains",
    doc="Cumulative gains: positions sorted by predicted stability, share of the stable "
        "ones found in the top percent (random: percent/100; perfect: min(1, p/stable)).",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("percent", pa.int32()),                # 0..100 of the positions examined
        ("stable_found", pa.float64()),
        ("random", pa.float64()),
        ("perfect", pa.float64()),
        ("recorded_at", NOW),
    ]),
    key=("model_id", "percent"),
)

FPR_TABLE = Table(
    name="volatility_fpr_table",
    doc="Paper 003's Table 4.1 analogue: at each of the paper's FPR levels, the loosest "
        "threshold whose FPR does not exceed it, with TPR, FPR, share flagged and precision, "
        "next to the paper's TPR and threshold at that level.",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("target_fpr", pa.float64()),
        ("threshold", pa.float64()),
        ("tpr", pa.float64()),
        ("fpr", pa.float64()),
        ("flagged_share", pa.float64()),
        ("precision", pa.float64()),            # null when nothing is flagged
        ("paper_tpr", pa.float64()),
        ("paper_threshold", pa.float64()),
        ("recorded_at", NOW),
    ]),
    key=("model_id", "target_fpr"),
)

PREDICTIONS = Table(
    name="volatility_predictions",
    doc="The exported net's probability of 'stable' for every validation position.",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("position_key", pa.uint64()),
        ("probability", pa.float64()),
        ("stable", pa.bool_()),                 # the label at the model's beta
        ("recorded_at", NOW),
    ]),
    key=("model_id", "position_key"),
)

TABLES = [EVALUATIONS, ROC, GAINS, FPR_TABLE, PREDICTIONS]

"""Tables of paper 003's volatility classifier, written by ``chesslab train volatility`` when a
model is exported (all on the validation split, which is split by game): the headline
figures next to the always-unstable baseline, the ROC curve, the cumulative gains curve,
Table 4.1's rows at the paper's FPR levels and the deployed net's per-position predictions.
"""
import pyarrow as pa

from warehouse.tables import NOW, Table

EVALUATIONS = Table(
    name="volatility_evaluations",
    doc="One row per volatility model: validation figures and the chosen threshold.",
    columns=[
        ("model_id", pa.string(), "the model evaluated: volatility@N"),
        ("positions", pa.int64(), "validation positions the figures are taken over"),
        ("stable_share", pa.float64(), "share labelled stable (|V7 - V6| < beta)"),
        ("baseline_accuracy", pa.float64(), "always \"unstable\": 1 - stable_share"),
        ("accuracy", pa.float64(), "share of positions classified right at probability 0.5"),
        ("roc_auc", pa.float64(), "area under the ROC curve (positive = stable)"),
        ("beta", pa.float64(), "the stability margin in centipawns: stable when |V7 - V6| < beta"),
        ("target_fpr", pa.float64(), "the FPR the deployed threshold was chosen at"),
        ("threshold", pa.float64(), "stable when probability > threshold"),
        ("flagged_share", pa.float64(), "share of positions the threshold stops on"),
        ("recorded_at", NOW, "when the model was evaluated"),
    ],
    key=("model_id",),
)

ROC = Table(
    name="volatility_roc",
    doc="ROC curve of a volatility model (positive = stable), from the strictest threshold.",
    columns=[
        ("model_id", pa.string(), "volatility@N"),
        ("point", pa.int32(), "0-based number of the curve's point (0: nothing flagged)"),
        ("threshold", pa.float64(), "flagged when probability > threshold"),
        ("fpr", pa.float64(), "false positive rate: unstable positions flagged stable, share"),
        ("tpr", pa.float64(), "true positive rate: stable positions flagged stable, share"),
        ("recorded_at", NOW, "when the curve was computed"),
    ],
    key=("model_id", "point"),
)

GAINS = Table(
    name="volatility_gains",
    doc="Cumulative gains: positions sorted by predicted stability, share of the stable "
        "ones found in the top percent (random: percent/100; perfect: min(1, p/stable)).",
    columns=[
        ("model_id", pa.string(), "volatility@N"),
        ("percent", pa.int32(), "0..100 of the positions examined"),
        ("stable_found", pa.float64(), "share of the stable positions found in the top percent"),
        ("random", pa.float64(), "the same for a random order: percent / 100"),
        ("perfect", pa.float64(),
         "the same for a perfect order: min(1, percent / 100 / stable share)"),
        ("recorded_at", NOW, "when the curve was computed"),
    ],
    key=("model_id", "percent"),
)

FPR_TABLE = Table(
    name="volatility_fpr_table",
    doc="Paper 003's Table 4.1 analogue: at each of the paper's FPR levels, the loosest "
        "threshold whose FPR does not exceed it, with TPR, FPR, share flagged and precision, "
        "next to the paper's TPR and threshold at that level.",
    columns=[
        ("model_id", pa.string(), "volatility@N"),
        ("target_fpr", pa.float64(), "one of the paper's FPR levels"),
        ("threshold", pa.float64(), "the loosest threshold whose FPR does not exceed target_fpr"),
        ("tpr", pa.float64(), "true positive rate at the threshold"),
        ("fpr", pa.float64(), "false positive rate at the threshold"),
        ("flagged_share", pa.float64(), "share of the positions flagged stable at the threshold"),
        ("precision", pa.float64(),
         "share of the flagged positions that are stable; null when nothing is flagged"),
        ("paper_tpr", pa.float64(), "paper 003's TPR at the level (Table 4.1)"),
        ("paper_threshold", pa.float64(), "paper 003's threshold at the level (Table 4.1)"),
        ("recorded_at", NOW, "when the table was computed"),
    ],
    key=("model_id", "target_fpr"),
)

PREDICTIONS = Table(
    name="volatility_predictions",
    doc="The exported net's probability of 'stable' for every validation position.",
    columns=[
        ("model_id", pa.string(), "volatility@N"),
        ("position_key", pa.uint64(), "positions.position_key of the validation position"),
        ("probability", pa.float64(), "the exported net's probability that the position is stable"),
        ("stable", pa.bool_(), "the position's label at the model's beta"),
        ("recorded_at", NOW, "when the prediction was made"),
    ],
    key=("model_id", "position_key"),
)

TABLES = [EVALUATIONS, ROC, GAINS, FPR_TABLE, PREDICTIONS]

"""Tables of the late-move-reduction study (paper 003 part II): logged LMR decisions labelled
with the largest safe reduction, and the regression formulas fitted to them."""
import pyarrow as pa

from warehouse.tables import NOW, Table

LMR_EXAMPLES = Table(
    name="lmr_examples",
    doc=("One logged LMR decision (a search_log row) re-searched at every depth 1..full, with "
         "the largest safe reduction under both of paper 003's label rules (Table 5.1 and the "
         "Listing A.3 code)."),
    columns=[
        ("run_id", pa.string(), "search_log key: the logging engine's run"),
        ("seq", pa.int64(), "search_log key: decision number in the run"),
        ("data_run", pa.string(), "the chesslab lmr-data run that logged it"),
        ("game", pa.int32(), "self-play game index within the data run"),
        ("fen", pa.string(), "position after the reduced move (child)"),
        ("depth", pa.int32(), "d: remaining depth of the node"),
        ("move_no", pa.int32(), "m: 1-based number of the move in the node"),
        ("depth_full", pa.int32(), "depth of an unreduced child search: d - 1"),
        ("depth_reduced", pa.int32(), "depth of the reduced child search: d - 1 - r"),
        ("alpha", pa.int32(), "node alpha before the move, cp"),
        ("value", pa.int32(), "the move's logged score, node's point of view"),
        ("stat_eval", pa.int32(), "static eval of the node (-32001 in check)"),
        ("np_material_w", pa.int32(),
         "non-pawn material of White at the node (N 320 B 330 R 500 Q 900)"),
        ("np_material_b", pa.int32(), "non-pawn material of Black at the node"),
        ("scores", pa.list_(pa.int32()), "re-search score at depth i+1, node's point of view"),
        ("mate", pa.bool_(), "a re-search found a mate: no label (as A.3)"),
        ("capped", pa.bool_(), "stopped at label_max_nodes short of full: no label"),
        ("fail_low_reduced", pa.bool_(), "the re-search at depth_reduced fails low again"),
        ("fail_low_full", pa.bool_(), "the re-search at depth_full fails low (A.3's ok)"),
        ("label_table", pa.int32(), "largest safe reduction, Table 5.1's definition"),
        ("label_code", pa.int32(), "Listing A.3's value (one more when a depth fails high)"),
        ("label_engine", pa.string(), "the re-searching engine: alphabeta eval/lmr/hash"),
        ("labelled_at", NOW, "when the decision was labelled"),
    ],
    key=("run_id", "seq"),
)

LMR_FITS = Table(
    name="lmr_fits",
    doc=("Coefficients and R^2 of every Table 6.1 formula fitted (no intercept) for one "
         "model version, next to the paper's."),
    columns=[
        ("model_id", pa.string(), "the model version the formulas were fitted for: lmr@N"),
        ("formula", pa.string(),
         "the formula's terms as written in Table 6.1, e.g. logd*logm + logd + logm"),
        ("terms", pa.list_(pa.string()), "the formula's terms, in the order of coefficients"),
        ("coefficients", pa.list_(pa.float64()), "the fitted coefficient of each term"),
        ("r2", pa.float64(), "in-sample, sklearn's score (vs the mean)"),
        ("paper_coefficients", pa.list_(pa.float64()),
         "paper 003's coefficients for the formula (Table 6.1)"),
        ("paper_r2", pa.float64(), "paper 003's R^2 for the formula"),
        ("label", pa.string(),
         "the label rule fitted: table (Table 5.1's) or code (Listing A.3's)"),
        ("rows", pa.int64(), "labelled decisions the formula was fitted on"),
        ("fitted_at", NOW, "when the formula was fitted"),
    ],
    key=("model_id", "formula"),
)

TABLES = [LMR_EXAMPLES, LMR_FITS]

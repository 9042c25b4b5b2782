"""Tables of the late-move-reduction study (paper 003 part II): logged LMR decisions labelled
with the largest safe reduction, and the regression formulas fitted to them."""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

LMR_EXAMPLES = Table(
    name="lmr_examples",
    doc=("One logged LMR decision (a search_log row) re-searched at every depth 1..full, with "
         "the largest safe reduction under both of paper 003's label rules (Table 5.1 and the "
         "Listing A.3 code)."),
    schema=pa.schema([
        ("run_id", pa.string()),           # search_log key: the logging engine's run
        ("seq", pa.int64()),               # search_log key: decision number in the run
        ("data_run", pa.string()),         # the chesslab lmr-data run that logged it
        ("game", pa.int32()),              # self-play game index within the data run
        ("fen", pa.string()),              # position after the reduced move (child)
        ("depth", pa.int32()),             # d of the node
        ("move_no", pa.int32()),           # m of the move
        ("depth_full", pa.int32()),        # depth of an unreduced child search: d - 1
        ("depth_reduced", pa.int32()),     # depth of the reduced child search: d - 1 - r
        ("alpha", pa.int32()),             # node alpha, cp
        ("value", pa.int32()),             # the move's logged score, node's point of view
        ("stat_eval", pa.int32()),         # static eval of the node (-32001 in check)
        ("np_material_w", pa.int32()),
        ("np_material_b", pa.int32()),
        ("scores", pa.list_(pa.int32())),  # re-search score at depth i+1, node's point of view
        ("mate", pa.bool_()),              # a re-search found a mate: no label (as A.3)
        ("capped", pa.bool_()),            # stopped at label_max_nodes short of full: no label
        ("fail_low_reduced", pa.bool_()),  # the re-search at depth_reduced fails low again
        ("fail_low_full", pa.bool_()),     # the re-search at depth_full fails low (A.3's ok)
        ("label_table", pa.int32()),       # largest safe reduction, Table 5.1's definition
        ("label_code", pa.int32()),        # Listing A.3's value (one more when a depth fails high)
        ("label_engine", pa.string()),     # the re-searching engine: alphabeta eval/lmr/hash
        ("labelled_at", NOW),
    ]),
    key=("run_id", "seq"),
)

LMR_FITS = Table(
    name="lmr_fits",
    doc=("Coefficients and R^2 of every Table 6.1 formula fitted (no intercept) for one "
         "model version, next to the paper's."),
    schema=pa.schema([
        ("model_id", pa.string()),         # lmr@N
        ("formula", pa.string()),          # e.g. logd*logm + logd + logm
        ("terms", pa.list_(pa.string())),
        ("coefficients", pa.list_(pa.float64())),
        ("r2", pa.float64()),              # in-sample, sklearn's score (vs the mean)
        ("paper_coefficients", pa.list_(pa.float64())),
        ("paper_r2", pa.float64()),
        ("label", pa.string()),            # table or code
        ("rows", pa.int64()),
        ("fitted_at", NOW),
    ]),
    key=("model_id", "formula"),
)

TABLES = [LMR_EXAMPLES, LMR_FITS]

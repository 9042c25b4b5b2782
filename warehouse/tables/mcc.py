"""Tables written by the Monte-Carlo experiments of paper 001 (``chesslab mcc``)."""
import pyarrow as pa

from warehouse.tables import NOW, Table

MCC_RESULTS = Table(
    name="mcc_results",
    doc=("Diagnostics of the Monte-Carlo engine (paper 001, section 5.1): the KQK playout "
         "statistic, the Réti study, the solver on mate problems; one row per measured "
         "figure. Tournaments and ratings of the round robins go to the tournament tables."),
    columns=[
        ("run_id", pa.string(), "sha256 of experiment, variant, fen and settings"),
        ("experiment", pa.string(), "the diagnostic: kqk, reti or solver"),
        ("label", pa.string(), "the position's id or the setting measured"),
        ("variant", pa.string(), "the engine variant (mcts --variant)"),
        ("fen", pa.string(), "the position measured from"),
        ("seed", pa.int64(), "the random seed of the measurement"),
        ("budget", pa.int64(), "playouts or iterations allowed"),
        ("metric", pa.string(), "e.g. white_mates, iterations_to_move, mate_moves"),
        ("value", pa.float64(), "the measured figure"),
        ("expected", pa.float64(), "the thesis' figure or the verified distance"),
        ("recorded_at", NOW, "when the figure was measured"),
    ],
    key=("run_id", "label", "metric"),
)

TABLES = [MCC_RESULTS]

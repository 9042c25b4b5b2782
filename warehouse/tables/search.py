"""Tables written by the alpha-beta engine: sampled late-move-reduction decisions."""
import pyarrow as pa

from warehouse.tables import NOW, Table

SEARCH_LOG = Table(
    name="search_log",
    doc=("LMR decisions sampled during alpha-beta search, with the fields of paper 003 "
         "appendix A.2 (Stockfish's Record); training data for reduction formulas."),
    columns=[
        ("run_id", pa.string(), "the logging engine's run: one AlphaBeta instance"),
        ("seq", pa.int64(), "order of the decision within the run"),
        ("fen", pa.string(), "position after the reduced move"),
        ("move", pa.string(), "the reduced move, UCI"),
        ("pv", pa.bool_(), "node searched with an open window"),
        ("improving", pa.bool_(), "static eval above the one two plies earlier"),
        ("depth", pa.int32(), "d: remaining depth of the node"),
        ("move_no", pa.int32(), "m: 1-based number of the move in the node"),
        ("depth_new", pa.int32(), "depth - 1 - reduction"),
        ("reduction_org", pa.int32(), "what the formula asked for"),
        ("reduction", pa.int32(), "what was applied (clamped to 0..depth-2)"),
        ("depth_searched", pa.int32(), "final depth after any re-search"),
        ("alpha", pa.int32(), "node alpha before the move, cp"),
        ("value", pa.int32(), "score of the move, node's point of view"),
        ("ply", pa.int32(), "distance from the search root"),
        ("game_ply", pa.int32(), "ply of the game at the node"),
        ("np_material_w", pa.int32(), "non-pawn material, white (N 320 B 330 R 500 Q 900)"),
        ("np_material_b", pa.int32(), "non-pawn material, black"),
        ("np_material", pa.int32(), "non-pawn material of both sides"),
        ("stat_eval", pa.int32(), "static eval of the node (-32001 in check)"),
        ("eval", pa.string(), "the evaluation the search used: hce, hce-simple, nnue, nnue-hybrid"),
        ("lmr", pa.string(), "the reduction formula: default, none or the callable's name"),
        ("logged_at", NOW, "when the decision was written"),
    ],
    key=("run_id", "seq"),
)

TABLES = [SEARCH_LOG]

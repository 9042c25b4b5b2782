"""Tables of the PUCT self-play training loop (papers 004 and 002): every recorded position of
every self-play game with its search's visit distribution, and one row per finished game."""
import pyarrow as pa

from warehouse.tables import NOW, Table

SELFPLAY_SAMPLES = Table(
    name="selfplay_samples",
    doc=("One recorded position of a PUCT self-play game: the root's legal moves and visit "
         "counts (the AlphaZero policy target), the move played (ChessBreaker's target), the "
         "outcome and the material-shaped value (paper 002), all from the mover's view."),
    columns=[
        ("run_id", pa.string(), "the selfplay-train run (pv-<hash> of its config)"),
        ("round", pa.int32(), "the round that played the game (1, 2, ...)"),
        ("game", pa.int32(), "game index within the round"),
        ("ply", pa.int32(), "ply of the game (0 = the start position)"),
        ("fen", pa.string(), "the position, FEN"),
        ("moves", pa.list_(pa.string()), "every legal move, UCI"),
        ("visits", pa.list_(pa.int32()), "root visits per move, same order"),
        ("played", pa.string(), "the move played from the position, UCI"),
        ("outcome", pa.float32(), "the game's result for the mover: 1, 0, -1"),
        ("material", pa.float32(), "clip((own - opponent material) / scale, -1, 1)"),
        ("net_value", pa.float32(), "the playing net's value of the position"),
        ("search_value", pa.float32(), "the root's Q after the search (mover's view)"),
        ("model_id", pa.string(), "the net that played (policy_value@N or random)"),
        ("recorded_at", NOW, "when the game's samples were stored"),
    ],
    key=("run_id", "round", "game", "ply"),
)

SELFPLAY_GAMES = Table(
    name="selfplay_games",
    doc=("One finished PUCT self-play game: its start, result and length; written after its "
         "samples, so a game with a row here is complete (a rerun does not play it again)."),
    columns=[
        ("run_id", pa.string(), "the selfplay-train run (pv-<hash> of its config)"),
        ("round", pa.int32(), "the round that played the game (1, 2, ...)"),
        ("game", pa.int32(), "game index within the round"),
        ("start_fen", pa.string(), "the position the game started from"),
        ("result", pa.string(), "the game's result: 1-0, 0-1, 1/2-1/2"),
        ("termination", pa.string(), "checkmate, stalemate, insufficient, fifty, ..."),
        ("plies", pa.int32(), "plies played"),
        ("samples", pa.int32(), "recorded positions (fast moves are not)"),
        ("model_id", pa.string(), "the net that played (policy_value@N or random)"),
        ("seconds", pa.float64(), "wall-clock seconds the game took"),
        ("recorded_at", NOW, "when the game was stored"),
    ],
    key=("run_id", "round", "game"),
)

TABLES = [SELFPLAY_SAMPLES, SELFPLAY_GAMES]

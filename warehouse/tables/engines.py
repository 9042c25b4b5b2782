"""The ``engines`` table: one identity for every player (labels, tournaments, model evaluations)."""
import pyarrow as pa

from warehouse.tables import NOW, Table

ENGINES = Table(
    name="engines",
    doc="Engine identities: name, version and canonical options, hashed into engine_id; "
        "labels.engine_id and tournament_players.engine_id reference it.",
    columns=[
        ("engine_id", pa.string(), "name-version-<8 hex of sha256(name, version, options)>"),
        ("name", pa.string(),
         "the engine's name: its UCI id name without the version, or the own program (chesslab "
         "alphabeta)"),
        ("version", pa.string(),
         "the engine's version (Stockfish 15.1: 15.1; own engines: chesslab's version and the "
         "engines' code revision, 0.1.0+rev.1a2b3c4d); empty when unknown"),
        ("options", pa.string(), "canonical JSON object: sorted names, UCI text values"),
        ("kind", pa.string(), "own (a chesslab program) or external"),
        ("search", pa.string(), "own engines: the program (alphabeta, mcts, puct)"),
        ("evaluation", pa.string(), "own engines: hce, hce-simple, nnue, ..."),
        ("model", pa.string(), "own engines: KIND@VERSION of the model, else null"),
        ("created_at", NOW, "when the identity was first recorded"),
    ],
    key=("engine_id",),
)

TABLES = [ENGINES]

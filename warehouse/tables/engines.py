"""The ``engines`` table: one identity for every player (labels, tournaments, model evaluations)."""
import pyarrow as pa

from warehouse.tables import Table

ENGINES = Table(
    name="engines",
    doc="Engine identities: name, version and canonical options, hashed into engine_id; "
        "labels.engine_id and tournament_players.engine_id reference it.",
    schema=pa.schema([
        ("engine_id", pa.string()),        # name-version-<8 hex of sha256(name, version, options)>
        ("name", pa.string()),
        ("version", pa.string()),
        ("options", pa.string()),          # canonical JSON object: sorted names, UCI text values
        ("kind", pa.string()),             # own (a chesslab program) or external
        ("search", pa.string()),           # own engines: the program (alphabeta, mcts, puct)
        ("evaluation", pa.string()),       # own engines: hce, hce-simple, nnue, ...
        ("model", pa.string()),            # own engines: KIND@VERSION of the model, else null
        ("created_at", pa.timestamp("us", tz="UTC")),
    ]),
    key=("engine_id",),
)

TABLES = [ENGINES]

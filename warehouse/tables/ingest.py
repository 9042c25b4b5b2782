"""Tables written by ``pipelines.ingest``: sources, games, moves, positions and their errors."""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

SOURCES = Table(
    name="sources",
    doc="One row per ingested file, written last: a file without it was not fully ingested.",
    schema=pa.schema([
        ("source_id", pa.string()),        # SHA-256 of the file's bytes, hex
        ("path", pa.string()),
        ("format", pa.string()),           # pgn, epd, fen, text, lichess-eval, binpack or parquet
        ("compression", pa.string()),      # none, zst, gz or bz2
        ("size_bytes", pa.int64()),
        ("encoding", pa.string()),         # utf-8, utf-8-sig, latin-1, cp1252 (utf-8+latin-1: mixed)
        ("games", pa.int64()),             # games read, duplicates included
        ("duplicates", pa.int64()),        # games already stored by an earlier source (not stored again)
        ("records", pa.int64()),           # EPD/FEN lines read
        ("plies", pa.int64()),
        ("new_positions", pa.int64()),
        ("errors", pa.int64()),
        ("truncated", pa.bool_()),
        ("seconds", pa.float64()),
        ("ingested_at", NOW),
        # labels stored from the file (text, JSONL, binpack, EPD ce, Parquet: labels.run_id
        # is the source_id). Added later: null in older parts.
        ("labels", pa.int64()),
    ]),
    key=("source_id",),
)

GAMES = Table(
    name="games",
    doc="One row per game record read from PGN sources, identical records of one file "
        "included (games with errors keep the plies before it); the same game in another "
        "file is stored once: source_id and game_index say where it was first read.",
    schema=pa.schema([
        ("game_id", pa.string()),          # hash of tags, SANs and occurrence (pipelines.ingest.keys)
        ("source_id", pa.string()),
        ("game_index", pa.int32()),        # 0-based position of the game in its file
        ("line", pa.int32()),              # line of the game's first tag in the file (1-based)
        ("event", pa.string()),
        ("site", pa.string()),
        ("date", pa.string()),
        ("round", pa.string()),
        ("white", pa.string()),
        ("black", pa.string()),
        ("result", pa.string()),
        ("white_elo", pa.int32()),
        ("black_elo", pa.int32()),
        ("time_control", pa.string()),
        ("termination", pa.string()),
        ("eco", pa.string()),
        ("opening", pa.string()),
        ("variant", pa.string()),
        ("start_fen", pa.string()),        # FEN tag of SetUp games, else null
        ("plies", pa.int32()),             # plies replayed
        ("error", pa.string()),            # why replay stopped early, else null
        ("tags", pa.string()),             # every tag as a JSON object
    ]),
    key=("game_id",),
)

MOVES = Table(
    name="moves",
    doc="One row per ply of the main line: the position before the move and the move.",
    schema=pa.schema([
        ("game_id", pa.string()),
        ("ply", pa.int32()),               # 0-based: ply 0 is the first move of the game
        ("position_key", pa.uint64()),     # Polyglot Zobrist hash of the position before the move
        ("uci", pa.string()),
        ("san", pa.string()),              # SAN as the board writes it
        ("clock_s", pa.float64()),         # [%clk] after the move, seconds
        ("eval_cp", pa.int32()),           # [%eval] after the move, White's view, centipawns
        ("eval_mate", pa.int32()),         # [%eval #n] after the move, White's view
    ]),
    key=("game_id", "ply"),
    required=("position_key", "uci"),
)

POSITIONS = Table(
    name="positions",
    doc="One row per distinct position, keyed by its Polyglot Zobrist hash.",
    schema=pa.schema([
        ("position_key", pa.uint64()),
        ("fen", pa.string()),              # normalised: board, side, castling, legal ep square
        ("source_id", pa.string()),        # first source it was seen in
        ("first_seen", NOW),
    ]),
    key=("position_key",),
    required=("fen",),
)

POSITION_RECORDS = Table(
    name="position_records",
    doc="One row per EPD or FEN line, with its opcodes.",
    schema=pa.schema([
        ("source_id", pa.string()),
        ("line", pa.int32()),
        ("position_key", pa.uint64()),
        ("fen", pa.string()),              # as given (EPD: with halfmove/fullmove opcodes applied)
        ("id", pa.string()),
        ("bm", pa.list_(pa.string())),     # best moves, SAN
        ("am", pa.list_(pa.string())),     # avoid moves, SAN
        ("dm", pa.int32()),                # direct mate in n
        ("c0", pa.string()),
        ("ops", pa.string()),              # every opcode as a JSON object
    ]),
    key=("source_id", "line"),
)

INGEST_ERRORS = Table(
    name="ingest_errors",
    doc="Bad input met while ingesting: the rest of the file is still ingested.",
    schema=pa.schema([
        ("source_id", pa.string()),
        ("path", pa.string()),
        ("game_index", pa.int32()),        # PGN: 0-based game index, else null
        ("line", pa.int32()),              # 1-based line in the (decompressed) file
        ("kind", pa.string()),             # illegal_move, bad_tag, unknown_variant, bad_fen, unclosed_comment, unclosed_variation, truncated, collision, ...
        ("message", pa.string()),
        ("recorded_at", NOW),
        # binary formats (binpack): byte offset in the decompressed file of the chain or chunk
        # at fault; null for text (line says where). Added later: null in older parts.
        ("byte_offset", pa.int64()),
    ]),
    # the message too: one game can hold several errors of a kind (collisions of two keys)
    key=("source_id", "game_index", "line", "kind", "message"),
    nullable_key=("game_index", "line"),     # EPD/FEN errors have no game, some no line
)

TABLES = [SOURCES, GAMES, MOVES, POSITIONS, POSITION_RECORDS, INGEST_ERRORS]

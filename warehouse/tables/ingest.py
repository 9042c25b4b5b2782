"""Tables written by ``pipelines.ingest``: sources, games, moves, positions and their errors."""
import pyarrow as pa

from warehouse.tables import NOW, Table

SOURCES = Table(
    name="sources",
    doc="One row per ingested file, written last: a file without it was not fully ingested.",
    columns=[
        ("source_id", pa.string(), "SHA-256 of the file's bytes, hex"),
        ("path", pa.string(), "the file's path as it was given to ingest"),
        ("format", pa.string(), "pgn, epd, fen, text, lichess-eval, binpack or parquet"),
        ("compression", pa.string(), "the file's compression: none, zst, gz or bz2"),
        ("size_bytes", pa.int64(), "the file's size on disk (compressed when it is)"),
        ("encoding", pa.string(), "utf-8, utf-8-sig, latin-1, cp1252 (utf-8+latin-1: mixed)"),
        ("games", pa.int64(), "games read, duplicates included"),
        ("duplicates", pa.int64(), "games already stored by an earlier source (not stored again)"),
        ("records", pa.int64(), "EPD/FEN lines and training-data records read"),
        ("plies", pa.int64(), "moves replayed from the file's games"),
        ("new_positions", pa.int64(), "positions the file brought that no earlier source had"),
        ("errors", pa.int64(), "ingest_errors rows the file gave (bad games and records, counted)"),
        ("truncated", pa.bool_(),
         "the stream stopped early (a cut download or archive): what came before is kept"),
        ("seconds", pa.float64(), "wall-clock seconds the ingest of the file took"),
        ("ingested_at", NOW, "when the file's ingest finished"),
        ("labels", pa.int64(),
         "labels stored from the file (text, JSONL, binpack, EPD ce, Parquet: labels.run_id is "
         "the source_id). Added later: null in older parts."),
    ],
    key=("source_id",),
)

GAMES = Table(
    name="games",
    doc="One row per game record read from PGN sources, identical records of one file "
        "included (games with errors keep the plies before it); the same game in another "
        "file is stored once: source_id and game_index say where it was first read.",
    columns=[
        ("game_id", pa.string(), "hash of tags, SANs and occurrence (pipelines.ingest.keys)"),
        ("source_id", pa.string(), "sources.source_id of the file the game was first read from"),
        ("game_index", pa.int32(), "0-based position of the game in its file"),
        ("line", pa.int32(), "line of the game's first tag in the file (1-based)"),
        ("event", pa.string(), "PGN Event tag"),
        ("site", pa.string(), "PGN Site tag"),
        ("date", pa.string(), "PGN Date tag, as written (YYYY.MM.DD, ?? for unknown parts)"),
        ("round", pa.string(), "PGN Round tag"),
        ("white", pa.string(), "PGN White tag: the player with the white pieces"),
        ("black", pa.string(), "PGN Black tag: the player with the black pieces"),
        ("result", pa.string(), "PGN Result tag: 1-0, 0-1, 1/2-1/2 or *"),
        ("white_elo", pa.int32(), "WhiteElo tag; null when absent or not a number (?, -)"),
        ("black_elo", pa.int32(), "BlackElo tag; null when absent or not a number (?, -)"),
        ("time_control", pa.string(), "PGN TimeControl tag (e.g. 180+2)"),
        ("termination", pa.string(), "PGN Termination tag (normal, time forfeit, ...)"),
        ("eco", pa.string(), "ECO tag: the opening's code (e.g. C42)"),
        ("opening", pa.string(), "Opening tag: the opening's name"),
        ("variant", pa.string(),
         "standard or chess960 (their aliases folded), else the Variant tag as written"),
        ("start_fen", pa.string(), "FEN tag of SetUp games, else null"),
        ("plies", pa.int32(), "plies of the main line replayed (up to an error)"),
        ("error", pa.string(), "why replay stopped early, else null"),
        ("tags", pa.string(), "every tag of the game as a JSON object"),
    ],
    key=("game_id",),
)

MOVES = Table(
    name="moves",
    doc="One row per ply of the main line: the position before the move and the move.",
    columns=[
        ("game_id", pa.string(), "games.game_id of the game"),
        ("ply", pa.int32(), "0-based: ply 0 is the first move of the game"),
        ("position_key", pa.uint64(), "Polyglot Zobrist hash of the position before the move"),
        ("uci", pa.string(), "the move played, UCI (e2e4, e7e8q)"),
        ("san", pa.string(), "the move played, SAN as the board writes it"),
        ("clock_s", pa.float64(), "[%clk] after the move, seconds"),
        ("eval_cp", pa.int32(), "[%eval] after the move, White's view, centipawns"),
        ("eval_mate", pa.int32(), "[%eval #n] after the move, White's view"),
    ],
    key=("game_id", "ply"),
    required=("position_key", "uci"),
)

POSITIONS = Table(
    name="positions",
    doc="One row per distinct position, keyed by its Polyglot Zobrist hash.",
    columns=[
        ("position_key", pa.uint64(), "Polyglot Zobrist hash of the position (64 bits)"),
        ("fen", pa.string(), "normalised: board, side, castling, legal ep square"),
        ("source_id", pa.string(), "sources.source_id of the first file the position was seen in"),
        ("first_seen", NOW, "when the position was first stored"),
        ("in_check", pa.bool_(), "the side to move is in check; null in older parts"),
    ],
    key=("position_key",),
    required=("fen",),
)

POSITION_RECORDS = Table(
    name="position_records",
    doc="One row per EPD or FEN line, with its opcodes.",
    columns=[
        ("source_id", pa.string(), "sources.source_id of the EPD or FEN file"),
        ("line", pa.int32(), "1-based line of the record in the (decompressed) file"),
        ("position_key", pa.uint64(), "positions.position_key of the record's position"),
        ("fen", pa.string(), "as given (EPD: with halfmove/fullmove opcodes applied)"),
        ("id", pa.string(), "the id opcode (the record's name, e.g. BK.01)"),
        ("bm", pa.list_(pa.string()), "the bm opcode: best moves, SAN"),
        ("am", pa.list_(pa.string()), "the am opcode: moves to avoid, SAN"),
        ("dm", pa.int32(), "the dm opcode: direct mate in n moves"),
        ("c0", pa.string(), "the c0 opcode (a comment)"),
        ("ops", pa.string(), "every opcode as a JSON object"),
    ],
    key=("source_id", "line"),
)

INGEST_ERRORS = Table(
    name="ingest_errors",
    doc="Bad input met while ingesting: the rest of the file is still ingested.",
    columns=[
        ("source_id", pa.string(), "sources.source_id of the file"),
        ("path", pa.string(), "the file's path as it was given to ingest"),
        ("game_index", pa.int32(), "PGN: 0-based game index, else null"),
        ("line", pa.int32(), "1-based line in the (decompressed) file"),
        ("kind", pa.string(),
         "illegal_move, bad_tag, unknown_variant, bad_fen, unclosed_comment, unclosed_variation, "
         "truncated, collision, ..."),
        ("message", pa.string(), "what was wrong, naming the bad value"),
        ("recorded_at", NOW, "when the error was recorded"),
        ("byte_offset", pa.int64(),
         "binary formats (binpack): byte offset in the decompressed file of the chain or chunk "
         "at fault; null for text (line says where). Added later: null in older parts."),
    ],
    # the message too: one game can hold several errors of a kind (collisions of two keys)
    key=("source_id", "game_index", "line", "kind", "message"),
    nullable_key=("game_index", "line"),     # EPD/FEN errors have no game, some no line
)

TABLES = [SOURCES, GAMES, MOVES, POSITIONS, POSITION_RECORDS, INGEST_ERRORS]

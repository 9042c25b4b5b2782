"""From chunks of PGN games to warehouse rows: replay each main line, write games, moves and
positions parts.

This runs in the worker processes, in two steps per chunk of games: :func:`parse_stage` reads
the chunk and returns each game's base key (:mod:`pipelines.ingest.keys`); the main process
numbers identical records in file order (which needs every earlier chunk's keys) and sends the
final keys to :func:`write_stage`, in the same process, which replays the games and writes
their ``moves`` parts, the chunk's new ``positions`` (deduped against the warehouse, Zobrist
collisions found) and its ``games`` part, in that order, and returns its counts, errors and
clashing positions to the main process (which counts and reports each collision once).

A chunk from the compiled splitter is read and replayed by the compiled reader
(:mod:`pipelines.ingest._pgn`) when the replay in use is the compiled core's: its columns go to
Arrow without a Python object per move. Otherwise (another replay, or no compiled module) the
Python reader and the replay function do it, game by game, with the same rows as the result.

Every record of a file is a game (see :mod:`pipelines.ingest.keys`): a game already stored by
a committed source (one with its ``sources`` row, so its moves and positions are all written)
is counted as a duplicate and nothing of it is written again. Games of a source whose ingest
was killed do not count, so its rerun writes them again under the same keys (the keyed write
keeps the stored rows).
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipelines.ingest.chunks import Chunk, _pgn, raw_games
from pipelines.ingest.config import capped, quoted
from pipelines.ingest.keys import Occurrences, game_key, tags_json
from pipelines.ingest.lookup import stored_lookup
from pipelines.ingest.pgn import ParsedGame, Problem, RawGame, parse_game, unclosed_comment
from pipelines.ingest.positions import PositionSink
from pipelines.ingest.replay import (
    Replay,
    ReplayFunction,
    is_core,
    replay_function,
    replay_reference,
)
from warehouse import Lake
from warehouse.schema import conform
from warehouse.tables import table

log = logging.getLogger(__name__)

# Variant tag values read as standard chess, and as Chess960 (python-chess's aliases).
STANDARD_VARIANTS = frozenset({"", "standard", "chess", "classical", "normal", "illegal",
                               "from position"})
CHESS960_VARIANTS = frozenset({"chess960", "chess 960", "fischerandom", "fischerrandom",
                               "fischer random"})
STANDARD_CASTLING = frozenset("KQkq-")
GAME_TAGS = {"event": "Event", "site": "Site", "date": "Date", "round": "Round",
             "white": "White", "black": "Black", "result": "Result",
             "time_control": "TimeControl", "termination": "Termination", "eco": "ECO",
             "opening": "Opening"}
# The FEN that python-chess and the core quote at the end of their errors (quoted once, capped).
FEN_QUOTE = re.compile(r"\s+(?:in|of)\s+fen:\s+'.*\Z", re.DOTALL)
# A replay pauses and its moves so far are written when they reach this many rows (a game
# longer than a batch): memory is bounded by the batch, not by the longest game.
ROW_LIMIT = 1 << 18
POSITION_SCHEMA = pa.schema([("position_key", pa.uint64()), ("fen", pa.string()),
                             ("game_index", pa.int32()), ("line", pa.int32())])
# The compiled reader's positions: also whether the side to move is in check (null where the
# reader did not replay the board itself: Chess960 games replayed by python-chess).
READER_POSITION_SCHEMA = POSITION_SCHEMA.append(pa.field("in_check", pa.bool_()))


@dataclass(frozen=True)
class ChunkJob:
    """What a worker needs to turn a chunk of games into rows."""

    home: str
    source_id: str
    path: str
    games: list[RawGame] | Chunk    # the Python reader's games, or a compiled chunk
    number: int = 0     # the chunk's place in its file (0, 1, ...)


@dataclass
class ParsedChunk:
    """A chunk's parsed games, their tags as JSON and their base keys (first occurrences)."""

    job: ChunkJob
    games: list[ParsedGame]
    tags: list[str]
    bases: list[str]


@dataclass
class CompiledChunk:
    """A chunk read by the compiled reader, and its games' base keys."""

    job: ChunkJob
    reader: Any     # pipelines.ingest._pgn.ChunkReader
    bases: list[str]


@dataclass
class ChunkResult:
    """A chunk's counts, its error rows and the positions that clash with a FEN stored first
    (to count and report once per file)."""

    games: int = 0
    plies: int = 0
    duplicates: int = 0
    new_positions: int = 0
    clashes: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


class ChunkRows:
    """Column lists for the games, moves and positions of one chunk."""

    def __init__(self, source_id: str, path: str) -> None:
        self.source_id, self.path = source_id, path
        self.games: list[dict[str, Any]] = []
        self.moves: dict[str, list[Any]] = {name: [] for name in (
            "game_id", "ply", "position_key", "uci", "san", "clock", "eval")}
        self.positions: dict[str, list[Any]] = {name: [] for name in POSITION_SCHEMA.names}
        self.errors: list[dict[str, Any]] = []
        self.plies = self.duplicates = 0

    def error(self, game: ParsedGame, line: int, kind: str, message: str) -> None:
        self.errors.append({"source_id": self.source_id, "path": self.path,
                            "game_index": game.index, "line": line, "kind": kind,
                            "message": capped(message)})

    def add_positions(self, game: ParsedGame, keys: list[int], fens: list[str]) -> None:
        """Every position a game passes through: the sink keeps the first row of each key
        (in file order) and reports a FEN that clashes with it."""
        out = self.positions
        out["position_key"].extend(keys)
        out["fen"].extend(fens)
        out["game_index"].extend([game.index] * len(keys))
        out["line"].extend([game.line] * len(keys))

    def add_moves(self, game_id: str, game: ParsedGame, replay: Replay) -> None:
        keys, _, ucis, sans, _ = replay
        plies = len(ucis)
        moves = self.moves
        moves["game_id"].extend([game_id] * plies)
        moves["ply"].extend(range(plies))
        moves["position_key"].extend(keys[:plies])
        moves["uci"].extend(ucis)
        moves["san"].extend(sans)
        moves["clock"].extend(game.clocks[:plies])
        moves["eval"].extend(game.evals[:plies])
        self.plies += plies

    def write(self, lake: Lake) -> ChunkResult:
        """Moves first, then new positions: a ``games`` row on disk means its moves and
        positions are too."""
        moves = self.moves
        return write_rows(lake, self.source_id, self.path, pa.table({
            "game_id": moves["game_id"], "ply": pa.array(moves["ply"], pa.int32()),
            "position_key": pa.array(moves["position_key"], pa.uint64()),
            "uci": moves["uci"], "san": moves["san"],
            "clock_s": clock_seconds(pa.array(moves["clock"], pa.string())),
            **eval_columns(pa.array(moves["eval"], pa.string()))}),
            pa.table(self.positions, schema=POSITION_SCHEMA), self.games,
            ChunkResult(len(self.games) + self.duplicates, self.plies, self.duplicates,
                        errors=self.errors))


def write_rows(lake: Lake, source_id: str, path: str, moves: pa.Table, positions: pa.Table,
               games: pa.Table | list[dict[str, Any]], result: ChunkResult) -> ChunkResult:
    """Write a chunk's moves, its new positions, then its games; count the new positions."""
    return ChunkWriter(lake, source_id, path).finish(moves, positions, games, result)


class ChunkWriter:
    """Writes a chunk's moves and new positions (in parts, when one game is longer than a
    batch), then its games. Keys are unique within a chunk: (game, ply) of distinct game
    keys, one row per key, so the lake skips that check."""

    def __init__(self, lake: Lake, source_id: str, path: str) -> None:
        self.lake = lake
        self.sink = PositionSink(lake, source_id, path)
        self.clashes: list[dict[str, Any]] = []

    def part(self, moves: pa.Table, positions: pa.Table, distinct: bool) -> None:
        """Moves, and positions (``distinct``: each key once, as the compiled reader gives
        them unless two FENs came under one key)."""
        self.lake.write("moves", moves, unique=True)
        self.sink.add(positions)
        self.clashes += self.sink.write_new(distinct)

    def finish(self, moves: pa.Table, positions: pa.Table,
               games: pa.Table | list[dict[str, Any]], result: ChunkResult,
               distinct: bool = False) -> ChunkResult:
        """The last part, then the games: a ``games`` row on disk means its moves and
        positions are too."""
        self.part(moves, positions, distinct)
        self.lake.write("games", games, unique=True)
        result.clashes, result.new_positions = self.clashes, self.sink.new_positions
        return result


def clock_seconds(clocks: pa.Array) -> pa.Array:
    """``[%clk h:mm:ss(.f)]`` texts as seconds, a whole column at once.

    >>> clock_seconds(pa.array(["0:03:00", "1:00:07.5", None])).to_pylist()
    [180.0, 3607.5, None]
    """
    parts = pc.split_pattern(clocks, ":")
    hours, minutes, seconds = (pc.cast(pc.list_element(parts, i), pa.float64()) for i in range(3))
    return pc.add(pc.add(pc.multiply(hours, 3600.0), pc.multiply(minutes, 60.0)), seconds)


def eval_columns(evals: pa.Array) -> dict[str, pa.Array]:
    """``[%eval]`` texts as centipawns (python-chess's rounding) or mate distances.

    >>> cols = eval_columns(pa.array(["0.17", "-1.5", "#-3", "#+2", None]))
    >>> cols["eval_cp"].to_pylist(), cols["eval_mate"].to_pylist()
    ([17, -150, None, None, None], [None, None, -3, 2, None])
    """
    mate = pc.starts_with(evals, "#")
    pawns = pc.cast(pc.if_else(mate, None, evals), pa.float64())
    mates = pc.if_else(mate, pc.utf8_ltrim(evals, "#+"), None)
    return {"eval_cp": pc.cast(pc.round(pc.multiply(pawns, 100.0)), pa.int32()),
            "eval_mate": pc.cast(mates, pa.int32())}


def parse_chunk(job: ChunkJob) -> ParsedChunk | CompiledChunk:
    """Read a chunk's games and hash each one's tags and moves (the compiled reader when the
    chunk is compiled and the replay is the core's)."""
    if _pgn is not None and isinstance(job.games, tuple) and is_core(replay_function()):
        reader = _pgn.ChunkReader(job.games)
        return CompiledChunk(job, reader, reader.parse())
    games = [parse_game(raw) for raw in raw_games(job.games)]
    tags = [tags_json(game.tags) for game in games]
    return ParsedChunk(job, games, tags,
                       [game_key(text, game.sans) for text, game in zip(tags, games, strict=True)])


def write_chunk(parsed: ParsedChunk | CompiledChunk, keys: list[str],
                replay: ReplayFunction | None = None) -> ChunkResult:
    """Replay a parsed chunk's games under their final ``keys``; write their moves, new
    positions and games parts, return the rest. Games already stored by a committed source are
    only counted (``duplicates``)."""
    if isinstance(parsed, CompiledChunk):
        return write_compiled(parsed, keys)
    job = parsed.job
    replay = replay or replay_function()
    lake = Lake(job.home)
    rows = ChunkRows(job.source_id, job.path)
    stored = stored_game_keys(lake, keys)
    for game, key, text in zip(parsed.games, keys, parsed.tags, strict=True):
        if key in stored:
            rows.duplicates += 1
        else:
            add_game(rows, key, text, game, replay)
    return rows.write(lake)


def process_chunk(job: ChunkJob, occurrences: Occurrences) -> ChunkResult:
    """Both steps in this process (``occurrences`` numbers the file's records so far)."""
    parsed = parse_chunk(job)
    return write_chunk(parsed, occurrences.keys(parsed.bases))


# Chunks parsed by this worker process and waiting for their keys, by (source_id, number).
_PARSED: dict[tuple[str, int], ParsedChunk | CompiledChunk] = {}


def parse_stage(job: ChunkJob) -> list[str]:
    """Step one in a worker: parse the chunk, keep it here, return its base keys."""
    parsed = parse_chunk(job)
    _PARSED[(job.source_id, job.number)] = parsed
    return parsed.bases


def write_stage(source_id: str, number: int, keys: list[str]) -> ChunkResult:
    """Step two in the worker that parsed the chunk: write it under its final keys."""
    parsed = _PARSED.pop((source_id, number), None)
    if parsed is None:
        raise RuntimeError(f"ingest worker {os.getpid()}: chunk {number} of "
                           f"source {source_id[:16]} was not parsed here")
    return write_chunk(parsed, keys)


class CompiledRows:
    """The ``games`` columns and the errors of a compiled chunk's written games."""

    NAMES = ("game_id", *GAME_TAGS, "white_elo", "black_elo", "variant", "start_fen", "plies",
             "error")

    def __init__(self, source_id: str, path: str) -> None:
        self.source_id, self.path = source_id, path
        self.columns: dict[str, list[Any]] = {name: [] for name in self.NAMES}
        self.written: list[int] = []      # the chunk's games written, by place in the chunk
        self.errors: list[dict[str, Any]] = []
        self.plies = 0

    def error(self, index: int, line: int, kind: str, message: str) -> None:
        self.errors.append({"source_id": self.source_id, "path": self.path,
                            "game_index": index, "line": line, "kind": kind,
                            "message": capped(message)})

    def table(self, reader: Any) -> pa.Table:
        """The games columns, with the reader's game_index, line and tags of the games."""
        written = pa.array(self.written, pa.int32())
        return pa.table({
            **self.columns, "source_id": pa.repeat(pa.scalar(self.source_id), len(written)),
            "game_index": pc.take(reader.record_column(0), written),
            "line": pc.take(reader.record_column(1), written),
            "tags": pc.take(reader.tags_json(), written)})


def write_compiled(parsed: CompiledChunk, keys: list[str]) -> ChunkResult:
    """:func:`write_chunk` for a compiled chunk: the compiled reader replays every game not
    stored yet into Arrow columns, standard games from the start position in one call, the
    others (set-up positions, variants, Chess960 through python-chess, broken tags, unclosed
    comments or variations) one by one."""
    job, reader = parsed.job, parsed.reader
    lake = Lake(job.home)
    stored = stored_game_keys(lake, keys)
    rows = CompiledRows(job.source_id, job.path)
    writer = ChunkWriter(lake, job.source_id, job.path)
    key_array = pa.array(keys, pa.string())

    def columns() -> tuple[pa.Table, pa.Table, bool]:
        """The reader's columns, taken without a copy."""
        moves = reader.moves(take=True)
        game_ids = pc.take(key_array, moves.pop("game"))
        distinct = reader.distinct_positions
        positions = reader.positions(take=True)
        positions["in_check"] = pc.cast(positions["in_check"], pa.bool_())
        return (pa.table({"game_id": game_ids, **moves}),
                pa.table(positions, schema=READER_POSITION_SCHEMA), distinct)

    def flush() -> None:    # a game longer than a batch: its moves so far
        writer.part(*columns())

    reader.row_limit = ROW_LIMIT
    reader.start_replay()
    skip = bytes(key in stored for key in keys)
    standard, plies, failures, others = reader.replay_standard(skip, flush)
    games = standard_games(rows, reader, key_array, standard, plies, failures)
    for i in others:
        add_compiled_game(rows, reader, i, keys[i], flush)
    rows.errors.sort(key=lambda row: row["game_index"])   # file order, as the Python reader
    moves, positions, distinct = columns()
    games_table = pa.concat_tables([games, conform(table("games"), rows.table(reader))])
    return writer.finish(moves, positions, games_table,
                         ChunkResult(len(keys), rows.plies, len(keys) - games_table.num_rows,
                                     errors=rows.errors),
                         distinct)


def standard_games(rows: CompiledRows, reader: Any, keys: pa.Array, games: list[int],
                   plies: list[int], failures: dict[int, tuple[int, str]]) -> pa.Table:
    """The games table rows of standard games replayed by the compiled reader (as
    :func:`game_row`), and the errors of those whose replay stopped at a move."""
    errors: list[str | None] = [None] * len(games)
    if failures:
        place = {i: n for n, i in enumerate(games)}
        for i, (ply, reason) in failures.items():
            index, line = reader.record(i)[:2]
            error = f"ply {ply}: {reason}"
            rows.error(index, line, "illegal_move", error)
            errors[place[i]] = capped(error)
    rows.plies += sum(plies)
    written = pa.array(games, pa.int32())
    return conform(table("games"), pa.table({
        "game_id": pc.take(keys, written), **reader.game_columns(games),
        "variant": pa.repeat(pa.scalar("standard"), len(games)),
        "plies": pa.array(plies, pa.int32()), "error": pa.array(errors, pa.string()),
        "source_id": pa.repeat(pa.scalar(rows.source_id), len(games)),
        "game_index": pc.take(reader.record_column(0), written),
        "line": pc.take(reader.record_column(1), written),
        "tags": pc.take(reader.tags_json(), written)}))


def add_compiled_game(rows: CompiledRows, reader: Any, i: int, game_id: str,
                      flush: Callable[[], None]) -> None:
    """:func:`add_game` for game ``i`` of a compiled chunk."""
    index, line, *_, opened, next_game = reader.record(i)
    problems = compiled_problems(reader, i, opened, next_game)
    for tag_line, text in reader.bad_tags[i] or ():
        rows.error(index, tag_line, "bad_tag",
                   f"broken tag line {quoted(text.decode('utf-8'))}")
    for problem in problems:
        rows.error(index, problem.line, problem.kind, problem.message)
    tags = dict(zip(_pgn.KNOWN_TAGS, reader.known_tags(i), strict=True))
    variant = (tags["Variant"] or "").strip().lower()
    if variant in STANDARD_VARIANTS or variant.startswith("wild/") or variant in CHESS960_VARIANTS:
        plies, error = replay_compiled(rows, reader, i, index, line, tags["FEN"],
                                       variant in CHESS960_VARIANTS, flush)
    else:
        plies, error = 0, f"unknown variant {quoted(tags['Variant'])}"
        rows.error(index, line, "unknown_variant", error)
    error = capped(error) if error else (problems[0].message if problems else None)
    rows.plies += plies
    result = tags["Result"]
    if result in (None, "*") and (marker := reader.result(i)):
        result = marker  # as python-chess: the marker fills an unknown result
    columns = rows.columns
    rows.written.append(i)
    for name, tag in GAME_TAGS.items():
        columns[name].append(result if tag == "Result" else tags[tag])
    for name, value in (("game_id", game_id), ("white_elo", elo(tags["WhiteElo"])),
                        ("black_elo", elo(tags["BlackElo"])),
                        ("variant", variant_name(tags["Variant"], tags["FEN"])),
                        ("start_fen", tags["FEN"]),
                        ("plies", plies), ("error", error)):
        columns[name].append(value)


def compiled_problems(reader: Any, i: int, opened: int, next_game: int) -> list[Problem]:
    """The unclosed comment and variation of game ``i`` of a compiled chunk, as the Python
    reader words them."""
    problems = [unclosed_comment(opened, next_game)] if opened else []
    if (variation := reader.variation_line(i)) is not None:
        problems.append(Problem(variation, "unclosed_variation", (
            f"unclosed ( variation opened on line {variation}: the main line stops at ply "
            f"{reader.plies_read(i)}")))
    return problems


def replay_compiled(rows: CompiledRows, reader: Any, i: int, index: int, line: int,
                    fen: str | None, chess960: bool,
                    flush: Callable[[], None]) -> tuple[int, str | None]:
    """:func:`replay_game` for game ``i`` of a compiled chunk (``flush`` takes the columns
    when the replay pauses, full)."""
    try:
        if chess960 or has_960_castling(fen):
            keys, fens, ucis, sans, failure = replay_reference(fen, reader.sans(i), chess960=True)
            reader.add_replay(i, keys, fens, ucis, sans)
            plies = len(ucis)
        else:
            plies, failure, paused = reader.replay(i, fen)
            while paused:
                flush()
                plies, failure, paused = reader.resume()
    except ValueError as exc:
        error = f"bad FEN tag {quoted(str(fen))}: {FEN_QUOTE.sub('', str(exc))}"
        rows.error(index, line, "bad_fen", error)
        return 0, error
    if failure is None:
        return plies, None
    error = f"ply {failure[0]}: {failure[1]}"
    rows.error(index, line, "illegal_move", error)
    return plies, error


def stored_game_keys(lake: Lake, keys: list[str]) -> set[str]:
    """Those of ``keys`` that a committed source (one with its sources row) stored already."""
    games = lake.key_files("games", pa.array(keys, pa.string()))   # the files the index names
    sources = lake.parts("sources") if games else []
    if not sources or not games:
        return set()
    found = stored_lookup("ingest_stored_games",
                          {"batch_games": pa.table({"game_id": pa.array(keys, pa.string())})},
                          {"known_games": (games, "game_id, source_id"),
                           "committed_sources": (sources, "source_id")})
    return set(found.column("game_id").to_pylist())


def add_game(rows: ChunkRows, game_id: str, tags: str, game: ParsedGame,
             replay: ReplayFunction) -> None:
    """Replay one game into ``rows``, recording its errors (the plies before one are kept)."""
    for line, text in game.bad_tags:
        rows.error(game, line, "bad_tag", f"broken tag line {quoted(text)}")
    for problem in game.problems:
        rows.error(game, problem.line, problem.kind, problem.message)
    variant = game.tags.get("Variant", "").strip().lower()
    if variant in STANDARD_VARIANTS or variant.startswith("wild/") or variant in CHESS960_VARIANTS:
        plies, error = replay_game(rows, game_id, game, replay, variant in CHESS960_VARIANTS)
    else:
        plies, error = 0, f"unknown variant {quoted(game.tags['Variant'])}"
        rows.error(game, game.line, "unknown_variant", error)
    error = capped(error) if error else (game.problems[0].message if game.problems else None)
    rows.games.append(game_row(rows.source_id, game_id, tags, game, plies, error))


def replay_game(rows: ChunkRows, game_id: str, game: ParsedGame, replay: ReplayFunction,
                chess960: bool) -> tuple[int, str | None]:
    """Add a game's moves and positions; (plies replayed, why replay stopped early or None)."""
    fen = game.tags.get("FEN")
    try:
        if chess960 or has_960_castling(fen):
            result = replay_reference(fen, game.sans, chess960=True)
        else:
            result = replay(fen, game.sans)
    except ValueError as exc:
        error = f"bad FEN tag {quoted(str(fen))}: {FEN_QUOTE.sub('', str(exc))}"
        rows.error(game, game.line, "bad_fen", error)
        return 0, error
    rows.add_moves(game_id, game, result)
    rows.add_positions(game, result[0], result[1])
    if result[4] is None:
        return len(result[2]), None
    ply, reason = result[4]
    error = f"ply {ply}: {reason}"
    rows.error(game, game.line, "illegal_move", error)
    return len(result[2]), error


def has_960_castling(fen: str | None) -> bool:
    """Whether a FEN's castling field names rook files (Shredder/X-FEN), as python-chess checks."""
    if not fen:
        return False
    fields = fen.split()
    return len(fields) > 2 and not set(fields[2]) <= STANDARD_CASTLING


def game_row(source_id: str, game_id: str, tags_text: str, game: ParsedGame, plies: int,
             error: str | None) -> dict[str, Any]:
    tags = game.tags
    row: dict[str, Any] = {name: tags.get(tag) for name, tag in GAME_TAGS.items()}
    row.update(
        game_id=game_id, source_id=source_id, game_index=game.index, line=game.line,
        white_elo=elo(tags.get("WhiteElo")), black_elo=elo(tags.get("BlackElo")),
        variant=variant_name(tags.get("Variant"), tags.get("FEN")), start_fen=tags.get("FEN"),
        plies=plies, error=error, tags=tags_text)
    if row["result"] in (None, "*") and game.result:
        row["result"] = game.result  # as python-chess: the marker fills an unknown result
    return row


def variant_name(tag: str | None, fen: str | None) -> str:
    """'standard' or 'chess960' for their aliases, else the tag as written; a game with no
    Variant tag (or a standard one) whose FEN names rook files for castling is Chess960, as
    it is replayed."""
    name = (tag or "").strip().lower()
    if name in STANDARD_VARIANTS:
        return "chess960" if has_960_castling(fen) else "standard"
    return "chess960" if name in CHESS960_VARIANTS else str(tag)


def elo(text: str | None) -> int | None:
    """A rating tag as an int; '?', '-' or junk give None."""
    return int(text) if text and text.isdigit() and len(text) < 6 else None

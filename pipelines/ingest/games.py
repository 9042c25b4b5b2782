"""From raw PGN games to warehouse rows: replay each main line, write games and moves parts.

This runs in the worker processes, in two steps per chunk of games: :func:`parse_stage` parses
the chunk and returns each game's base key (:mod:`pipelines.ingest.keys`); the main process
numbers identical records in file order (which needs every earlier chunk's keys) and sends the
final keys to :func:`write_stage`, in the same process, which replays the games, writes their
``games`` and ``moves`` parts and returns the chunk's distinct positions and its errors to the
main process, which dedupes positions across chunks, files and the warehouse.

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
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipelines.ingest.config import capped, quoted
from pipelines.ingest.keys import Occurrences, game_key, tags_json
from pipelines.ingest.lookup import stored_lookup
from pipelines.ingest.pgn import ParsedGame, RawGame, parse_game
from pipelines.ingest.replay import Replay, ReplayFunction, replay_function, replay_reference
from warehouse import Lake

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
POSITION_SCHEMA = pa.schema([("position_key", pa.uint64()), ("fen", pa.string()),
                             ("game_index", pa.int32()), ("line", pa.int32())])


@dataclass(frozen=True)
class ChunkJob:
    """What a worker needs to turn a chunk of games into rows."""

    home: str
    source_id: str
    path: str
    games: list[RawGame]
    number: int = 0     # the chunk's place in its file (0, 1, ...)


@dataclass
class ParsedChunk:
    """A chunk's parsed games, their tags as JSON and their base keys (first occurrences)."""

    job: ChunkJob
    games: list[ParsedGame]
    tags: list[str]
    bases: list[str]


@dataclass
class ChunkResult:
    """A chunk's counts, its distinct (key, fen) pairs and its error rows."""

    games: int = 0
    plies: int = 0
    duplicates: int = 0
    positions: pa.Table = field(default_factory=POSITION_SCHEMA.empty_table)
    errors: list[dict[str, Any]] = field(default_factory=list)


class ChunkRows:
    """Column lists for the games, moves and positions of one chunk."""

    def __init__(self, source_id: str, path: str) -> None:
        self.source_id, self.path = source_id, path
        self.games: list[dict[str, Any]] = []
        self.moves: dict[str, list[Any]] = {name: [] for name in (
            "game_id", "ply", "position_key", "uci", "san", "clock", "eval")}
        self.seen: dict[int, str] = {}
        self.positions: dict[str, list[Any]] = {name: [] for name in POSITION_SCHEMA.names}
        self.collisions: set[tuple[int, str]] = set()
        self.errors: list[dict[str, Any]] = []
        self.plies = self.duplicates = 0

    def error(self, game: ParsedGame, line: int, kind: str, message: str) -> None:
        self.errors.append({"source_id": self.source_id, "path": self.path,
                            "game_index": game.index, "line": line, "kind": kind,
                            "message": capped(message)})

    def add_positions(self, game: ParsedGame, keys: list[int], fens: list[str]) -> None:
        """Keep the (key, fen) pairs not seen yet in this chunk (a FEN object stored just now
        is the one passed in, hence the identity test)."""
        store = self.seen.setdefault
        stored = [store(key, fen) for key, fen in zip(keys, fens, strict=False)]
        fresh = [kept is fen for kept, fen in zip(stored, fens, strict=False)]
        new_keys = list(compress(keys, fresh))
        new_fens = list(compress(fens, fresh))
        if len(new_keys) < len(keys):
            for key, fen, kept in zip(keys, fens, stored, strict=False):
                if kept is not fen and kept != fen and (key, fen) not in self.collisions:
                    self.collisions.add((key, fen))
                    new_keys.append(key)
                    new_fens.append(fen)
        out = self.positions
        out["position_key"].extend(new_keys)
        out["fen"].extend(new_fens)
        out["game_index"].extend([game.index] * len(new_keys))
        out["line"].extend([game.line] * len(new_keys))

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

    def write(self, lake: Lake) -> None:
        """Moves first: a ``games`` row on disk means its moves are too."""
        moves = self.moves
        lake.write("moves", pa.table({
            "game_id": moves["game_id"], "ply": pa.array(moves["ply"], pa.int32()),
            "position_key": pa.array(moves["position_key"], pa.uint64()),
            "uci": moves["uci"], "san": moves["san"],
            "clock_s": clock_seconds(pa.array(moves["clock"], pa.string())),
            **eval_columns(pa.array(moves["eval"], pa.string()))}))
        lake.write("games", self.games)

    def result(self) -> ChunkResult:
        return ChunkResult(len(self.games) + self.duplicates, self.plies, self.duplicates,
                           pa.table(self.positions, schema=POSITION_SCHEMA), self.errors)


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


def parse_chunk(job: ChunkJob) -> ParsedChunk:
    """Parse a chunk's games and hash each one's tags and moves."""
    games = [parse_game(raw) for raw in job.games]
    tags = [tags_json(game.tags) for game in games]
    return ParsedChunk(job, games, tags,
                       [game_key(text, game.sans) for text, game in zip(tags, games, strict=True)])


def write_chunk(parsed: ParsedChunk, keys: list[str],
                replay: ReplayFunction | None = None) -> ChunkResult:
    """Replay a parsed chunk's games under their final ``keys``, write their games and moves
    parts, return the rest. Games already stored by a committed source are only counted
    (``duplicates``)."""
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
    rows.write(lake)
    return rows.result()


def process_chunk(job: ChunkJob, occurrences: Occurrences | None = None,
                  replay: ReplayFunction | None = None) -> ChunkResult:
    """Both steps in this process (``occurrences`` numbers the file's records so far; a new
    one treats the chunk as a whole file)."""
    parsed = parse_chunk(job)
    return write_chunk(parsed, (occurrences or Occurrences()).keys(parsed.bases), replay)


# Chunks parsed by this worker process and waiting for their keys, by (source_id, number).
_PARSED: dict[tuple[str, int], ParsedChunk] = {}


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


def stored_game_keys(lake: Lake, keys: list[str]) -> set[str]:
    """Those of ``keys`` that a committed source (one with its sources row) stored already."""
    sources, games = lake.parts("sources"), lake.parts("games")
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
        variant=variant_name(tags.get("Variant")), start_fen=tags.get("FEN"),
        plies=plies, error=error, tags=tags_text)
    if row["result"] in (None, "*") and game.result:
        row["result"] = game.result  # as python-chess: the marker fills an unknown result
    return row


def variant_name(tag: str | None) -> str:
    """'standard' or 'chess960' for their aliases, else the tag as written."""
    name = (tag or "").strip().lower()
    if name in STANDARD_VARIANTS:
        return "standard"
    return "chess960" if name in CHESS960_VARIANTS else str(tag)


def elo(text: str | None) -> int | None:
    """A rating tag as an int; '?', '-' or junk give None."""
    return int(text) if text and text.isdigit() and len(text) < 6 else None

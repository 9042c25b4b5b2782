"""Openings: start positions and book moves from EPD, PGN or a Polyglot book.

An opening is a start FEN plus the moves played from it; games replay the moves (marked
``book`` in the PGN) before the engines take over.
"""
from __future__ import annotations

import random
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot

from engines.stamps import file_sha256
from pipelines.games.game import Opening
from pipelines.tournament.config import TournamentConfig, TournamentError

MAX_BOOK_WALK_TRIES = 20


def load_openings(config: TournamentConfig) -> list[Opening]:
    """The openings in the order rounds use them (round r plays opening r mod n)."""
    if not config.openings:
        return [Opening()]
    openings = read_openings(config.openings, config.opening_plies, config.rounds, config.seed)
    if config.opening_order == "random":
        random.Random(config.seed).shuffle(openings)
    return openings


def read_openings(file: str, plies: int, count: int, seed: int) -> list[Opening]:
    """The openings of an .epd, .pgn (first ``plies`` plies) or Polyglot .bin file (``count``
    book walks of ``plies`` plies, seeded by ``seed``), in file order."""
    path = Path(file)
    if not path.is_file():
        raise TournamentError(f"opening file {str(path)!r} not found")
    suffix = path.suffix.lower()
    if suffix == ".epd":
        openings = read_epd(path)
    elif suffix == ".pgn":
        openings = read_pgn(path, plies)
    elif suffix == ".bin":
        openings = walk_book(path, plies, count, seed)
    else:
        raise TournamentError(f"opening file {str(path)!r}: use .epd, .pgn or .bin")
    if not openings:
        raise TournamentError(f"opening file {str(path)!r} holds no opening")
    return openings


def read_epd(path: Path) -> list[Opening]:
    openings: list[Opening] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            board, ops = chess.Board.from_epd(line)
        except ValueError as exc:
            raise TournamentError(f"{path}:{number}: bad EPD {line.strip()!r}: {exc}") from None
        openings.append(Opening(fen=board.fen(), name=str(ops["id"]) if "id" in ops else None,
                                eco=str(ops["eco"]) if "eco" in ops else None))
    return openings


def read_pgn(path: Path, plies: int) -> list[Opening]:
    openings: list[Opening] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.errors:
                raise TournamentError(f"{path}: game {len(openings) + 1}: {game.errors[0]}")
            board = game.board()
            fen = board.fen()
            moves = [move.uci() for move in list(game.mainline_moves())[:plies]]
            openings.append(Opening(fen=fen, moves=tuple(moves),
                                    eco=game.headers.get("ECO"),
                                    name=game.headers.get("Opening")))
    return openings


def walk_book(path: Path, plies: int, count: int, seed: int) -> list[Opening]:
    """``count`` distinct lines of ``plies`` weighted-random book moves (fewer if the book
    runs out of distinct lines)."""
    rng = random.Random(seed)
    openings: dict[tuple[str, ...], Opening] = {}
    with chess.polyglot.open_reader(path) as book:
        for _ in range(count * MAX_BOOK_WALK_TRIES):
            if len(openings) >= count:
                break
            board = chess.Board()
            for _ in range(plies):
                try:
                    board.push(book.weighted_choice(board, random=rng).move)
                except IndexError:   # out of book
                    break
            line = tuple(m.uci() for m in board.move_stack)
            openings.setdefault(line, Opening(moves=line))
    return list(openings.values())


def file_digest(path: str | None) -> str | None:
    """SHA-256 of an opening file (part of the tournament id: the same file elsewhere is the
    same tournament, an edited file is a new one)."""
    if not path:
        return None
    try:
        return file_sha256(path)
    except OSError as exc:
        raise TournamentError(f"cannot read opening file {path!r}: {exc}") from None

"""One PUCT self-play game: the search of :mod:`engines.puct.search` plays both sides from a
start, recording each fully searched position with its visit distribution, the move played,
the net's value, the search's Q and the material-shaped target; the outcome is filled in
when the game ends. Runs in a worker process (torch limited to one thread there)."""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import chess

from engines.puct import PuctConfig
from engines.puct.network import Architecture, PolicyValueNet, load_network, random_network
from engines.puct.search import NetEvaluator, Puct
from pipelines.games.adjudication import Adjudicator
from pipelines.puct.config import SelfplayTrainConfig
from pipelines.puct.endgames import endgame

#: Paper 002's relative piece values (the king excluded).
PIECE_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
RANDOM_MODEL = "random"

_NETS: dict[str, PolicyValueNet] = {}
_TABLES: dict[str, Adjudicator] = {}


def material_target(board: chess.Board, scale: float) -> float:
    """clip((the mover's material - the opponent's) / scale, -1, 1).

    >>> material_target(chess.Board("4k3/8/8/8/8/8/8/3QK3 b - - 0 1"), 10.0)
    -0.9
    """
    diff = sum(v * (len(board.pieces(p, board.turn)) - len(board.pieces(p, not board.turn)))
               for p, v in PIECE_VALUES.items())
    return max(-1.0, min(1.0, diff / scale))


def start_fen(config: SelfplayTrainConfig, round_: int, game: int) -> str:
    """Game ``game`` of round ``round_``: an endgame start (index over the whole run, so no
    start repeats) or the start position."""
    index = (round_ - 1) * config.games + game
    if config.starts == "startpos" or (config.starts == "mixed" and game % 2):
        return chess.STARTING_FEN
    return endgame(index, config.seed)


def network(config: SelfplayTrainConfig, artifact: str | None) -> PolicyValueNet:
    """The playing net (cached per process): the artifact, or round 1's untrained net."""
    key = artifact or f"random:{config.seed}:{config.blocks}:{config.channels}"
    if key not in _NETS:
        _NETS[key] = load_network(artifact) if artifact else random_network(
            Architecture(config.blocks, config.channels, config.value_hidden), config.seed)
    return _NETS[key]


def tables(config: SelfplayTrainConfig) -> Adjudicator | None:
    """The adjudicating tablebases (opened once per process), None without any."""
    folders = config.tablebase_folders()
    if folders is None:
        return None
    if folders not in _TABLES:
        _TABLES[folders] = Adjudicator(tablebases=folders)
    return _TABLES[folders]


@dataclass
class GameRecord:
    """A finished game: its samples (rows of ``selfplay_samples``) and its summary row."""

    samples: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] = field(default_factory=dict)


def termination(board: chess.Board, max_plies: int, plies: int,
                tablebases: Adjudicator | None = None) -> tuple[str, str] | None:
    """(result, reason) when the game is over (threefold and fifty moves end it at once; a
    position the tablebases cover ends it with their verdict).

    >>> termination(chess.Board("8/8/8/8/8/2k5/8/K1Q5 w - - 0 1"), 60, 0) is None
    True
    """
    if board.is_checkmate():
        return ("0-1" if board.turn == chess.WHITE else "1-0"), "checkmate"
    for reason, over in (("stalemate", board.is_stalemate()),
                         ("insufficient", board.is_insufficient_material()),
                         ("fifty", board.halfmove_clock >= 100),
                         ("repetition", board.is_repetition(3))):
        if over:
            return "1/2-1/2", reason
    verdict = tablebases.tablebase_verdict(board) if tablebases is not None else None
    if verdict is not None:
        return verdict[0], "tablebase"
    if plies >= max_plies:
        return "1/2-1/2", "max_plies"
    return None


def play_game(config: SelfplayTrainConfig, run_id: str, round_: int, game: int,
              artifact: str | None, model_id: str) -> GameRecord:
    """Play game ``game`` of round ``round_`` with the net ``artifact`` (None: untrained)."""
    import torch

    torch.set_num_threads(1)
    started = time.monotonic()
    seed = hash((config.seed, round_, game)) % 2**31 + 1
    rng = random.Random(seed)
    search = Puct(NetEvaluator(network(config, artifact)),
                  PuctConfig(formula=config.formula, max_depth=config.max_depth, seed=seed))
    fen = start_fen(config, round_, game)
    board = chess.Board(fen)
    record = GameRecord()
    adjudicator = tables(config)
    while (over := termination(board, config.max_plies, len(board.move_stack),
                               adjudicator)) is None:
        fast = rng.random() < config.fast_share
        root = search.search(board, config.fast_simulations if fast else config.simulations)
        t = config.temperature if len(board.move_stack) < config.temperature_plies \
            else config.late_temperature
        move = search.choose(root, t)
        if not fast:
            visits = root.visits.astype(int).tolist()
            best = max(range(len(visits)), key=visits.__getitem__)
            q = root.value_sum[best] / max(visits[best], 1)
            record.samples.append({
                "run_id": run_id, "round": round_, "game": game, "ply": len(board.move_stack),
                "fen": board.fen(), "moves": [m.uci() for m in root.moves], "visits": visits,
                "played": move.uci(), "outcome": 0.0,
                "material": material_target(board, config.material_scale),
                "net_value": float(root.value or 0.0), "search_value": float(q),
                "model_id": model_id, "turn": board.turn})
        board.push(move)
    result, reason = over
    score = {"1-0": 1.0, "0-1": -1.0}.get(result, 0.0)
    for sample in record.samples:
        turn = sample.pop("turn")
        sample["outcome"] = score if turn == chess.WHITE else -score
    record.game = {"run_id": run_id, "round": round_, "game": game, "start_fen": fen,
                   "result": result, "termination": reason, "plies": len(board.move_stack),
                   "samples": len(record.samples), "model_id": model_id,
                   "seconds": time.monotonic() - started}
    return record


__all__ = ["GameRecord", "material_target", "play_game", "start_fen", "termination"]

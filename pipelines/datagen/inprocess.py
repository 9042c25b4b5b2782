"""chesslab's own engines as datagen's searchers, in the worker's own process: the engine a
player spec names (``alphabeta:eval=hce``) built from its command line exactly as its UCI
program builds it (:func:`engines.uci.load_spec`), then searched directly, with no UCI text
and no process of its own."""
from __future__ import annotations

import chess

from engines.registry import EngineSpec
from engines.uci import load_spec
from pipelines.datagen.games import GameSettings, Searched


class InProcessSearcher:
    """An own engine's searcher (``python -m engines.uci NAME ARGS...``: NAME and ARGS)."""

    def __init__(self, spec: EngineSpec) -> None:
        program, argv = spec.command[3], spec.command[4:]
        uci_spec = load_spec(program, argv)
        self.engine = uci_spec.make_searcher(uci_spec.defaults())
        self.name = uci_spec.name

    def new_game(self, root_fen: str) -> None:
        self.engine.new_game()

    def search(self, board: chess.Board, settings: GameSettings) -> Searched:
        """The last completed iteration of a search to ``settings.depth`` or of
        ``settings.nodes`` nodes (an iteration the node budget cut off does not count)."""
        reports = list(self.engine.iterate(board, max_depth=settings.depth or 100,
                                           max_nodes=settings.nodes))
        last = reports[-1] if reports else None
        if last is None or not last.pv:
            return Searched(None, None, None)
        return Searched(last.score_cp, last.score_mate, last.pv[0].uci())

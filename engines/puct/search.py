"""PUCT search: a Python tree of numpy arrays, leaves evaluated in batches through torch.

A simulation descends from the root by the selection rule of :class:`PuctConfig` (virtual
loss on the way down, so the next simulation of the same batch prefers another line), stops
at a node not yet evaluated, a terminal position or the depth cap, and is backed up once its
batch has been through the network. Values are the mover's expected outcome in [-1, 1]; a
mated mover scores -1, stalemate, insufficient material, the fifty-move rule and a position
repeated inside the search (2-fold, as most engines) score 0.

The tree is kept between moves of one game: a search whose board extends the last root by
the moves played since starts from that subtree (``new_game`` drops it).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence

import chess
import numpy as np
import torch

from engines.puct import PuctConfig
from engines.puct.encoding import legal_indices, planes
from engines.puct.network import PolicyValueNet
from engines.search_report import PvLine, SearchReport

#: Virtual loss added per pending simulation through an edge (a lost game for its mover).
VIRTUAL_LOSS = 1.0
FIRST_REPORT = 16


class Node:
    """A position of the tree: its legal moves, their priors and edge statistics."""

    __slots__ = ("moves", "prior", "visits", "value_sum", "children", "value", "terminal",
                 "total")

    def __init__(self) -> None:
        self.moves: list[chess.Move] = []
        self.prior = np.zeros(0)
        self.visits = np.zeros(0)
        self.value_sum = np.zeros(0)
        self.children: list[Node | None] = []
        self.value: float | None = None      # the net's value (mover's view) once evaluated
        self.terminal: float | None = None   # the game-theoretic value when the game is over
        self.total = 0                       # simulations through this node

    @property
    def evaluated(self) -> bool:
        return self.value is not None or self.terminal is not None

    def expand(self, moves: list[chess.Move], prior: np.ndarray, value: float) -> None:
        self.moves, self.prior, self.value = moves, prior, value
        self.visits = np.zeros(len(moves))
        self.value_sum = np.zeros(len(moves))
        self.children = [None] * len(moves)

    def q(self, fpu: float, fpu_reduction: float = 0.0) -> np.ndarray:
        """Edge Q values, ``fpu`` for the unvisited (see :class:`PuctConfig`)."""
        visited = self.visits > 0
        if fpu_reduction > 0:
            own = (float(self.value or 0.0) + self.value_sum.sum()) / (1 + self.visits.sum())
            fpu = own - fpu_reduction * math.sqrt(float(self.prior[visited].sum()))
        return np.where(visited, self.value_sum / np.maximum(self.visits, 1), fpu)

    def child(self, index: int) -> Node:
        node = self.children[index]
        if node is None:
            node = self.children[index] = Node()
        return node


Evaluation = tuple[list[chess.Move], np.ndarray, float]


class NetEvaluator:
    """Boards -> (legal moves, masked-softmax priors, value) through the net, one batch."""

    def __init__(self, net: PolicyValueNet) -> None:
        self.net = net.eval()
        self.calls = self.positions = 0

    def inputs(self, board: chess.Board) -> tuple[np.ndarray, list[chess.Move], np.ndarray]:
        moves, indices = legal_indices(board)
        return planes(board), moves, indices

    def run(self, prepared: Sequence[tuple[np.ndarray, list[chess.Move], np.ndarray]]
            ) -> list[Evaluation]:
        x = torch.from_numpy(np.stack([p[0] for p in prepared]))
        with torch.inference_mode():
            logits, values = self.net(x)
        self.calls += 1
        self.positions += len(prepared)
        out: list[Evaluation] = []
        for row, (_, moves, indices) in enumerate(prepared):
            chosen = logits[row, torch.from_numpy(indices)].double().numpy()
            prior = np.exp(chosen - chosen.max()) if len(chosen) else chosen
            out.append((moves, prior / prior.sum() if len(prior) else prior,
                        float(values[row])))
        return out

    def __call__(self, boards: Sequence[chess.Board]) -> list[Evaluation]:
        return self.run([self.inputs(b) for b in boards])


def terminal_value(board: chess.Board, in_tree: bool) -> float | None:
    """The mover's value if the game is over here (in the tree a 2-fold repetition draws)."""
    if board.is_insufficient_material() or board.halfmove_clock >= 100 or \
            board.is_repetition(2 if in_tree else 3):
        return 0.0
    if not any(board.generate_legal_moves()):
        return -1.0 if board.is_check() else 0.0
    return None


def cp_from_q(q: float) -> int:
    """A centipawn score from an expected outcome in [-1, 1] (Lc0's mapping).

    >>> cp_from_q(0.0), cp_from_q(0.5) > 100, cp_from_q(-0.5) < -100
    (0, True, True)
    """
    q = max(-0.999, min(0.999, q))
    return round(290.680623072 * math.tan(1.548090806 * q))


def win_rate(q: float) -> float:
    """The expected score in 0..1 of an expected outcome in [-1, 1] (a PvLine's win_rate).

    >>> win_rate(-1.0), win_rate(0.0), win_rate(0.5)
    (0.0, 0.5, 0.75)
    """
    return (1.0 + float(q)) / 2.0


class Puct:
    """The search; ``evaluator`` maps boards to (moves, priors, value)."""

    def __init__(self, evaluator: NetEvaluator, config: PuctConfig | None = None,
                 simulations: int = 100) -> None:
        self.evaluator = evaluator
        self.default_simulations = simulations   # per move when ``go`` sets no node limit
        self.config = config or PuctConfig()
        self.rng = np.random.default_rng(self.config.seed or None)
        self.root: Node | None = None
        self.root_board: chess.Board | None = None
        self.stopped = False
        self.seldepth = 0
        self.simulations = 0
        self.done = 0                        # simulations of the last search() call

    # -- the game ---------------------------------------------------------------------------

    def new_game(self) -> None:
        self.root, self.root_board = None, None

    def stop(self) -> None:
        self.stopped = True

    def set_root(self, board: chess.Board) -> Node:
        """The subtree of ``board`` when it extends the last root by played moves, else new."""
        node = self._reused(board)
        self.root, self.root_board = node or Node(), board.copy()
        return self.root

    def _reused(self, board: chess.Board) -> Node | None:
        old, node = self.root_board, self.root
        if old is None or node is None or len(board.move_stack) < len(old.move_stack):
            return None
        if board.move_stack[:len(old.move_stack)] != old.move_stack or \
                board.root() != old.root():
            return None
        for move in board.move_stack[len(old.move_stack):]:
            if not node.moves or move not in node.moves:
                return None
            child = node.children[node.moves.index(move)]
            if child is None:
                return None
            node = child
        return node if node.terminal is None and node.moves else None

    # -- one search -------------------------------------------------------------------------

    def search(self, board: chess.Board, simulations: int, deadline: float | None = None,
               searchmoves: Sequence[chess.Move] = (),
               on_batch: Callable[[], bool] | None = None, fresh: bool = True,
               offset: int = 0, planned: int | None = None) -> Node:
        """Run ``simulations`` simulations from ``board`` (reusing the tree); the root.
        ``fresh`` (the first call of a move): reset the stop flag, add the root noise;
        ``offset`` and ``planned``: this call's first simulation and the move's total (the
        ChessBreaker annealing runs over the whole move)."""
        root = self.set_root(board)
        if fresh:
            self.stopped, self.seldepth = False, 0
        if not root.moves:
            moves, prior, value = self.evaluator([board])[0]
            root.expand(moves, prior, value)
        if fresh and self.config.noise_alpha > 0 and root.moves:
            noise = self.rng.dirichlet([self.config.noise_alpha] * len(root.moves))
            root.prior = (1 - self.config.noise_share) * root.prior + \
                self.config.noise_share * noise
        mask, self.done = None, 0
        if searchmoves:
            mask = np.array([m in searchmoves for m in root.moves])
        done, self.simulations = 0, planned or simulations
        while done < simulations and not self.stopped and root.terminal is None:
            done += self._batch(board, root, min(self.config.batch, simulations - done),
                                offset + done, mask)
            self.done = done
            if deadline is not None and time.monotonic() >= deadline:
                break
            if on_batch is not None and not on_batch():
                break
        return root

    def _batch(self, board: chess.Board, root: Node, size: int, done: int,
               mask: np.ndarray | None) -> int:
        """Collect up to ``size`` simulations, evaluate their leaves at once, back them up."""
        pending: list[tuple[list[tuple[Node, int]], Node, tuple | None]] = []
        seen: set[int] = set()
        for k in range(size):
            path, leaf, prepared = self._descend(board, root, done + k, mask)
            if prepared is not None and id(leaf) in seen:   # collision: undo, evaluate now
                self._apply_virtual(path, -VIRTUAL_LOSS)
                break
            seen.add(id(leaf))
            pending.append((path, leaf, prepared))
        to_evaluate = [(i, p) for i, (_, _, p) in enumerate(pending) if p is not None]
        if to_evaluate:
            results = self.evaluator.run([p for _, p in to_evaluate])
            for (i, _), (moves, prior, value) in zip(to_evaluate, results, strict=True):
                pending[i][1].expand(moves, prior, value)
        for path, leaf, _ in pending:
            self._apply_virtual(path, -VIRTUAL_LOSS)
            outcome = leaf.terminal if leaf.terminal is not None else leaf.value
            assert outcome is not None
            self._backup(path, leaf, outcome)
        return len(pending)

    def _descend(self, board: chess.Board, root: Node, simulation: int,
                 mask: np.ndarray | None) -> tuple[list[tuple[Node, int]], Node, tuple | None]:
        """Select down to a leaf; returns the path, the leaf and, when the net must evaluate
        it, its prepared inputs (the board is restored)."""
        path: list[tuple[Node, int]] = []
        node, pushed = root, 0
        cap = self.config.max_depth
        prepared = None
        while True:
            if node.terminal is not None or (cap > 0 and pushed >= cap and
                                             node.value is not None):
                break
            if node.value is None:     # new leaf: terminal, or to evaluate
                node.terminal = terminal_value(board, in_tree=pushed > 0)
                if node.terminal is None:
                    prepared = self.evaluator.inputs(board)
                break
            index = self._select(node, simulation, mask if node is root else None)
            path.append((node, index))
            node.visits[index] += VIRTUAL_LOSS
            node.value_sum[index] -= VIRTUAL_LOSS
            board.push(node.moves[index])
            pushed += 1
            node = node.child(index)
        self.seldepth = max(self.seldepth, pushed)
        for _ in range(pushed):
            board.pop()
        return path, node, prepared

    def _select(self, node: Node, simulation: int, mask: np.ndarray | None) -> int:
        c = self.config
        parent = max(node.total, 1)
        q = node.q(c.fpu, c.fpu_reduction)
        if c.formula == "alphazero":
            scale = math.log((node.total + c.c1 + 1) / c.c1) + c.c2
            score = q + scale * node.prior * math.sqrt(parent) / (1 + node.visits)
        elif c.formula == "tjack":
            gamma = math.log((node.total + c.c1 + 1) / c.c1) + \
                c.c2 * math.sqrt(parent) / (node.visits + 1)
            score = gamma * node.prior + q
        else:
            share = simulation / max(self.simulations, 1)
            explore = c.c_start + (c.c_end - c.c_start) * share
            score = q + explore * node.prior / (1 + node.visits)
        if mask is not None:
            score = np.where(mask, score, -np.inf)
        return int(np.argmax(score))

    @staticmethod
    def _apply_virtual(path: list[tuple[Node, int]], amount: float) -> None:
        for node, index in path:
            node.visits[index] += amount
            node.value_sum[index] -= amount

    @staticmethod
    def _backup(path: list[tuple[Node, int]], leaf: Node, value: float) -> None:
        """``value`` is the leaf mover's; each edge scores it for the mover above it."""
        leaf.total += 1
        for node, index in reversed(path):
            value = -value
            node.visits[index] += 1
            node.value_sum[index] += value
            node.total += 1

    # -- reading the tree -------------------------------------------------------------------

    def choose(self, root: Node, temperature: float | None = None) -> chess.Move:
        """The move to play: most visited (ties: the higher prior), or drawn from
        N ** (1 / temperature)."""
        t = self.config.temperature if temperature is None else temperature
        if not root.visits.sum():
            return root.moves[int(np.argmax(root.prior))]
        if t <= 0:
            return root.moves[int(np.lexsort((root.prior, root.visits))[-1])]
        weights = root.visits ** (1.0 / t)
        weights /= weights.sum()
        return root.moves[int(self.rng.choice(len(weights), p=weights))]

    @staticmethod
    def pv(node: Node, first: int) -> list[chess.Move]:
        line = [node.moves[first]]
        child = node.children[first]
        while child is not None and child.moves and child.visits.sum() > 0:
            best = int(np.argmax(child.visits))
            line.append(child.moves[best])
            child = child.children[best]
        return line

    def lines(self, root: Node, count: int) -> list[PvLine]:
        order = np.lexsort((root.prior, root.visits))[::-1][:max(1, count)]
        out = []
        for index in order:
            n = root.visits[index]
            q = root.value_sum[index] / n if n else (root.value or 0.0)
            child = root.children[index]
            mate = None
            if child is not None and child.terminal == -1.0:
                mate = 1
            out.append(PvLine(score_cp=None if mate else cp_from_q(q), score_mate=mate,
                              pv=self.pv(root, int(index)), visits=int(n),
                              win_rate=win_rate(q)))
        return out

    def result(self, root: Node, report: int, start: float, multipv: int = 1,
               nodes: int | None = None) -> SearchReport:
        """A report; ``nodes``: this search's simulations (default: the root's visits,
        reused ones included)."""
        lines = self.lines(root, multipv)
        best = lines[0]
        return SearchReport(depth=report, seldepth=self.seldepth, score_cp=best.score_cp,
                            score_mate=best.score_mate,
                            nodes=int(root.visits.sum()) if nodes is None else nodes,
                            time_s=time.monotonic() - start, pv=best.pv, lines=lines,
                            evaluations=self.evaluator.positions)

    # -- the UCI searcher interface ---------------------------------------------------------

    def iterate(self, board: chess.Board, max_depth: int = 100, max_nodes: int | None = None,
                hard_deadline: float | None = None, multipv: int = 1,
                searchmoves: Sequence[chess.Move] = (),
                simulations: int | None = None) -> Iterator[SearchReport]:
        """Search, reporting after 16, 32, 64, ... simulations and at the end: up to
        ``max_nodes`` simulations when given; else under a clock (``hard_deadline``) until the
        caller stops asking for more (the time manager, between reports) or the deadline;
        else ``simulations`` (default: the engine's). ``simulations`` 0 plays the bare
        network (one evaluation, the prior's best move)."""
        for move in searchmoves:
            if not board.is_legal(move):
                raise ValueError(f"searchmoves: illegal move {move.uci()!r} in {board.fen()!r}")
        if not any(board.legal_moves):
            return
        start = time.monotonic()
        simulations = self.default_simulations if simulations is None else simulations
        if simulations == 0:
            yield self.bare(board, start, searchmoves)
            return
        total = budget_simulations(max_nodes, hard_deadline, simulations)
        report, done, target = 0, 0, FIRST_REPORT if total is None else min(FIRST_REPORT, total)
        while True:
            planned = total if total is not None else \
                planned_simulations(done, target, start, hard_deadline)
            root = self.search(board, target - done, hard_deadline, searchmoves,
                               fresh=report == 0, offset=done, planned=planned)
            done += self.done
            report += 1
            yield self.result(root, report, start, multipv, nodes=done)
            if (total is not None and target >= total) or self.stopped or \
                    report >= max_depth or root.terminal is not None or \
                    (hard_deadline and time.monotonic() >= hard_deadline):
                return
            target = target * 2 if total is None else min(target * 2, total)

    def bare(self, board: chess.Board, start: float,
             searchmoves: Sequence[chess.Move] = ()) -> SearchReport:
        """The bare network's move: the largest prior (among ``searchmoves``)."""
        moves, prior, value = self.evaluator([board])[0]
        if searchmoves:
            prior = np.where([m in searchmoves for m in moves], prior, -1.0)
        best = moves[int(np.argmax(prior))]
        return SearchReport(depth=1, seldepth=1, score_cp=cp_from_q(value), score_mate=None,
                            nodes=1, time_s=time.monotonic() - start, pv=[best],
                            lines=[PvLine(cp_from_q(value), None, [best], 1, win_rate(value))],
                            evaluations=self.evaluator.positions)


def budget_simulations(max_nodes: int | None, hard_deadline: float | None,
                       simulations: int) -> int | None:
    """A search's simulations: ``go nodes`` when given, none (the clock decides) under a
    clock, else the engine's ``--simulations``.

    >>> budget_simulations(40, 12.0, 100), budget_simulations(None, 12.0, 100)
    (40, None)
    >>> budget_simulations(None, None, 100)
    100
    """
    if max_nodes is not None:
        return max_nodes
    return None if hard_deadline is not None else simulations


def planned_simulations(done: int, target: int, start: float, deadline: float | None) -> int:
    """The simulations a clocked search will probably reach (the ChessBreaker annealing runs
    over them): the rate so far times the time to the deadline, at least the next report's."""
    elapsed = time.monotonic() - start
    if not done or elapsed <= 0 or deadline is None:
        return target
    return max(target, int(done / elapsed * (deadline - start)))


__all__ = ["NetEvaluator", "Node", "Puct", "cp_from_q", "terminal_value", "win_rate"]

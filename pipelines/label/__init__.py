"""Labelling positions with Stockfish: several depths from one search per position.

The ``label`` step (``flows/label.py``) runs it as a plan and units, one batch each, with the
engine pool it opens and closes: ``run_step(LABEL, LabelConfig(depths=(5, 6, 7)), lake)``.

- One search per position after ``ucinewgame`` (``go depth max(depths)``, or ``go nodes N``);
  the last exact ``info depth k`` line of every completed iteration is depth k's label, the
  same as a fresh ``go depth k`` search. Terminal positions (mate, stalemate) get every
  requested depth with Stockfish's ``depth 0`` score and a null best move.
- Scores: ``score_cp``/``score_mate`` from the side to move's view, ``white_cp``/``white_mate``
  from White's; ``score_mate = 0`` means the side to move is mated. WDL per mille, side to move.
- The engine's identity (``engines`` table): ``engine_id = name-version-<8 hex>`` hashing the
  name, version and the options that change play (Threads=1, Hash; not UCI_ShowWDL), the
  same id a tournament player with those settings gets.
- Only positions missing a requested (engine, depth) are sent, and only their missing depths
  are written, so a killed run is completed by the next with no gaps or duplicates.
  With ``--nodes N`` a position searched with that limit counts as done.
- A crashed or hung engine is killed and restarted and the position retried ``retries`` times,
  then recorded in ``label_errors`` (one row per run); the next run tries it again.
- ``--where`` is a SQL predicate over the ``positions`` view: the one piece of user text put
  into SQL, accepted only if ``select ... from positions where (<predicate>)`` is a single
  read-only statement (see :mod:`pipelines.label.pending`).

Names are loaded on first use (PEP 562), so the CLI can build its options from
:class:`LabelConfig` without importing DuckDB.
"""
from __future__ import annotations

import importlib
from typing import Any

from pipelines.label.config import LabelConfig, LabelConfigError

_LAZY = {
    "EngineIdentity": "identity",
    "PendingPosition": "pending", "WherePredicateError": "pending",
    "pending_positions": "pending", "still_pending": "pending",
    "BatchResult": "run", "LabelPlan": "run", "LabelSummary": "run", "engine_identity": "run",
    "label_batch": "run", "plan_labels": "run", "summarize": "run", "EnginePool": "run",
    "EngineCrashed": "uci", "EngineError": "uci", "EngineTimeout": "uci", "UciClient": "uci",
}

__all__ = ["LabelConfig", "LabelConfigError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)

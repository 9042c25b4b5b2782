"""Labelling positions with Stockfish: several depths from one search per position.

>>> from pipelines.label import LabelConfig, label_positions
>>> summary = label_positions(Lake(home), LabelConfig(depths=(5, 6, 7)))  # doctest: +SKIP

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
    "label_batch": "run", "label_positions": "run", "plan_labels": "run", "summarize": "run",
    "close_engines": "run",
    "EngineCrashed": "uci", "EngineError": "uci", "EngineTimeout": "uci", "UciEngine": "uci",
}

__all__ = ["LabelConfig", "LabelConfigError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)

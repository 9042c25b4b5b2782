"""SPRT reports: the GSPRT of given counts or of a two-player tournament's game pairs (then
recorded), as the text ``chesslab sprt`` prints.

>>> from pipelines.sprt import SprtConfig
>>> sprt_report(None, SprtConfig(), counts="10,100,200,110,20")
'SPRT elo0=0 elo1=2 alpha=0.05 beta=0.05 (normalized Elo): LLR 0.269 (-2.944, 2.944) -> continue'
"""
from __future__ import annotations

import json

from pipelines.sprt import SprtConfig, SprtError, SprtResult, llr
from pipelines.sprt.store import record_sprt, tournament_counts
from warehouse import Lake


def parse_counts(text: str) -> list[int]:
    try:
        return [int(c) for c in text.split(",")]
    except ValueError:
        raise SprtError(f"--counts wants integers, got {text!r}") from None


def sprt_report(lake: Lake | None, config: SprtConfig, counts: str | None = None,
                tournament: str | None = None, output: str = "table") -> str:
    """The test on ``counts`` (``LL,LD,DD+WL,WD,WW`` or ``L,D,W``), or on ``tournament``'s
    game pairs in ``lake`` (recorded in ``sprt_results``); as text, or as one JSON document
    (``output`` "json")."""
    players: dict[str, str] = {}
    if counts is not None:
        cells, header = parse_counts(counts), ""
    else:
        if lake is None or tournament is None:
            raise SprtError("an SPRT needs --counts or --tournament")
        cells, first, second = tournament_counts(lake, tournament)
        header = f"{first} vs {second}, game pairs LL,LD,DD+WL,WD,WW = {cells}\n"
        players = {"tournament": tournament, "first": first, "second": second}
    result = SprtResult(tuple(cells), llr(cells, config), config.lower_bound,
                        config.upper_bound, config)
    if tournament is not None and lake is not None:
        record_sprt(lake, result, config, tournament)
    if output == "json":
        return json.dumps({**players, **result.as_dict()}, indent=2)
    return f"{header}{result.describe()}"

"""SPRT reports: the GSPRT of given counts or of a two-player tournament's game pairs (then
recorded), as the text ``chesslab sprt`` prints.

>>> from pipelines.sprt import SprtConfig
>>> sprt_report(None, SprtConfig(), counts="10,100,200,110,20")
'SPRT elo0=0 elo1=2 alpha=0.05 beta=0.05 (normalized Elo): LLR 0.269 (-2.944, 2.944) -> continue'
"""
from __future__ import annotations

from pipelines.sprt import SprtConfig, SprtError, SprtResult, llr
from pipelines.sprt.store import record_sprt, tournament_counts
from warehouse import Lake


def parse_counts(text: str) -> list[int]:
    try:
        return [int(c) for c in text.split(",")]
    except ValueError:
        raise SprtError(f"--counts wants integers, got {text!r}") from None


def sprt_report(lake: Lake | None, config: SprtConfig, counts: str | None = None,
                tournament: str | None = None) -> str:
    """The test on ``counts`` (``LL,LD,DD+WL,WD,WW`` or ``L,D,W``), or on ``tournament``'s
    game pairs in ``lake`` (recorded in ``sprt_results``)."""
    if counts is not None:
        cells, header = parse_counts(counts), ""
    else:
        if lake is None or tournament is None:
            raise SprtError("an SPRT needs --counts or --tournament")
        cells, first, second = tournament_counts(lake, tournament)
        header = f"{first} vs {second}, game pairs LL,LD,DD+WL,WD,WW = {cells}\n"
    result = SprtResult(tuple(cells), llr(cells, config), config.lower_bound,
                        config.upper_bound, config)
    if tournament is not None and lake is not None:
        record_sprt(lake, result, config, tournament)
    return f"{header}{result.describe()}"

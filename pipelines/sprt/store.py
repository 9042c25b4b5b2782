"""SPRT inputs from the warehouse (a two-player tournament's game pairs) and its records."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engines.stamps import content_id, utc_now
from pipelines.sprt import SprtConfig, SprtError, SprtResult, pentanomial
from warehouse import Lake, connect
from warehouse.catalog import named_query, query


def pair_counts_from_rows(rows: Iterable[Mapping[str, Any]], first: str) -> list[int]:
    """Pentanomial counts of ``first`` over the complete game pairs (pairing, round)."""
    pairs: dict[tuple[int, int], list[float]] = {}
    for row in rows:
        if row["white_score"] is None:
            continue
        score = row["white_score"] if row["white"] == first else 1 - row["white_score"]
        pairs.setdefault((row["pairing"], row["round"]), []).append(score)
    return pentanomial([sum(scores) for scores in pairs.values() if len(scores) == 2])


def tournament_counts(lake: Lake, tournament_id: str) -> tuple[list[int], str, str]:
    """(counts, first player, second player) of a two-player tournament."""
    con = connect(lake)
    try:
        rows = query(con, named_query("tournament_games"), [tournament_id]).to_pylist()
    finally:
        con.close()
    names = sorted({r["white"] for r in rows} | {r["black"] for r in rows})
    if len(names) != 2:
        raise SprtError(f"tournament {tournament_id!r}: an SPRT needs games between exactly "
                        f"two players, found {names}")
    first = next((r["white"] for r in rows if r["game_in_pair"] == 0), names[0])
    second = names[1] if first == names[0] else names[0]
    return pair_counts_from_rows(rows, first), first, second


def record_sprt(lake: Lake, result: SprtResult, config: SprtConfig,
                tournament_id: str | None = None) -> str:
    sprt_id = content_id([list(result.counts), config.elo0, config.elo1, config.alpha,
                          config.beta, config.model, tournament_id])
    lake.write("sprt_results", [{
        "sprt_id": sprt_id, "tournament_id": tournament_id, "model": config.model,
        "elo0": config.elo0, "elo1": config.elo1, "alpha": config.alpha, "beta": config.beta,
        "counts": list(result.counts), "llr": result.llr, "lower_bound": result.lower_bound,
        "upper_bound": result.upper_bound, "decision": result.decision,
        "recorded_at": utc_now()}])
    return sprt_id

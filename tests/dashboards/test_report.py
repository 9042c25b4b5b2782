"""The static dashboard renders every panel from the warehouse."""
from __future__ import annotations

from pathlib import Path

from dashboards.report import build, write
from warehouse import Lake


def test_dashboard_shows_coverage_and_ratings(home: Path, tmp_path: Path) -> None:
    """A labelled position and a rating run appear with their numbers and an Elo chart."""
    lake = Lake(home)
    lake.write("labels", [{"position_key": 1, "engine_id": "sf-x", "depth": d, "score_cp": 10}
                          for d in (5, 6, 7)])
    lake.write("ratings", [
        {"rating_id": "r1", "source": "t1", "player": name, "rank": rank, "elo": elo,
         "plus": 30.0, "minus": 30.0, "games": 10, "score": 5.0, "draws": 2}
        for rank, (name, elo) in enumerate([("alphabeta", 41.0), ("sunfish", -41.0)], 1)])
    text = build(home)
    assert "<svg" in text and "alphabeta" in text and "sunfish" in text
    assert text.count("sf-x") == 3          # one coverage row per depth
    out = write(tmp_path / "d.html", home)
    assert out.read_text(encoding="utf-8") == text

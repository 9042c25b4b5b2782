"""The static dashboard (``chesslab dashboard -o FILE``) draws every panel from its named query,
with the warehouse's figures in the charts."""
from __future__ import annotations

import re
from pathlib import Path

from dashboards.panels import PANELS
from dashboards.report import build, write
from flows.cli import main


def values(text: str, chart: str) -> list[str]:
    """The ``data-value`` figures of the marks in the panel ``chart``'s section."""
    section = text.split(f"id='panel-{chart}'", 1)[1].split("</section>", 1)[0]
    return re.findall(r"data-value='([^']*)'", section)


def test_every_panel_reads_one_named_query_and_draws_the_figures(dashboard_home: Path) -> None:
    """Positions per source (the Opera game's 34), the depth-2 labels, the losses of nnue@2,
    the ratings, the SPRT's LLR and the ladder history appear as chart marks."""
    text = build(dashboard_home)
    for panel in PANELS:
        assert f"id='panel-{panel.name}'" in text
        assert (Path("warehouse/sql/queries") / f"{panel.query}.sql").is_file() or \
            panel.query == "label_coverage"
    assert values(text, "positions-per-source") == ["34"]
    assert values(text, "labels") == ["34"]
    assert "0.1234" in values(text, "training") and "0.3125" in values(text, "training")
    assert values(text, "ratings") == ["41", "-41"]
    assert values(text, "sprt") == ["1.625"]
    assert values(text, "ladder") == ["1712", "1788"]
    assert "0.875" in values(text, "volatility-roc")
    assert len(values(text, "lmr-heatmap")) == 9
    assert values(text, "crosstables") == ["1.5", "0.5"]
    assert "<script" not in text          # the static page is self-contained


def test_dashboard_output_writes_the_static_report(dashboard_home: Path, tmp_path: Path,
                                                   monkeypatch: object) -> None:
    out = tmp_path / "d.html"
    assert main(["--home", str(dashboard_home), "dashboard", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").count("data-chart=") >= 10
    assert write(tmp_path / "again.html", dashboard_home).read_text(encoding="utf-8") \
        .count("data-chart=") >= 10

"""The static dashboard (``chesslab dashboard -o FILE``) draws every panel from its named query,
with the warehouse's figures in the charts."""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from dashboards import charts
from dashboards.panels import PANELS, html_table
from dashboards.report import build, write
from flows.cli import main
from warehouse import connect


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


def test_times_show_as_utc_dates_and_a_single_time_as_bars(dashboard_home: Path) -> None:
    """The fixture's labels were all written in one minute: the coverage panel names that
    minute as a UTC date and shows each depth's count as a bar."""
    minute = connect(dashboard_home).execute(
        "select distinct strftime(date_trunc('minute', labelled_at), '%Y-%m-%d %H:%M') "
        "from labels").fetchall()
    assert len(minute) == 1
    section = build(dashboard_home).split("id='panel-coverage-over-time'", 1)[1]
    section = section.split("</section>", 1)[0]
    assert f"at {minute[0][0]} UTC" in section and values_of(section) == ["34"]
    line = charts.line_chart({"depth 5": [(1772366400.0, 10.0), (1772539200.0, 20.0)]},
                             "time (UTC)", "labelled", x_time=True)
    assert ">2026-03-01<" in line and ">2026-03-03<" in line and ">2026-03-02<" in line
    assert "data-x='2026-03-01'" in line and "498" not in line


def test_long_labels_get_the_room_they_need_and_tables_scroll() -> None:
    name = "alphabeta:eval=nnue,model=nnue@1 (8e7c659a)"
    chart = charts.interval_chart([{"who": name, "elo": 12.0, "plus": 30.0, "minus": 25.0},
                                   {"who": "hce", "elo": -12.0, "plus": 30.0, "minus": 25.0}],
                                  "who", "elo", "plus", "minus")
    label = chart.split(">" + name + "</text>", 1)[0].rsplit("<text x='", 1)[1]
    assert float(label.split("'", 1)[0]) >= len(name) * 6   # right end of a whole label
    assert html_table(pa.table({"a": [1]})).startswith("<div class='scroll'><table>")


def values_of(section: str) -> list[str]:
    return re.findall(r"data-value='([^']*)'", section)


def test_dashboard_output_writes_the_static_report(dashboard_home: Path, tmp_path: Path,
                                                   monkeypatch: object) -> None:
    out = tmp_path / "d.html"
    assert main(["--home", str(dashboard_home), "dashboard", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").count("data-chart=") >= 10
    assert write(tmp_path / "again.html", dashboard_home).read_text(encoding="utf-8") \
        .count("data-chart=") >= 10

"""The dashboard's charts are Vega-Lite specs over named queries with bound parameters, and
``chesslab dashboard -o FILE`` renders the same specs to SVG (issue 37): checked on the
synthetic warehouse of ``dashboard_home``, whose figures are known."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import altair as alt
import pytest
import vl_convert

from dashboards import charts, pages, tables
from dashboards.curves import TRAINING_X, x_encoding
from dashboards.data import DashboardError, rows
from dashboards.report import build
from dashboards.tables import Links
from flows.cli import main
from warehouse import connect

QUERIES = Path(__file__).resolve().parents[2] / "warehouse" / "sql" / "queries"


def spec(home: Path, name: str, **params: Any) -> dict[str, Any]:
    con = connect(home)
    try:
        found = pages.chart_spec(con, name, params)
    finally:
        con.close()
    assert found["spec"] is not None, (name, found)
    return found["spec"]


def data_values(node: Any) -> list[dict[str, Any]]:
    """Every inline row of a spec (all its datasets)."""
    if isinstance(node, dict):
        found = list(node["values"]) if isinstance(node.get("values"), list) else []
        for key, value in node.items():
            if key != "values":
                found += data_values(value)
        return found
    if isinstance(node, list):
        return [row for item in node for row in data_values(item)]
    return []


def find(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return ([node[key]] if key in node else []) + [x for v in node.values()
                                                       for x in find(v, key)]
    if isinstance(node, list):
        return [x for item in node for x in find(item, key)]
    return []


def test_every_chart_and_table_reads_named_queries_that_exist() -> None:
    for item in (*charts.CHARTS, *tables.TABLES):
        for query in item.queries:
            assert (QUERIES / f"{query}.sql").is_file(), (item.name, query)
    assert pages.altair_version_matches()     # the bundle's Vega-Lite is Altair's


def test_the_warehouse_figures_are_in_the_specs(dashboard_home: Path) -> None:
    """The Opera game's 34 positions, nnue@2's loss 0.1234, the ROC point (0.5, 0.875), nine
    heatmap cells, the ladder's 1712/1788, the crosstable's 1.5/0.5, the pool's 41/-41."""
    assert [r["positions"] for r in data_values(spec(dashboard_home, "positions-per-source"))] \
        == [34]
    training = data_values(spec(dashboard_home, "training"))
    assert 0.1234 in [r.get("train_loss") for r in training]
    assert sorted(r["ladder_elo"] for r in training if "ladder_elo" in r) == [1712.0, 1788.0]
    roc = data_values(spec(dashboard_home, "volatility-roc", model="volatility@1"))
    assert {"fpr": 0.5, "tpr": 0.875} in [{k: r[k] for k in ("fpr", "tpr")} for r in roc]
    assert len(data_values(spec(dashboard_home, "lmr-heatmap", model="lmr@1"))) == 9
    cross = data_values(spec(dashboard_home, "match-crosstable", tournament="t1"))
    assert sorted(r["points"] for r in cross) == [0.5, 1.5]
    pool = data_values(spec(dashboard_home, "rating-pool", source="t1"))
    assert [r["elo"] for r in pool] == [41.0, -41.0]


def test_elo_against_positions(dashboard_home: Path) -> None:
    """Issue 38: each evaluated version's match Elo and interval at its training rows, on a log
    axis of positions, with the baseline's level (0) inside the Elo axis."""
    chart = spec(dashboard_home, "elo-by-data")
    points = {(r["train_rows"], r["elo"], r["low"], r["high"])
              for r in data_values(chart) if "train_rows" in r}
    assert points == {(97131, -187.0, -247.0, -132.0), (193882, -98.5, -158.5, -43.5)}
    assert {"type": "log"} in [s for s in find(chart, "scale") if isinstance(s, dict)]
    domain = [s["domain"] for s in find(chart, "scale") if isinstance(s, dict)
              and "domain" in s][0]
    assert domain[0] <= -247.0 and domain[1] >= 0.0
    assert charts.BY_NAME["elo-by-data"] in [charts.BY_NAME[b.name] for s in
                                             pages.overview().sections for b in s.blocks
                                             if b.kind == "chart"]


def test_parameters_are_bound_never_spliced(dashboard_home: Path) -> None:
    """A model id that is SQL text selects nothing (and the query runs): it was bound."""
    con = connect(dashboard_home)
    try:
        assert rows(con, "dashboard_ladder_history", {"model": "nnue@1"})
        assert rows(con, "dashboard_ladder_history",
                    {"model": "x' or '1'='1"}) == []
        with pytest.raises(DashboardError, match="no model \"x' or 1=1 --\""):
            pages.model_page(con, "x' or 1=1 --")
    finally:
        con.close()


def test_losses_get_one_axis_per_kind_and_a_log_option(dashboard_home: Path) -> None:
    """Issue 37: every kind's losses shared one linear axis. Now each kind's curves are a
    panel of their own with its own y axis, named after the kind (issue 50: one title per
    axis, not a facet's, a kind's and an axis'), and ``log`` makes the axis logarithmic."""
    training = spec(dashboard_home, "training")
    titles = {y["title"] for y in find(training, "y") if isinstance(y, dict)
              and y.get("field") == "loss"}
    assert titles == {"nnue loss", "policy_value loss"}
    assert not find(training, "facet") and not find(training, "row")
    assert "log" not in [s.get("type") for s in find(training, "scale") if isinstance(s, dict)]
    logged = spec(dashboard_home, "model-losses", model="nnue@1", log="1")
    assert "log" in [s.get("type") for s in find(logged, "scale") if isinstance(s, dict)]


@pytest.mark.parametrize("last", ["2026-11-29T10:16:55.886+00:00",     # one second
                                  "2026-11-29T10:16:58.100+00:00",     # seconds apart
                                  "2026-11-29T10:19:40.000+00:00",     # minutes
                                  "2026-11-29T16:17:55.000+00:00"])    # hours
def test_wall_time_ticks_read_as_times_of_day(last: str) -> None:
    """Issue 50: x = wall time reads 10:16:55 (UTC), whatever the points' spacing. The axis
    format with formatType "utc" was dropped by Vega-Lite 6, and the ticks read d3's
    multi-format (".340" for epochs within a second, ":05", "11 AM")."""
    rows = [{"recorded_at": "2026-11-29T10:16:55.610+00:00", "loss": 1.0},
            {"recorded_at": last, "loss": 2.0}]
    chart = alt.Chart(alt.Data(values=rows)).mark_line().encode(
        x=x_encoding(TRAINING_X[2]), y=alt.Y("loss:Q", title="loss"))
    svg = vl_convert.vegalite_to_svg(chart.to_dict(), vl_version=pages.VEGA_LITE)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    ticks = texts[:texts.index("wall time (UTC)")]
    assert ticks and all(re.fullmatch(r"(1[0-6]):\d\d:\d\d(\.\d{3})?", t) for t in ticks), ticks


def test_one_rating_gets_an_axis_wider_than_its_point(dashboard_home: Path) -> None:
    """Issue 37: the ladder chart of one model spanned 1198-1200. An Elo axis now spans the
    intervals, and at least 100 points when there is no interval."""
    assert charts.padded_domain([1199.0], [1199.0]) == [1149.0, 1249.0]
    ladder = spec(dashboard_home, "model-ladder", model="nnue@1")
    domain = [s["domain"] for s in find(ladder, "scale") if isinstance(s, dict)
              and "domain" in s][0]
    assert domain[0] <= 1712 - 40 and domain[1] >= 1712 + 40


def test_the_heatmaps_have_a_colour_scale(dashboard_home: Path) -> None:
    """The LMR heatmap and the crosstable encode their value as colour with a titled legend."""
    for name, params in (("lmr-heatmap", {"model": "lmr@1"}),
                         ("match-crosstable", {"tournament": "t1"})):
        colours = [c for c in find(spec(dashboard_home, name, **params), "color")
                   if isinstance(c, dict) and c.get("type") == "quantitative"]
        assert colours and colours[0]["title"], name


def test_kind_panels_and_pages(dashboard_home: Path) -> None:
    """Each kind's page gets its panels: volatility ROC/gains/Table 4.1, LMR fits and heatmap,
    policy-value decisive share per checkpoint (0.375 then 0.125 against 0.5)."""
    con = connect(dashboard_home)
    try:
        names = {k: [b.name for s in pages.model_page(con, f"{k}@1").sections
                     for b in s.blocks] for k in ("volatility", "lmr", "policy_value", "nnue")}
        fits = pages.table_html(con, "lmr-fits", {"model": "lmr@1"}, Links())
        summary = pages.table_html(con, "model-summary", {"model": "volatility@1"}, Links())
    finally:
        con.close()
    assert {"volatility-roc", "volatility-gains", "volatility-table"} <= set(names["volatility"])
    assert {"lmr-heatmap", "lmr-fits"} <= set(names["lmr"])
    assert "decisive-share" in names["policy_value"] and "lmr-fits" not in names["nnue"]
    assert "0.4375" in fits and "a + b*ln(d)*ln(m)" in fits
    assert "alphabeta:volatility=volatility@1" in summary     # as its kind declares it
    shares = data_values(spec(dashboard_home, "decisive-share", model="policy_value@2"))
    assert {r["decisive_share"] for r in shares if "decisive_share" in r} == {0.125, 0.375}


def test_dashboard_output_renders_the_specs_to_svg(dashboard_home: Path, tmp_path: Path) -> None:
    """``chesslab dashboard -o FILE``: one self-contained file, every page, SVG charts."""
    out = tmp_path / "d.html"
    assert main(["--home", str(dashboard_home), "dashboard", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text and text.count("<svg") >= 10
    for anchor in ("overview", "ratings", "model-nnue-1", "model-lmr-1", "match-t1"):
        assert f"id='{anchor}'" in text, anchor
    assert re.search(r">\s*1,?712\s*<|1712", text)
    assert text == build(dashboard_home) or "<svg" in build(dashboard_home)


def test_every_declared_panel_is_a_chart_or_a_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind's panels come from its declaration (``ModelKind.panels``, issue 46), each a
    chart or a table by name; a name that is neither is one clear error, not a page that
    fails to draw."""
    from pipelines.models import kinds

    for kind in kinds.all_kinds():
        blocks = pages.kind_panels(kind.name, {"model": f"{kind.name}@1"})
        assert [b.name for b in blocks] == list(kind.panels)
        assert all((b.kind == "chart") == (b.name in charts.BY_NAME) for b in blocks)
    assert [b.kind for b in pages.kind_panels("volatility", {})] == ["chart", "chart", "table"]
    declared = kinds.load_kind("lmr")
    monkeypatch.setattr(pages, "load_kind", lambda name: type(declared)(
        **{**declared.__dict__, "panels": ("lmr-heatmap", "lmr-heatmapp")}))
    with pytest.raises(DashboardError, match="model kind 'lmr' declares the panel "
                                             "'lmr-heatmapp': no chart or table"):
        pages.kind_panels("lmr", {})


def test_the_match_page_lists_lost_workers_replays_and_time_forfeits(home: Path) -> None:
    """Issue 48: an operator watching a long SPRT must see that a machine went away. The
    match page has an incidents table: the worker lost and the batch played again (from
    tournament_events), and each game lost on time with each engine's time against its
    budget (from tournament_games), in the order they happened; the status stays the
    latest progress event."""
    import datetime as dt

    from warehouse import Lake

    t0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    lake = Lake(home)
    lake.write("tournaments", [{"tournament_id": "t", "event": "long sprt", "format":
                                "round-robin", "rounds": 9, "planned_games": 18,
                                "created_at": t0}])
    lake.write("tournament_events", [
        {"tournament_id": "t", "event": event, "games_done": done, "planned_games": 18,
         "detail": detail, "recorded_at": t0 + dt.timedelta(minutes=minute)}
        for event, done, detail, minute in (
            ("started", 0, "", 0),
            ("worker_lost", 4, "worker box:41 (tcp://10.0.0.7:4040) lost; batch 2 (games "
                                "0:2:0, 0:2:1) to be played again", 3),
            ("batch_replayed", 6, "batch 2 (games 0:2:0, 0:2:1) lost with worker box:41, "
                                  "played again by worker box:42", 5))])
    lake.write("tournament_games", [
        {"tournament_id": "t", "game_key": "0:1:1", "pairing": 0, "round": 1,
         "game_in_pair": 1, "white": "b", "black": "a", "result": "1-0", "white_score": 1.0,
         "termination": "time forfeit", "reason": "a loses on time: 10.412s used of 10.100s",
         "white_time_s": 8.25, "black_time_s": 10.4121, "white_budget_s": 10.2,
         "black_budget_s": 10.1, "finished_at": t0 + dt.timedelta(minutes=4)},
        {"tournament_id": "t", "game_key": "0:1:0", "pairing": 0, "round": 1,
         "game_in_pair": 0, "white": "a", "black": "b", "result": "1/2-1/2",
         "white_score": 0.5, "termination": "normal", "finished_at": t0}])
    con = connect(lake)
    try:
        found = rows(con, "dashboard_match_incidents", {"tournament": "t"})
        page = pages.match_page(con, "t")
        html = pages.table_html(con, "match-incidents", {"tournament": "t"}, Links())
        status = rows(con, "dashboard_match", {"tournament": "t"})[0]["status"]
    finally:
        con.close()
    assert [(r["incident"], r["game_key"]) for r in found] == [
        ("worker_lost", None), ("time forfeit", "0:1:1"), ("batch_replayed", None)]
    assert (found[1]["black_time_s"], found[1]["black_budget_s"]) == (10.412, 10.1)
    assert "match-incidents" in [b.name for s in page.sections for b in s.blocks]
    assert "worker box:41 (tcp://10.0.0.7:4040) lost" in html and "10.412" in html
    assert status == "started"

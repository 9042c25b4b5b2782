"""The dashboard's panels: each reads one named query (``warehouse/sql/queries/<query>.sql``)
and draws it (``dashboards.charts``); the live page and the static report render the same
panels through :func:`render_panel`."""
from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from dashboards import charts
from warehouse.catalog import named_query, query
from warehouse.render import cell

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Panel:
    name: str                               # the URL and element id: /panel/<name>
    group: str                              # data, training, volatility, lmr, play, lineage
    title: str
    query: str                              # named query
    draw: Callable[[Rows], str] | None      # the chart, or None for a table only
    table: bool = False                     # the rows as a table under the chart
    live: bool = False                      # the served page refreshes it while open
    note: str = ""
    parameters: dict[str, Any] | None = None


def series(rows: Rows, name: Callable[[dict[str, Any]], str], x: str,
           y: str) -> dict[str, list[charts.Point]]:
    found: dict[str, list[charts.Point]] = {}
    for r in rows:
        if r[x] is not None and r[y] is not None:
            found.setdefault(name(r), []).append((float(r[x]), float(r[y])))
    return found


def coverage_bars(rows: Rows) -> str:
    return charts.bar_chart([{**r, "what": f"{r['engine_id']} depth {r['depth']}"}
                             for r in rows], "what", "positions")


def coverage_lines(rows: Rows) -> str:
    points = [{**r, "t": r["minute"].timestamp()} for r in rows]
    return charts.line_chart(series(points, lambda r: f"depth {r['depth']}", "t", "labelled"),
                             "time (UTC)", "labelled positions", x_time=True)


def loss_curves(rows: Rows) -> str:
    lines = series(rows, lambda r: f"{r['model_id']} train", "epoch", "train_loss")
    lines.update(series(rows, lambda r: f"{r['model_id']} validation", "epoch", "val_loss"))
    return charts.line_chart(dict(sorted(lines.items())), "epoch", "loss")


def roc_curves(rows: Rows) -> str:
    lines = series(rows, lambda r: r["model_id"], "fpr", "tpr")
    lines["chance"] = [(0.0, 0.0), (1.0, 1.0)]
    return charts.line_chart(lines, "false positive rate", "true positive rate", (0.0, 1.0))


def gains_curves(rows: Rows) -> str:
    lines = series(rows, lambda r: r["model_id"], "percent", "stable_found")
    if rows:
        first = [r for r in rows if r["model_id"] == rows[0]["model_id"]]
        lines["random"] = series(first, lambda r: "", "percent", "random")[""]
        lines["perfect"] = series(first, lambda r: "", "percent", "perfect")[""]
    return charts.line_chart(lines, "% of positions examined", "share of stable found",
                             (0.0, 1.0))


def reductions(rows: Rows) -> str:
    return charts.heatmap([(r["move_no"], r["depth"], r["reduction"]) for r in rows],
                          "move number", "depth")


def ladder_history(rows: Rows) -> str:
    return charts.line_chart(series(rows, lambda r: r["kind"], "version", "ladder_elo"),
                             "model version", "Stockfish-ladder Elo")


def ratings(rows: Rows) -> str:
    return charts.interval_chart([{**r, "who": f"{r['player']} ({r['source'][:8]})"}
                                  for r in rows], "who", "elo", "plus", "minus")


PANELS = (
    Panel("positions-per-source", "data", "Positions per source file",
          "dashboard_positions_per_source", lambda rows: charts.bar_chart(
              rows, "source", "positions")),
    Panel("labels", "data", "Labelled positions per engine and depth", "label_coverage",
          coverage_bars, table=True),
    Panel("coverage-over-time", "data", "Labelled positions over time",
          "dashboard_coverage_over_time", coverage_lines),
    Panel("errors", "data", "Ingest and label errors", "dashboard_errors",
          lambda rows: charts.bar_chart([{**r, "what": f"{r['step']}: {r['subject']}"}
                                         for r in rows], "what", "errors"), table=True),
    Panel("training", "training", "Loss curves per model version (live)",
          "dashboard_training_curves", loss_curves, live=True),
    Panel("volatility-roc", "volatility", "Volatility: ROC curves",
          "dashboard_volatility_roc", roc_curves),
    Panel("volatility-gains", "volatility", "Volatility: cumulative gains",
          "dashboard_volatility_gains", gains_curves),
    Panel("volatility-table", "volatility", "Volatility: Table 4.1 analogue",
          "dashboard_volatility_table", None, table=True),
    Panel("lmr-fits", "lmr", "LMR: the Table 6.1 regressions", "dashboard_lmr_fits", None,
          table=True),
    Panel("lmr-heatmap", "lmr", "LMR: mean safe reduction by depth and move number",
          "dashboard_lmr_heatmap", reductions),
    Panel("ratings", "play", "Ratings (BayesElo, 95% intervals)", "dashboard_latest_ratings",
          ratings, table=True),
    Panel("crosstables", "play", "Crosstables (points/games)", "dashboard_crosstable",
          charts.crosstable),
    Panel("ladder", "play", "Stockfish-ladder rating per model version",
          "dashboard_ladder_history", ladder_history, table=True),
    Panel("sprt", "play", "SPRT runs: LLR against the bounds", "dashboard_sprt",
          lambda rows: charts.sprt_chart(rows, "event"), table=True),
    Panel("lineage", "lineage", "Lineage: from a rating back to the model, its data set, "
          "the label engine and the source files", "lineage", None, table=True,
          parameters={"model": None}),
)
GROUPS = ("data", "training", "volatility", "lmr", "play", "lineage")
BY_NAME = {panel.name: panel for panel in PANELS}


def panel_rows(con: duckdb.DuckDBPyConnection, panel: Panel) -> pa.Table:
    return query(con, named_query(panel.query), panel.parameters)


def render_panel(con: duckdb.DuckDBPyConnection, panel: Panel) -> str:
    """The panel's inner HTML: its chart and, when asked, its rows as a table."""
    result = panel_rows(con, panel)
    rows = result.to_pylist()
    parts = [f"<h3>{html.escape(panel.title)}</h3>"]
    if panel.note:
        parts.append(f"<p class='note'>{html.escape(panel.note)}</p>")
    if panel.draw is not None:
        parts.append(panel.draw(rows))
    if panel.table or panel.draw is None:
        parts.append(html_table(result) if rows else "<p class='empty'>No rows yet.</p>")
    return "".join(parts)


def html_table(result: pa.Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in result.column_names)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell(row[c], 80))}</td>" for c in result.column_names)
        + "</tr>" for row in result.to_pylist())
    return (f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            f"</table></div>")

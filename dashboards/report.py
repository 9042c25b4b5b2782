"""A static HTML dashboard: data coverage, label quality, tournaments and ratings.

Each panel is one named query (``warehouse/sql/queries/<name>.sql``) or a view, rendered as a
table; ratings also get an Elo chart with their 95% error bars. The page is self-contained
(no scripts, no network), so it can be opened from disk or served by any static server.
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from warehouse import Lake, connect
from warehouse.catalog import named_query, query
from warehouse.render import cell
from warehouse.status import table_rows

CHART_WIDTH = 640
BAR_HEIGHT = 18


@dataclass(frozen=True)
class Panel:
    title: str
    sql: str
    note: str = ""


PANELS = (
    Panel("Labelled positions per engine and depth", named_query("label_coverage")),
    Panel("Volatility (paper 003: stable when |V7 - V6| < 18 cp)",
          named_query("dashboard_volatility"), "Paper 003 found about 23% stable positions."),
    Panel("Ingest errors", named_query("dashboard_ingest_errors")),
    Panel("Tournaments", "select * from tournament_status"),
    Panel("Standings", "select * from tournament_standings"),
)


def build(home: str | os.PathLike[str] | None = None) -> str:
    """The dashboard of ``home``'s warehouse as one HTML page."""
    lake = Lake(home)
    con = connect(lake)
    sections = [section("Tables", html_table(table_rows(con, lake)))]
    for panel in PANELS:
        result = query(con, panel.sql)
        body = html_table(result) if result.num_rows else "<p>No rows yet.</p>"
        sections.append(section(panel.title, body, panel.note))
    ratings = query(con, named_query("dashboard_latest_ratings"))
    if ratings.num_rows:
        sections.append(section("Ratings (BayesElo, 95% intervals)",
                                rating_chart(ratings) + html_table(ratings)))
    return page(f"chesslab: {lake.home}", "\n".join(sections))


def write(path: str | os.PathLike[str], home: str | os.PathLike[str] | None = None) -> Path:
    """Write the dashboard atomically to ``path``."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(build(home), encoding="utf-8")
    os.replace(tmp, target)
    return target


def section(title: str, body: str, note: str = "") -> str:
    caption = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    return f"<section><h2>{html.escape(title)}</h2>{caption}{body}</section>"


def html_table(result: pa.Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in result.column_names)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell(row[c], 80))}</td>" for c in result.column_names)
        + "</tr>" for row in result.to_pylist())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def rating_chart(ratings: pa.Table) -> str:
    """Horizontal Elo chart: a dot per player and a line for its interval."""
    rows = ratings.to_pylist()
    low = min(r["elo"] - (r["minus"] or 0) for r in rows)
    high = max(r["elo"] + (r["plus"] or 0) for r in rows)
    span = max(high - low, 1.0)
    label_width = 180

    def x(elo: float) -> float:
        return label_width + (elo - low) / span * (CHART_WIDTH - label_width - 20)

    marks = []
    for i, r in enumerate(rows):
        y = (i + 1) * BAR_HEIGHT
        marks.append(
            f"<text x='0' y='{y + 4}'>{html.escape(str(r['player']))[:28]}</text>"
            f"<line x1='{x(r['elo'] - (r['minus'] or 0)):.1f}' y1='{y}' "
            f"x2='{x(r['elo'] + (r['plus'] or 0)):.1f}' y2='{y}' stroke='#555'/>"
            f"<circle cx='{x(r['elo']):.1f}' cy='{y}' r='4' fill='#246'/>")
    height = (len(rows) + 1) * BAR_HEIGHT
    return (f"<svg width='{CHART_WIDTH}' height='{height}' font-size='12' "
            f"font-family='sans-serif'>{''.join(marks)}</svg>")


def page(title: str, body: str) -> str:
    style = ("body{font-family:sans-serif;margin:2em;max-width:1100px}"
             "table{border-collapse:collapse;margin:.5em 0 1.5em}"
             "td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}"
             "th{background:#eee}.note{color:#555}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>"
            f"{body}</body></html>")

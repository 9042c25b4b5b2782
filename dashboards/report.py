"""The static dashboard (``chesslab dashboard -o FILE``): every page of the served one (the
overview, ratings, each kind's comparison, each model version, each match) in one HTML file,
its charts the same Vega-Lite specs rendered to SVG by vl-convert. No script, no network.
"""
from __future__ import annotations

import os
from pathlib import Path

import duckdb
import vl_convert

from dashboards import pages
from dashboards.data import rows
from dashboards.tables import Links
from warehouse import Lake, connect

LINKS = Links(served=False)


def block_body(con: duckdb.DuckDBPyConnection, block: pages.Block) -> str:
    if block.kind == "table":
        return pages.table_html(con, block.name, block.params, LINKS)
    found = pages.chart_spec(con, block.name, block.params)
    if found["spec"] is None:
        return f"<p class='empty'>{found['note']}</p>"
    return str(vl_convert.vegalite_to_svg(found["spec"], vl_version=pages.VEGA_LITE))


def static_page(con: duckdb.DuckDBPyConnection, page: pages.Page) -> str:
    blocks = [block for section in page.sections for block in section.blocks]
    bodies = {i: block_body(con, block) for i, block in enumerate(blocks)}
    return f"<article>{pages.page_body(page, bodies, served=False)}</article>"


def every_page(con: duckdb.DuckDBPyConnection) -> list[pages.Page]:
    models = rows(con, "dashboard_models", {})
    matches = rows(con, "dashboard_matches", {})
    kinds = sorted({m["kind"] for m in models})
    return [pages.overview(), pages.ratings_page(con),
            *(pages.compare_page(con, kind, [], LINKS) for kind in kinds),
            *(pages.model_page(con, m["model_id"]) for m in models),
            *(pages.match_page(con, m["tournament_id"]) for m in matches)]


def build(home: str | os.PathLike[str] | Lake) -> str:
    """The whole dashboard of ``home``'s warehouse as one static page."""
    lake = home if isinstance(home, Lake) else Lake(home)
    con = connect(lake)
    try:
        found = every_page(con)
        body = "".join(static_page(con, page) for page in found)
    finally:
        con.close()
    anchors = "".join(f"<span id='{name}'></span>" for name in ("models", "matches"))
    return pages.document(f"chesslab: {lake.home}", pages.nav(False) + anchors + body)


def write(path: str | os.PathLike[str], home: str | os.PathLike[str] | Lake) -> Path:
    """Write the static dashboard atomically to ``path``."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(build(home), encoding="utf-8")
    os.replace(tmp, target)
    return target

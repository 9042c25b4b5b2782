"""The dashboard page: data coverage, training curves, volatility and LMR models, play
(ratings, crosstables, ladder history, SPRT) and lineage, each panel one named query drawn
as inline SVG (``dashboards.panels``).

``build`` renders every panel into one self-contained page (``chesslab dashboard -o FILE``:
no script, no network). ``shell`` is the served page: the same sections, filled and kept
fresh by a few lines of script that fetch ``/panel/<name>`` (``dashboards.server``).
"""
from __future__ import annotations

import html
import os
from pathlib import Path

from dashboards.panels import GROUPS, PANELS, html_table, render_panel
from warehouse import Lake, connect
from warehouse.status import table_rows

REFRESH_S = 5.0   # the served page reloads live panels this often

STYLE = ("body{font-family:sans-serif;margin:1.5em;max-width:1400px}"
         "nav a{margin-right:1em}h2{border-bottom:1px solid #ccc;margin-top:1.5em}"
         ".panels{display:flex;flex-wrap:wrap;gap:1.5em}"
         ".panel{flex:0 1 660px;min-width:0;overflow-x:auto}"
         ".scroll{max-width:100%;overflow-x:auto}"
         "table{border-collapse:collapse;margin:.5em 0 1em}"
         "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
         "th{background:#eee}.note,.empty{color:#666}")

SCRIPT = """
async function fill(section) {
  const response = await fetch('panel/' + section.dataset.panel, {cache: 'no-store'});
  section.innerHTML = await response.text();
  section.dataset.loaded = 'true';
}
const sections = [...document.querySelectorAll('section[data-panel]')];
Promise.all(sections.map(fill)).then(() => { document.body.dataset.ready = 'true'; });
setInterval(() => sections.filter(s => s.dataset.live).forEach(fill), %d);
"""


def sections(bodies: dict[str, str]) -> str:
    """The page's groups and panels with the given inner HTML per panel name."""
    parts = ["<nav>" + "".join(f"<a href='#{g}'>{g}</a>" for g in GROUPS) + "</nav>"]
    for group in GROUPS:
        panels = "".join(
            f"<section class='panel' id='panel-{p.name}' data-panel='{p.name}'"
            f"{' data-live=true' if p.live else ''}>{bodies.get(p.name, '')}</section>"
            for p in PANELS if p.group == group)
        parts.append(f"<h2 id='{group}'>{group}</h2><div class='panels'>{panels}</div>")
    return "".join(parts)


def build(home: str | os.PathLike[str] | None = None) -> str:
    """The whole dashboard of ``home``'s warehouse as one static page."""
    lake = Lake(home)
    con = connect(lake)
    bodies = {panel.name: render_panel(con, panel) for panel in PANELS}
    tables = f"<details><summary>Tables</summary>{html_table(table_rows(con, lake))}</details>"
    return page(f"chesslab: {lake.home}", tables + sections(bodies))


def shell(home: str | os.PathLike[str] | None = None) -> str:
    """The served page: empty sections that its script fills from ``/panel/<name>``."""
    lake = Lake(home)
    script = SCRIPT % int(REFRESH_S * 1000)
    return page(f"chesslab: {lake.home}", sections({}) + f"<script>{script}</script>")


def write(path: str | os.PathLike[str], home: str | os.PathLike[str] | None = None) -> Path:
    """Write the static dashboard atomically to ``path``."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(build(home), encoding="utf-8")
    os.replace(tmp, target)
    return target


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            f"{body}</body></html>")

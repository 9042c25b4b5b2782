"""The dashboard's pages, each a list of sections of charts (``dashboards.charts``) and tables
(``dashboards.tables``) with the parameters their queries bind:

- overview: data coverage, the latest model of each kind, every model version with its loss
  curves and ladder rating (click one: the others follow), strength over versions and
  against training positions, matches, errors (each panel once);
- a page per model version: config, data set and lineage, curves, events, matches, ladder,
  and its kind's panels (volatility ROC, gains and Table 4.1; LMR Table 6.1 and the reduction
  heatmap; policy-value decisive share per checkpoint);
- compare runs: versions of one kind overlaid, their evaluations, runs, data and differing
  hyper-parameters side by side, picked by name;
- a page per match or SPRT: LLR and Elo over games, pentanomial counts, crosstable, games
  a page at a time;
- ratings: one chart and table per rating pool.

``chart_body``, ``table_body`` fill one block from the warehouse; the served app sends a
page's skeleton and its script fetches the blocks, the static report fills them in place.
"""
from __future__ import annotations

import html
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import altair as alt
import duckdb

from dashboards import charts, tables
from dashboards.data import DashboardError, Params, Rows, human_time, rows
from dashboards.tables import Links, anchor
from pipelines.models.kinds import is_kind, load_kind

VEGA_LITE = "6.4"     # the Vega-Lite version of Altair's schema and of the bundled vega-embed
RUNNING = ("started", "resumed", "running", "progress")


@dataclass(frozen=True)
class Block:
    kind: str                        # chart or table
    name: str                        # a chart's or table's name
    params: dict[str, Any] = field(default_factory=dict)
    live: bool = False               # refreshed while the page is open

    @property
    def title(self) -> str:
        return (charts.BY_NAME[self.name].title if self.kind == "chart"
                else tables.BY_NAME[self.name].title)

    @property
    def query_string(self) -> str:
        return urllib.parse.urlencode(
            [(k, x) for k, v in self.params.items() if v is not None
             for x in (v if isinstance(v, list) else [v])])


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    intro: str = ""                  # HTML before the blocks (a form, a link)


@dataclass(frozen=True)
class Page:
    title: str
    anchor: str
    sections: tuple[Section, ...]
    live: bool = False               # every block refreshes (a running match)
    subtitle: str = ""               # a line under the title (what tells a match apart)


def chart(name: str, *, live: bool = False, **params: Any) -> Block:
    return Block("chart", name, params, live)


def table(name: str, *, live: bool = False, **params: Any) -> Block:
    return Block("table", name, params, live)


# --------------------------------------------------------------------------------------------
# The pages
# --------------------------------------------------------------------------------------------

def overview() -> Page:
    return Page("Overview", "overview", (
        Section("Data coverage", (chart("positions-per-source"), chart("labels"),
                                  chart("coverage-over-time", live=True))),
        Section("Models", (table("latest-models"), chart("training"), table("models"))),
        Section("Strength", (chart("net-strength"), chart("elo-by-data"))),
        Section("Matches", (table("matches", live=True),)),
        Section("Errors", (table("errors"),)),
    ))


def one(con: duckdb.DuckDBPyConnection, query: str, params: Params, what: str) -> dict[str, Any]:
    found = rows(con, query, params)
    if not found:
        raise DashboardError(f"no {what} {next(iter(params.values()))!r} in the warehouse")
    return found[0]


def kind_panels(kind: str, params: dict[str, Any]) -> tuple[Block, ...]:
    """The panels a model kind declares for its versions' pages (``ModelKind.panels``), each
    a chart or a table by name; a kind no longer declared (its folder gone) has none.
    DashboardError names a panel that is neither."""
    names = load_kind(kind).panels if is_kind(kind) else ()
    unknown = [n for n in names if n not in charts.BY_NAME and n not in tables.BY_NAME]
    if unknown:
        raise DashboardError(f"model kind {kind!r} declares the panel {unknown[0]!r}: no chart "
                             f"or table has that name")
    return tuple(chart(n, **params) if n in charts.BY_NAME else table(n, **params)
                 for n in names)


def model_page(con: duckdb.DuckDBPyConnection, model_id: str) -> Page:
    model = one(con, "dashboard_model", {"model": model_id}, "model")
    kind, p = model["kind"], dict[str, Any](model=model_id)
    running = model["status"] == "started"
    own = kind_panels(kind, p)
    sections = [
        Section("Model", (table("model-summary", **p), table("model-config", **p))),
        Section("Training", (chart("model-losses", live=running, **p),
                             chart("model-metrics", live=running, **p))),
        *([Section(f"{kind} panels", own)] if own else []),
        Section("Data set and lineage", (table("model-lineage", **p),)),
        Section("Events", (table("model-events", live=running, **p),)),
        Section("Matches and ratings", (table("model-matches", **p), chart("model-ladder", **p))),
    ]
    return Page(f"{model_id} ({model['name']})", f"model-{anchor(model_id)}", tuple(sections))


def compare_page(con: duckdb.DuckDBPyConnection, kind: str | None,
                 models: list[str], links: Links, text: str = "") -> Page:
    """Versions of one kind side by side: those ticked (``models``), else the latest six;
    ``text`` keeps the versions whose id or name holds it (the page's filter box)."""
    versions = rows(con, "dashboard_models", {"kind": kind})
    kinds = sorted({m["kind"] for m in rows(con, "dashboard_models", {})})
    if kind is None:
        kind = kinds[0] if kinds else None
        versions = rows(con, "dashboard_models", {"kind": kind}) if kind else []
    elif not versions:
        raise DashboardError(f"no model versions of kind {kind!r} in the warehouse")
    known = [m["model_id"] for m in versions]
    unknown = [m for m in models if m not in known]
    if unknown:
        raise DashboardError(f"compare: {unknown[0]!r} is not a {kind} version")
    names = {m["model_id"]: m["name"] for m in versions}
    shown = [m for m in known if version_matches(m, names[m], text)]
    chosen = [m for m in models if m in shown] or shown[-6:]
    p = dict[str, Any](models=chosen)
    form = compare_form(kind, kinds, names, chosen, text, links)
    return Page(f"Compare {kind or 'runs'}", f"compare-{anchor(kind or 'none')}", (
        Section("Versions", (chart("compare-curves", **p), table("compare", **p)), form),))


def version_matches(model_id: str, name: str, text: str) -> bool:
    """The filter box: ``text`` in the version's id or name, any case.

    >>> version_matches("nnue@2", "nnue-fast", "FAST"), version_matches("nnue@1", "x", "fast")
    (True, False)
    """
    return text.lower() in f"{model_id} {name}".lower()


def compare_form(kind: str | None, kinds: list[str], names: dict[str, str],
                 chosen: list[str], text: str, links: Links) -> str:
    """Kinds as links, a filter box (by name or id: the boxes that don't match hide as you
    type) and a box per version."""
    if not links.served:
        return f"<p>{html.escape(', '.join(chosen))}</p>"
    kind_links = " ".join(
        f"<a href='{html.escape(links.compare(k))}'>{'<b>' if k == kind else ''}"
        f"{html.escape(k)}{'</b>' if k == kind else ''}</a>" for k in kinds)
    boxes = "".join(
        f"<label class='version' data-text='{html.escape(f'{m} {n}'.lower())}'>"
        f"<input type='checkbox' name='models' value='{html.escape(m)}'"
        f"{' checked' if m in chosen else ''}> {html.escape(m)} "
        f"<span class='note'>{html.escape(n)}</span></label> " for m, n in names.items())
    return (f"<p>kind: {kind_links}</p><form method='get' action='/compare'>"
            f"<input type='hidden' name='kind' value='{html.escape(kind or '')}'>"
            f"<input type='search' name='filter' class='filter' value='{html.escape(text)}' "
            f"placeholder='filter by name or id' aria-label='filter versions'> {boxes}"
            f"<button type='submit'>compare</button></form>")


def match_page(con: duckdb.DuckDBPyConnection, tournament_id: str,
               page: str | None = None) -> Page:
    """A match: its summary and pentanomial counts, LLR and Elo over games, the crosstable
    and its games (``page``: which page of them). The line under the title tells matches
    of the same event apart: players, limit, start and id."""
    match = one(con, "dashboard_match", {"tournament": tournament_id}, "match")
    p = dict[str, Any](tournament=tournament_id)
    running = match["status"] in RUNNING
    listed = [m for m in rows(con, "dashboard_matches", {})
              if m["tournament_id"] == tournament_id]
    return Page(match["event"], f"match-{anchor(tournament_id)}", (
        Section("Match", (table("match-summary", **p), chart("match-pentanomial", **p))),
        Section("Course", (chart("match-sprt", **p), chart("match-elo", **p))),
        Section("Crosstable", (chart("match-crosstable", **p),)),
        Section("Incidents", (table("match-incidents", **p),)),
        Section("Games", (table("match-games", page=page, **p),)),
    ), live=running, subtitle=match_subtitle(listed[0] if listed else {"tournament_id":
                                                                       tournament_id}))


def match_subtitle(match: dict[str, Any]) -> str:
    """Players, limit, start and id of a match (``dashboard_matches``' row).

    >>> match_subtitle({"players": "a vs b", "limits": "200 nodes", "tournament_id": "7f1d",
    ...                 "started_at": "2026-11-29T06:53:15.336489+00:00"})
    'a vs b · 200 nodes · started 2026-11-29 06:53:15 UTC · id 7f1d'
    """
    parts = [match.get("players"), match.get("limits"),
             f"started {human_time(match['started_at'])}" if match.get("started_at") else None,
             f"id {match['tournament_id']}"]
    return " · ".join(p for p in parts if p)


def ratings_page(con: duckdb.DuckDBPyConnection) -> Page:
    pools = rows(con, "dashboard_rating_pools", {})
    sections = [Section("Stockfish ladder (model versions, anchored to Stockfish's UCI_Elo)",
                        (chart("ladder-pool"), table("ladder-pool")))]
    sections += [Section(f"{pool['pool']}: {pool['players']} players",
                         (chart("rating-pool", source=pool["source"]),
                          table("rating-pool", source=pool["source"])))
                 for pool in pools]
    return Page("Ratings", "ratings", tuple(sections))


# --------------------------------------------------------------------------------------------
# Blocks from the warehouse
# --------------------------------------------------------------------------------------------

def block_data(con: duckdb.DuckDBPyConnection, queries: tuple[str, ...],
               params: Params) -> dict[str, Rows]:
    return {name: rows(con, name, params) for name in queries}


def chart_spec(con: duckdb.DuckDBPyConnection, name: str, params: Params) -> dict[str, Any]:
    """``{"spec": Vega-Lite JSON or None, "note": why there is none}``."""
    found = charts.BY_NAME.get(name)
    if found is None:
        raise DashboardError(f"no chart {name!r}")
    built = found.build(block_data(con, found.queries, params), params)
    if built is None:
        return {"spec": None, "note": found.empty}
    spec = built.configure_view(stroke=None).to_dict()
    return {"spec": spec, "note": found.note}


def table_html(con: duckdb.DuckDBPyConnection, name: str, params: Params,
               links: Links) -> str:
    found = tables.BY_NAME.get(name)
    if found is None:
        raise DashboardError(f"no table {name!r}")
    bound = {**params, **found.defaults}
    return found.render(block_data(con, found.queries, bound), bound, links)


def altair_version_matches() -> bool:
    """Altair's Vega-Lite schema is the bundle's (``VEGA_LITE``)."""
    return alt.SCHEMA_VERSION.lstrip("v").startswith(VEGA_LITE + ".")


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

STYLE = """
body{font-family:system-ui,sans-serif;margin:0 1.5em 2em;max-width:1500px;color:#222}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:.5em 0;z-index:2}
header a{margin-right:1.2em;text-decoration:none;font-weight:600}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:1.5em;font-size:1.2em}
h3{font-size:1em;margin:.2em 0}.blocks{display:flex;flex-wrap:wrap;gap:1.5em}
.block{flex:0 1 auto;min-width:320px;max-width:100%;overflow-x:auto}
.scroll{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left;vertical-align:top}
thead th,table.kv th{background:#f0f0f0}tr.diff td,tr.diff th{background:#fff3c4}
.note,.empty{color:#666;font-size:13px}code{font-size:11px}label{margin-right:.8em}
.subtitle{color:#444;margin-top:-.6em}.controls{margin:.2em 0}.controls input[type=range]{
vertical-align:middle;width:120px}tr.section th{background:#e4e9f2;text-align:left}
.pager a{margin:0 .3em}input.filter{margin-right:1em}
"""

SCRIPT = """
const views = {};
function blockUrl(el) {
  const params = new URLSearchParams(el.dataset.params || '');
  const box = el.querySelector('input.log');
  if (box && box.checked) params.set('log', '1');
  const smooth = el.querySelector('input.smooth');
  if (smooth && Number(smooth.value) > 0) params.set('smooth', smooth.value);
  const x = el.querySelector('select.x');
  if (x && x.selectedIndex > 0) params.set('x', x.value);
  return '/' + el.dataset.kind + '/' + el.dataset.name + '?' + params;
}
async function fill(el) {
  const target = el.querySelector('.body');
  try {
    const response = await fetch(blockUrl(el), {cache: 'no-store'});
    if (!response.ok) throw new Error(await response.text());
    if (el.dataset.kind === 'table') {
      target.innerHTML = await response.text();
      el.hidden = target.innerHTML.trim() === '';    // an empty table whose chart says so
    } else {
      const body = await response.json();
      if (views[el.id]) { views[el.id].finalize(); delete views[el.id]; }
      if (body.spec === null) {
        target.innerHTML = '<p class="empty"></p>';
        target.firstChild.textContent = body.note;
      } else {
        target.textContent = '';
        const result = await vegaEmbed(target, body.spec, {renderer: 'svg',
          actions: {export: true, source: false, compiled: false, editor: false}});
        views[el.id] = result.view;
      }
    }
    el.dataset.loaded = 'true';
  } catch (error) {
    target.textContent = 'error: ' + error.message;
    el.dataset.loaded = 'error';
  }
}
const blocks = [...document.querySelectorAll('.block[data-kind]')];
Promise.all(blocks.map(fill)).then(() => { document.body.dataset.ready = 'true'; });
for (const el of blocks) {
  for (const control of el.querySelectorAll('input.log, input.smooth, select.x')) {
    control.addEventListener('change', () => fill(el));
  }
  const smooth = el.querySelector('input.smooth');
  if (smooth) smooth.addEventListener('input', () => {
    smooth.nextElementSibling.textContent = smooth.value; });
}
document.addEventListener('click', event => {       // a pager's link: that page in place
  const link = event.target.closest('a[data-page]');
  const el = link && link.closest('.block[data-kind]');
  if (!el) return;
  event.preventDefault();
  const params = new URLSearchParams(el.dataset.params || '');
  params.set('page', link.dataset.page);
  el.dataset.params = params.toString();
  fill(el);
});
for (const box of document.querySelectorAll('input.filter')) {   // compare: pick by name
  const apply = () => {
    const text = box.value.trim().toLowerCase();
    for (const label of box.form.querySelectorAll('label.version')) {
      label.hidden = text !== '' && !label.dataset.text.includes(text);
    }
  };
  box.addEventListener('input', apply);
  apply();
}
const live = blocks.filter(el => el.dataset.live === 'true' || document.body.dataset.live === 'true');
if (live.length) setInterval(() => live.forEach(fill), %d);
"""

REFRESH_MS = 5000


def controls(found: charts.Chart) -> str:
    """A chart's controls on the served page: log scale, smoothing, the x axis."""
    parts = []
    if found.log_option:
        parts.append("<label class='note'><input type='checkbox' class='log'> log scale</label>")
    if found.smooth_option:
        parts.append("<label class='note'>smoothing <input type='range' class='smooth' "
                     "min='0' max='0.99' step='0.01' value='0' aria-label='smoothing'> "
                     "<output>0</output></label>")
    if found.x_options:
        choices = "".join(f"<option value='{c.name}'>{html.escape(c.label)}</option>"
                          for c in found.x_options)
        parts.append(f"<label class='note'>x <select class='x' aria-label='x axis'>{choices}"
                     f"</select></label>")
    return f"<div class='controls'>{' '.join(parts)}</div>" if parts else ""


def block_html(block: Block, body: str = "", served: bool = True) -> str:
    element = f"{block.kind}-{block.name}" + (f"-{anchor(block.query_string)}"
                                               if block.params else "")
    option = controls(charts.BY_NAME[block.name]) if served and block.kind == "chart" else ""
    note = charts.BY_NAME[block.name].note if block.kind == "chart" else ""
    return (f"<div class='block' id='{html.escape(element)}' data-kind='{block.kind}' "
            f"data-name='{block.name}' data-params='{html.escape(block.query_string)}' "
            f"data-live='{str(block.live).lower()}'><h3>{html.escape(block.title)}</h3>"
            f"{option}{f'<p class=note>{html.escape(note)}</p>' if note and served else ''}"
            f"<div class='body'>{body}</div></div>")


def page_body(page: Page, bodies: dict[int, str] | None = None, served: bool = True) -> str:
    parts, index = [f"<h1 id='{page.anchor}'>{html.escape(page.title)}</h1>"], 0
    if page.subtitle:
        parts.append(f"<p class='subtitle'>{html.escape(page.subtitle)}</p>")
    for section in page.sections:
        blocks = []
        for block in section.blocks:
            body = (bodies or {}).get(index, "")
            index += 1
            if bodies is not None and block.kind == "table" and not body:
                continue                    # an empty table whose chart says so
            blocks.append(block_html(block, body, served))
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>{section.intro}"
                     f"<div class='blocks'>{''.join(blocks)}</div></section>")
    return "".join(parts)


def nav(served: bool) -> str:
    if served:
        return ("<header><a href='/'>Overview</a><a href='/compare'>Compare runs</a>"
                "<a href='/ratings'>Ratings</a></header>")
    return ("<header><a href='#overview'>Overview</a><a href='#ratings'>Ratings</a>"
            "<a href='#models'>Models</a><a href='#matches'>Matches</a></header>")


def served_page(page: Page, home: str) -> str:
    """A page's skeleton; its script fetches every block (``/chart``, ``/table``)."""
    body = nav(True) + page_body(page)
    return document(f"{page.title}: chesslab {home}", body, page.live,
                    "<script src='/static/vega.js'></script>"
                    f"<script>{SCRIPT % REFRESH_MS}</script>")


def document(title: str, body: str, live: bool = False, scripts: str = "") -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
            f"<body data-live='{str(live).lower()}'>{body}{scripts}</body></html>")


def spec_json(spec: dict[str, Any]) -> str:
    return json.dumps(spec, allow_nan=False)

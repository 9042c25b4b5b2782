"""The dashboard's tables: each reads named queries and renders HTML, with links from model
ids to their pages and from matches to theirs. ``Links`` says where a link goes: the served
app's URLs, or anchors inside the static report.
"""
from __future__ import annotations

import html
import json
import math
import os
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashboards.data import (
    Params,
    Row,
    Rows,
    flatten,
    human_time,
    json_object,
    json_text,
    number_text,
    value_text,
)
from dashboards.match import elo_series, sprt_series
from warehouse.render import cell

GAMES_PAGE = 100           # games a page of a match's games table


@dataclass(frozen=True)
class Links:
    """Where the tables' links point: ``served`` (the app's URLs) or the static report's
    anchors (no downloads there)."""

    served: bool = True

    def model(self, model_id: str) -> str:
        return (f"/models/{urllib.parse.quote(model_id)}" if self.served
                else f"#model-{anchor(model_id)}")

    def match(self, tournament_id: str) -> str:
        return (f"/matches/{urllib.parse.quote(tournament_id)}" if self.served
                else f"#match-{anchor(tournament_id)}")

    def compare(self, kind: str) -> str:
        return (f"/compare?kind={urllib.parse.quote(kind)}" if self.served
                else f"#compare-{anchor(kind)}")

    def pgn(self, tournament_id: str, game_key: str | None = None) -> str | None:
        if not self.served:
            return None
        path = f"/matches/{urllib.parse.quote(tournament_id)}/games.pgn"
        return path + (f"?game={urllib.parse.quote(game_key)}" if game_key else "")


def anchor(text: str) -> str:
    """An element id for a model or match id.

    >>> anchor("nnue@1")
    'nnue-1'
    """
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


Render = Callable[[Mapping[str, Rows], Params, Links], str]


@dataclass(frozen=True)
class Table:
    name: str                       # URL and element id: /table/<name>
    title: str
    queries: tuple[str, ...]
    render: Render
    defaults: Mapping[str, Any] = field(default_factory=dict)   # parameters a page can't set


def link(href: str | None, text: str) -> str:
    body = html.escape(text)
    return f"<a href='{html.escape(href)}'>{body}</a>" if href else body


def value_html(column: str, value: Any, links: Links, row: Row) -> str:
    if value is None:
        return ""
    if column in ("model_id", "player") and isinstance(value, str) and row.get("linked"):
        return link(links.model(row["linked"]), value)
    if column == "model_id":
        return link(links.model(value), value)
    if column == "event" and row.get("tournament_id"):
        return link(links.match(row["tournament_id"]), str(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return html.escape(number_text(value))
    if isinstance(value, list | dict):
        return html.escape(cell(value_text(value), 120))
    return html.escape(cell(human_time(str(value)), 120))


def grid(rows: Rows, columns: Sequence[str], links: Links,
         classes: Callable[[Row, str], str] | None = None, empty: str = "No rows yet.") -> str:
    """Rows as an HTML table of ``columns``; ``empty`` when there are none (nothing at all
    when ``empty`` is empty: the chart beside the table says it once)."""
    if not rows:
        return f"<p class='empty'>{html.escape(empty)}</p>" if empty else ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(
            f"<td class='{classes(r, c) if classes else ''}'>{value_html(c, r.get(c), links, r)}"
            f"</td>" for c in columns) + "</tr>" for r in rows)
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}" \
           f"</tbody></table></div>"


def key_values(pairs: Sequence[tuple[str, str]]) -> str:
    """A two-column table of (name, HTML value)."""
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in pairs)
    return f"<div class='scroll'><table class='kv'><tbody>{body}</tbody></table></div>"


def columns_of(query: str, columns: Sequence[str]) -> Render:
    """A plain table of one query's ``columns``."""
    return lambda data, params, links: grid(data[query], columns, links)


# --------------------------------------------------------------------------------------------
# Renderers that do more than list columns
# --------------------------------------------------------------------------------------------

def model_summary(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    found = data["dashboard_model"]
    if not found:
        return "<p class='empty'>No such model.</p>"
    m = found[0]
    pairs = [(k, html.escape(cell(value_text(m[k]), 200))) for k in (
        "model_id", "name", "kind", "version", "status", "status_at", "epochs", "train_loss",
        "val_loss", "created_at", "artifact_path") if m.get(k) is not None]
    pairs.append(("artifact sha256", f"<code>{html.escape(m['artifact_sha256'] or '')}</code>"))
    pairs.append(("plays as", html.escape(plays_as(m))))
    pairs.append(("compare", link(links.compare(m["kind"]), f"all {m['kind']} versions")))
    return key_values(pairs)


def plays_as(model: Row) -> str:
    """The engine spec that plays the version, as its kind declares it (or its config says)."""
    from pipelines.models.kinds import playing_spec
    from pipelines.models.names import ModelError

    try:
        return playing_spec(model["kind"], model["model_id"], json_object(model["config"]))
    except ModelError as exc:
        return str(exc)


def model_config(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    found = data["dashboard_model"]
    config = flatten(json_object(found[0]["config"])) if found else {}
    if not config:
        return "<p class='empty'>No config recorded (the run has not finished).</p>"
    return key_values([(k, html.escape(value_text(v))) for k, v in sorted(config.items())])


def model_events(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    rows = [{**r, "payload": ", ".join(f"{k}={cell(value_text(v), 40)}" for k, v in
                                       flatten(json_object(r["payload"])).items())}
            for r in data["dashboard_model_events"]]
    return grid(rows, ("recorded_at", "event", "payload"), links)


def compare_table(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    """The compared versions side by side, one column each: their evaluation (match Elo and
    interval against the baseline, SPRT verdict, ladder rating), the run (status, wall time,
    final losses), the data (its size, labels, parameters and source files), then the
    hyper-parameters that differ; the equal ones folded below. Rows whose values differ are
    marked ``diff``."""
    models = data["dashboard_compare_models"]
    if not models:
        return "<p class='empty'>No versions selected.</p>"
    files: dict[str, list[str]] = {}
    for r in data["dashboard_compare_sources"]:
        files.setdefault(r["model_id"], []).append(
            f"{os.path.basename(r['source_path'])} ({number_text(r['positions'])})")
    configs = [flatten(json_object(m["config"])) for m in models]
    keys = sorted({k for c in configs for k in c})
    differing = [k for k in keys if differ([c.get(k) for c in configs])]
    sections = [
        ("Evaluation (latest)", [
            ("match Elo (95%)", [elo_text(m["elo"], m["elo_lower"], m["elo_upper"])
                                 for m in models]),
            ("against", [m["against"] or "" for m in models]),
            ("games", [value_text(m["games"]) for m in models]),
            ("SPRT", [sprt_text(m) for m in models]),
            ("ladder Elo", [ladder_text(m) for m in models]),
            ("evaluated at", [value_text(m["evaluated_at"]) for m in models])]),
        ("Run", [
            ("status", [m["status"] or "" for m in models]),
            ("epochs done", [value_text(m["epochs"]) for m in models]),
            ("wall time", [duration_text(m["wall_s"]) for m in models]),
            ("final train loss", [value_text(m["train_loss"]) for m in models]),
            ("final validation loss", [value_text(m["val_loss"]) for m in models])]),
        ("Data", [
            ("training positions", [value_text(m["train_rows"]) for m in models]),
            ("validation positions", [value_text(m["validation_rows"]) for m in models]),
            ("labels", [labels_text(m) for m in models]),
            ("data set", [f"{m['view'] or ''}: {json_text(m['dataset_parameters'])}"
                          if m["view"] else "" for m in models]),
            ("source files", [", ".join(files.get(m["model_id"], [])) for m in models]),
            ("data set hash", [m["position_keys_hash"] or "" for m in models])]),
        ("Hyper-parameters that differ", [
            (k, [value_text(c.get(k)) for c in configs]) for k in differing]),
    ]
    head = "".join(f"<th>{link(links.model(m['model_id']), m['model_id'])}<br>"
                   f"<span class='note'>{html.escape(m['name'])}</span></th>" for m in models)
    body = "".join(section_rows(title, rows, len(models)) for title, rows in sections)
    equal = [(k, value_text(configs[0].get(k))) for k in keys if k not in differing]
    folded = (f"<details><summary>{len(equal)} equal hyper-parameters</summary>"
              f"{key_values([(k, html.escape(v)) for k, v in equal])}</details>"
              if equal else "")
    return (f"<div class='scroll'><table class='compare'><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{body}</tbody></table></div>{folded}")


def differ(shown: Sequence[Any]) -> bool:
    return len({json.dumps(v, sort_keys=True) for v in shown}) > 1


def section_rows(title: str, rows: Sequence[tuple[str, Sequence[str]]], width: int) -> str:
    """A titled group of rows of the comparison; a row whose values differ is ``diff``."""
    if not rows:
        return ""
    lines = [f"<tr class='section'><th colspan='{width + 1}'>{html.escape(title)}</th></tr>"]
    for name, shown in rows:
        cells = "".join(f"<td>{html.escape(cell(v, 80))}</td>" for v in shown)
        lines.append(f"<tr class='{'diff' if differ(shown) else ''}'>"
                     f"<th>{html.escape(name)}</th>{cells}</tr>")
    return "".join(lines)


def elo_text(elo: float | None, lower: float | None, upper: float | None) -> str:
    """An Elo with its 95% interval; an undefined bound (a 0% or 100% score) is n/a.

    >>> elo_text(-338.04, None, -117.42), elo_text(12.0, 1.0, 20.0), elo_text(None, 1, 2)
    ('-338.0 [n/a, -117.4]', '+12.0 [+1.0, +20.0]', '')
    """
    if elo is None:
        return ""
    low, high = (f"{b:+.1f}" if b is not None else "n/a" for b in (lower, upper))
    return f"{elo:+.1f} [{low}, {high}]"


def sprt_text(model: Row) -> str:
    if not model["sprt"]:
        return ""
    llr = f" (LLR {model['llr']:.2f})" if model["llr"] is not None else ""
    return f"{model['sprt']}{llr}"


def ladder_text(model: Row) -> str:
    if model["ladder_elo"] is None:
        return ""
    plus, minus = model["ladder_plus"], model["ladder_minus"]
    spread = f" +{plus:.0f} -{minus:.0f}" if plus is not None and minus is not None else ""
    return f"{model['ladder_elo']:.0f}{spread}"


def labels_text(model: Row) -> str:
    if not model["label_engine_id"]:
        return ""
    depths = ", ".join(str(d) for d in model["label_depths"] or [])
    return f"{model['label_engine_id']} at depth {depths}"


def duration_text(seconds: float | None) -> str:
    """Seconds as a person reads a run's length.

    >>> duration_text(12.8), duration_text(192.0), duration_text(8000.0), duration_text(None)
    ('13 s', '3 min 12 s', '2 h 13 min', '')
    """
    if seconds is None:
        return ""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def match_summary(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    found = data["dashboard_match"]
    if not found:
        return "<p class='empty'>No such match.</p>"
    m = found[0]
    games = data["dashboard_match_games"]
    pairs = [(k, html.escape(cell(value_text(m[k]), 200))) for k in (
        "event", "format", "status", "games_done", "planned_games", "time_control", "nodes",
        "depth", "movetime_ms", "openings", "created_at", "updated_at")
        if m.get(k) not in (None, "-")]
    pairs.append(("match id", f"<code>{html.escape(m['tournament_id'])}</code>"))
    elo = elo_series(games)
    if elo:
        last = elo[-1]
        pairs += [("players", html.escape(f"{last['player']} vs {last['opponent']}")),
                  ("W/D/L", f"{last['wins']:,}/{last['draws']:,}/{last['losses']:,}"),
                  ("Elo (95%)", html.escape(elo_text(last["elo"], last["lower"], last["upper"])
                                            or "n/a")),
                  ("LOS", f"{100 * last['los']:.1f}%")]
    sprt = sprt_series(m, games)
    if sprt:
        last = sprt[-1]
        decision = "H1" if last["llr"] >= last["upper_bound"] else (
            "H0" if last["llr"] <= last["lower_bound"] else "continue")
        pairs += [("SPRT", html.escape(
            f"elo0={m['sprt_elo0']:g} elo1={m['sprt_elo1']:g} alpha={m['sprt_alpha']:g} "
            f"beta={m['sprt_beta']:g} ({m['sprt_model']})")),
                  ("LLR", f"{last['llr']:.3f} in [{last['lower_bound']:.3f}, "
                          f"{last['upper_bound']:.3f}]: {decision}")]
    pgn = links.pgn(m["tournament_id"])
    if pgn:
        pairs.append(("PGN", link(pgn, "download all games")))
    return key_values(pairs)


def match_games(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    """One page of the match's games (``GAMES_PAGE`` a page, numbered in the order they
    finished) under a pager; the static report shows the first page and says how many
    there are."""
    tournament = str(params.get("tournament"))
    found = data["dashboard_match_games_page"]
    page = page_number(params)
    if not found:
        if page > 1:
            return (f"<p class='empty'>No games on page {page}. "
                    f"<a href='?page=1' data-page='1'>first page</a></p>")
        return "<p class='empty'>No games yet.</p>"
    rows = [{**g, "#": g["game_no"], "pgn": link(links.pgn(tournament, g["game_key"]), "pgn")}
            for g in found]
    columns = ("#", "round", "pairing", "white", "black", "result", "termination", "plies",
               "eco", "opening", "opening_moves", "duration_s", "finished_at")
    size = int(params.get("page_size") or GAMES_PAGE)
    shown = pager(page, found[0]["games_total"], size, links.served)
    body = grid_with_pgn(rows, columns, links) if links.served else grid(rows, columns, links)
    return shown + body


def page_number(params: Params) -> int:
    try:
        return max(1, int(params.get("page") or 1))
    except ValueError:
        return 1


def pager(page: int, total: int, size: int, served: bool) -> str:
    """"games 101-200 of 3,000" and links to the first, previous, next and last pages (the
    page's script loads them in place; without it they reload the page)."""
    pages = max(1, math.ceil(total / size))
    first, last = (page - 1) * size + 1, min(page * size, total)
    text = f"games {first:,}–{last:,} of {total:,}"
    if not served:
        more = " (all of them in the served dashboard or the match's PGN)" if pages > 1 else ""
        return f"<p class='pager'>{text}{more}</p>"
    links = [f"<a href='?page={target}' data-page='{target}'>{label}</a>"
             for label, target in (("« first", 1), ("‹ previous", page - 1),
                                   ("next ›", page + 1), (f"last ({pages}) »", pages))
             if 1 <= target <= pages and target != page]
    return f"<p class='pager'>{' · '.join([text, *links])}</p>"


def grid_with_pgn(rows: Rows, columns: Sequence[str], links: Links) -> str:
    """``grid`` with one more column: each game's PGN link (built here, not from data)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in (*columns, "pgn"))
    body = "".join(
        "<tr>" + "".join(f"<td>{value_html(c, r.get(c), links, r)}</td>" for c in columns)
        + f"<td>{r['pgn']}</td></tr>" for r in rows)
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}" \
           f"</tbody></table></div>"


def model_matches(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    return grid(data["dashboard_model_matches"], (
        "event", "format", "status", "games_done", "planned_games", "player", "elo", "plus",
        "minus", "games", "updated_at"), links)


def lineage(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    rows = data["dashboard_model_lineage"]
    if not rows:
        return "<p class='empty'>No data set recorded.</p>"
    d = rows[0]
    pairs = [(k, html.escape(cell(value_text(d[k]), 200))) for k in (
        "view", "label_engine_id", "label_depths", "train_rows", "validation_rows",
        "position_keys_hash", "recorded_at")]
    pairs.insert(1, ("parameters", html.escape(json_text(d["parameters"]))))
    files = [r for r in rows if r["source_path"] is not None]
    return key_values(pairs) + "<h4>Source files of the labelled positions</h4>" + grid(
        files, ("source_path", "source_format", "positions"), links)


def models_list(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    return grid(data["dashboard_models"], ("model_id", "name", "kind", "version", "status",
                                           "epochs", "train_loss", "val_loss", "status_at"),
                links)


def ratings_table(query: str) -> Render:
    """A rating pool's table; nothing when it is empty (its chart says so, once)."""
    def render(data: Mapping[str, Rows], params: Params, links: Links) -> str:
        models = {m["model_id"] for m in data.get("dashboard_models", [])}
        rows = [{**r, "linked": r["player"] if r["player"] in models else None}
                for r in data[query]]
        return grid(rows, ("rank", "player", "elo", "plus", "minus", "games", "score",
                           "draws"), links, empty="")
    return render


TABLES = (
    Table("latest-models", "Latest model of each kind", ("dashboard_latest_models",),
          columns_of("dashboard_latest_models", (
              "kind", "model_id", "name", "status", "status_at", "epochs", "val_loss", "sprt",
              "elo", "ladder_elo", "evaluated_at"))),
    Table("models", "Every model version", ("dashboard_models",), models_list),
    Table("matches", "Matches, running and recent first", ("dashboard_matches",),
          columns_of("dashboard_matches", ("event", "players", "limits", "format", "status",
                                           "games_done", "planned_games", "sprt", "llr",
                                           "started_at", "updated_at"))),
    Table("errors", "Ingest and label errors", ("dashboard_errors",),
          columns_of("dashboard_errors", ("step", "subject", "errors", "example"))),
    Table("model-summary", "Model", ("dashboard_model",), model_summary),
    Table("model-config", "Config", ("dashboard_model",), model_config),
    Table("model-lineage", "Data set and lineage", ("dashboard_model_lineage",), lineage),
    Table("model-events", "Events", ("dashboard_model_events",), model_events),
    Table("model-matches", "Matches and ratings", ("dashboard_model_matches",), model_matches),
    Table("volatility-table", "Table 4.1 analogue (ours against the paper's)",
          ("dashboard_volatility_table",), columns_of("dashboard_volatility_table", (
              "target_fpr", "threshold", "tpr", "fpr", "paper_tpr", "paper_threshold",
              "roc_auc"))),
    Table("lmr-fits", "Table 6.1 fits (best R² first)", ("dashboard_lmr_fits",),
          columns_of("dashboard_lmr_fits", ("formula", "coefficients", "r2",
                                            "paper_coefficients", "paper_r2", "label",
                                            "rows"))),
    Table("compare", "Results, runs, data and hyper-parameters (differences highlighted)",
          ("dashboard_compare_models", "dashboard_compare_sources"), compare_table),
    Table("match-summary", "Match", ("dashboard_match", "dashboard_match_games"),
          match_summary),
    Table("match-games", "Games", ("dashboard_match_games_page",), match_games,
          defaults={"page_size": GAMES_PAGE}),
    Table("match-incidents", "Lost workers, replayed batches, time forfeits",
          ("dashboard_match_incidents",), columns_of("dashboard_match_incidents", (
              "happened_at", "incident", "game_key", "detail", "white_time_s",
              "white_budget_s", "black_time_s", "black_budget_s"))),
    Table("rating-pool", "Ratings", ("dashboard_latest_ratings", "dashboard_models"),
          ratings_table("dashboard_latest_ratings")),
    Table("ladder-pool", "Stockfish ladder", ("dashboard_ladder_pool", "dashboard_models"),
          ratings_table("dashboard_ladder_pool")),
)
BY_NAME = {table.name: table for table in TABLES}

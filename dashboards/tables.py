"""The dashboard's tables: each reads named queries and renders HTML, with links from model
ids to their pages and from matches to theirs. ``Links`` says where a link goes: the served
app's URLs, or anchors inside the static report.
"""
from __future__ import annotations

import html
import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dashboards.data import Params, Row, Rows, flatten, json_object
from dashboards.match import elo_series, sprt_series
from warehouse.render import cell


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
    if isinstance(value, float):
        return html.escape(f"{value:.6g}")
    if isinstance(value, list | dict):
        return html.escape(cell(json.dumps(value), 120))
    return html.escape(cell(value, 120))


def grid(rows: Rows, columns: Sequence[str], links: Links,
         classes: Callable[[Row, str], str] | None = None) -> str:
    """Rows as an HTML table of ``columns``; 'No rows yet.' when there are none."""
    if not rows:
        return "<p class='empty'>No rows yet.</p>"
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
    pairs = [(k, html.escape(cell(m[k], 200))) for k in (
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
    return key_values([(k, html.escape(json.dumps(v))) for k, v in sorted(config.items())])


def model_events(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    rows = [{**r, "payload": ", ".join(f"{k}={cell(v, 40)}" for k, v in
                                       flatten(json_object(r["payload"])).items())}
            for r in data["dashboard_model_events"]]
    return grid(rows, ("recorded_at", "event", "payload"), links)


def compare_table(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    """Hyper-parameters and final figures side by side, one column per version; rows whose
    values differ are marked ``diff``."""
    models = data["dashboard_compare_models"]
    if not models:
        return "<p class='empty'>No versions selected.</p>"
    columns = {m["model_id"]: {**flatten(json_object(m["config"])), **{
        k: m[k] for k in ("status", "epochs", "train_loss", "val_loss", "train_rows",
                          "validation_rows", "label_engine_id", "label_depths")}}
        for m in models}
    keys = sorted({k for c in columns.values() for k in c})
    head = "".join(f"<th>{link(links.model(m), m)}</th>" for m in columns)
    body = []
    for key in keys:
        shown = [c.get(key) for c in columns.values()]
        differ = len({json.dumps(v, sort_keys=True) for v in shown}) > 1
        cells = "".join(f"<td>{html.escape(cell(v, 60)) if v is not None else ''}</td>"
                        for v in shown)
        body.append(f"<tr class='{'diff' if differ else ''}'><th>{html.escape(key)}</th>"
                    f"{cells}</tr>")
    return (f"<div class='scroll'><table class='compare'><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{''.join(body)}</tbody></table></div>")


def match_summary(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    found = data["dashboard_match"]
    if not found:
        return "<p class='empty'>No such match.</p>"
    m = found[0]
    games = data["dashboard_match_games"]
    pairs = [(k, html.escape(cell(m[k], 200))) for k in (
        "event", "format", "status", "games_done", "planned_games", "time_control", "nodes",
        "depth", "movetime_ms", "openings", "updated_at") if m.get(k) not in (None, "-")]
    elo = elo_series(games)
    if elo:
        last = elo[-1]
        text = "n/a" if last["elo"] is None else (
            f"{last['elo']:+.1f} [{cell(last['lower'], 10)}, {cell(last['upper'], 10)}]")
        pairs += [("players", html.escape(f"{last['player']} vs {last['opponent']}")),
                  ("W/D/L", f"{last['wins']}/{last['draws']}/{last['losses']}"),
                  ("Elo (95%)", html.escape(text)), ("LOS", f"{100 * last['los']:.1f}%")]
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
    tournament = str(params.get("tournament"))
    rows = [{**g, "pgn": link(links.pgn(tournament, g["game_key"]), "pgn")}
            for g in data["dashboard_match_games"]]
    columns = ("round", "pairing", "white", "black", "result", "termination", "plies", "eco",
               "opening", "opening_moves", "duration_s", "finished_at")
    if not rows:
        return "<p class='empty'>No games yet.</p>"
    return grid_with_pgn(rows, columns, links) if links.served else grid(rows, columns, links)


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
    pairs = [(k, html.escape(cell(d[k], 200))) for k in (
        "view", "parameters", "label_engine_id", "label_depths", "train_rows",
        "validation_rows", "position_keys_hash", "recorded_at")]
    files = [r for r in rows if r["source_path"] is not None]
    return key_values(pairs) + "<h4>Source files of the labelled positions</h4>" + grid(
        files, ("source_path", "source_format", "positions"), links)


def models_list(data: Mapping[str, Rows], params: Params, links: Links) -> str:
    return grid(data["dashboard_models"], ("model_id", "name", "kind", "version", "status",
                                           "epochs", "train_loss", "val_loss", "status_at"),
                links)


def ratings_table(query: str) -> Render:
    def render(data: Mapping[str, Rows], params: Params, links: Links) -> str:
        models = {m["model_id"] for m in data.get("dashboard_models", [])}
        rows = [{**r, "linked": r["player"] if r["player"] in models else None}
                for r in data[query]]
        return grid(rows, ("rank", "player", "elo", "plus", "minus", "games", "score",
                           "draws"), links)
    return render


TABLES = (
    Table("latest-models", "Latest model of each kind", ("dashboard_latest_models",),
          columns_of("dashboard_latest_models", (
              "kind", "model_id", "name", "status", "status_at", "epochs", "val_loss", "sprt",
              "elo", "ladder_elo", "evaluated_at"))),
    Table("models", "Every model version", ("dashboard_models",), models_list),
    Table("matches", "Matches, running and recent first", ("dashboard_matches",),
          columns_of("dashboard_matches", ("event", "format", "status", "games_done",
                                           "planned_games", "sprt", "llr", "updated_at"))),
    Table("labels", "Labelled positions per engine and depth", ("label_coverage",),
          columns_of("label_coverage", ("engine_name", "engine_version", "depth", "positions",
                                        "pct_of_positions"))),
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
    Table("compare", "Hyper-parameters and final figures (differences highlighted)",
          ("dashboard_compare_models",), compare_table),
    Table("match-summary", "Match", ("dashboard_match", "dashboard_match_games"),
          match_summary),
    Table("match-games", "Games", ("dashboard_match_games",), match_games),
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

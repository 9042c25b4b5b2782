"""The dashboard's charts: each a small Vega-Lite spec (built with Altair) next to the named
queries it reads. The browser renders a spec with vega-embed (``dashboards.server``), the
static report renders the same spec to SVG with vl-convert (``dashboards.report``).

A chart's ``build`` gets the rows of its queries (by query name) and the page's options
(``log``: a log-scale loss axis) and returns the chart, or None when there is nothing to draw.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

from dashboards.data import Params, Row, Rows, json_object
from dashboards.match import elo_series, sprt_series

Built = alt.TopLevelMixin | None
WIDTH = 560
HEIGHT = 260
ELO_MIN_SPAN = 100.0   # an Elo axis spans at least this many points (one player, no interval)


@dataclass(frozen=True)
class Chart:
    name: str                                   # URL and element id: /chart/<name>
    title: str
    queries: tuple[str, ...]                    # named queries, warehouse/sql/queries
    build: Callable[[Mapping[str, Rows], Params], Built]
    log_option: bool = False                    # the page offers a log-scale loss axis
    note: str = ""                              # shown above the chart
    empty: str = "No rows yet."                 # shown instead when there is nothing to draw


def values(rows: Rows) -> alt.Data:
    return alt.Data(values=rows)


def loss_scale(options: Params) -> alt.Scale:
    return alt.Scale(type="log") if options.get("log") else alt.Scale(zero=False)


def padded_domain(lows: Sequence[float], highs: Sequence[float],
                  min_span: float = ELO_MIN_SPAN) -> list[float]:
    """An axis domain covering [min(lows), max(highs)], widened to ``min_span`` around its
    middle: one rating without an interval must not get an axis of 1198-1200.

    >>> padded_domain([1199.4], [1199.4])
    [1149.4, 1249.4]
    >>> padded_domain([900.0], [1480.0])
    [900.0, 1480.0]
    """
    low, high = min(lows), max(highs)
    if high - low < min_span:
        middle = (low + high) / 2
        low, high = middle - min_span / 2, middle + min_span / 2
    return [round(low, 1), round(high, 1)]


def with_interval(rows: Rows, value: str = "elo") -> Rows:
    """Rows with ``low``/``high``: the value minus ``minus`` and plus ``plus`` (the value
    itself when the interval is unknown)."""
    return [{**r, "low": r[value] - (r.get("minus") or 0.0),
             "high": r[value] + (r.get("plus") or 0.0)} for r in rows if r[value] is not None]


def elo_axis(rows: Rows, title: str) -> alt.Scale:
    return alt.Scale(domain=padded_domain([r["low"] for r in rows], [r["high"] for r in rows]),
                     zero=False, nice=True)


# --------------------------------------------------------------------------------------------
# Overview
# --------------------------------------------------------------------------------------------

def positions_per_source(data: Mapping[str, Rows], options: Params) -> Built:
    rows = [{**r, "file": os.path.basename(r["source"])} for r in
            data["dashboard_positions_per_source"]]
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_bar(tooltip=True).encode(
        x=alt.X("positions:Q", title="positions"),
        y=alt.Y("file:N", sort="-x", title=None),
    ).properties(width=WIDTH, height=alt.Step(22))


def labels_per_engine(data: Mapping[str, Rows], options: Params) -> Built:
    rows = [{**r, "labels": f"{r['engine_name']} {r['engine_version']} depth {r['depth']}"}
            for r in data["label_coverage"]]
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_bar(tooltip=True).encode(
        x=alt.X("positions:Q", title="labelled positions"),
        y=alt.Y("labels:N", title=None, sort=None),
        color=alt.Color("depth:O", title="depth", scale=alt.Scale(scheme="viridis")),
    ).properties(width=WIDTH, height=alt.Step(22))


def coverage_over_time(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_coverage_over_time"]
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_line(point=True, tooltip=True).encode(
        x=alt.X("minute:T", title="time (UTC)", timeUnit="utcyearmonthdatehoursminutes"),
        y=alt.Y("labelled:Q", title="labelled positions"),
        color=alt.Color("depth:O", title="depth", scale=alt.Scale(scheme="viridis")),
    ).properties(width=WIDTH, height=HEIGHT)


def training(data: Mapping[str, Rows], options: Params) -> Built:
    """Every model version as a dot (click one: the loss curves and the ladder follow), loss
    curves with one y axis per kind, and the ladder rating of each version."""
    models = data["dashboard_models"]
    if not models:
        return None
    pick = alt.selection_point(name="model", fields=["model_id"], empty=True)
    dots = alt.Chart(values(models), title="model versions (click to select)").mark_point(
        filled=True, size=140, tooltip=True).encode(
        x=alt.X("version:O", title="version", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("kind:N", title=None),
        color=alt.Color("status:N", title="status"),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
    ).add_params(pick).properties(width=WIDTH)
    charts: list[Any] = [dots]
    curves = data["dashboard_training_curves"]
    if curves:
        charts.append(alt.Chart(values(curves)).transform_filter(pick).transform_fold(
            ["train_loss", "val_loss"], as_=["split", "loss"]).mark_line(
            point=True, tooltip=True).encode(
            x=alt.X("epoch:Q", title="epoch", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("loss:Q", title="loss", scale=loss_scale(options)),
            color=alt.Color("model_id:N", title="model"),
            strokeDash=alt.StrokeDash("split:N", title="split"),
        ).properties(width=WIDTH, height=180).facet(
            row=alt.Row("kind:N", title="loss per kind (own axis)")).resolve_scale(
            y="independent", color="independent"))
    ladder = with_interval(data["dashboard_ladder_history"], "ladder_elo")
    if ladder:
        charts.append(ladder_chart(ladder, pick))
    return alt.vconcat(*charts).resolve_scale(color="independent")


def ladder_chart(rows: Rows, pick: Any = None) -> alt.LayerChart:
    base = alt.Chart(values(rows), title="Stockfish-ladder rating per model version")
    if pick is not None:
        base = base.transform_filter(pick)
    x = alt.X("model_id:N", title="model version", sort=None, axis=alt.Axis(labelAngle=0))
    scale = elo_axis(rows, "Elo")
    bars = base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="ladder Elo"),
                                   y2="high:Q")
    dots = base.mark_point(filled=True, size=80, tooltip=True).encode(
        x=x, y=alt.Y("ladder_elo:Q", scale=scale), color=alt.Color("kind:N", title="kind"))
    return (bars + dots).properties(width=WIDTH, height=HEIGHT)


def elo_by_data(data: Mapping[str, Rows], options: Params) -> Built:
    """Elo against training positions: one point per evaluated version with its 95% interval,
    a line per architecture and baseline, the baseline's level at 0; positions on a log axis
    (each doubling of the data is one step)."""
    rows = [{**r, "low": r["elo_lower"] if r["elo_lower"] is not None else r["elo"],
             "high": r["elo_upper"] if r["elo_upper"] is not None else r["elo"],
             "series": f"{r['arch']} vs {r['against']}"}
            for r in data["dashboard_elo_by_data"] if r["train_rows"]]
    if not rows:
        return None
    base = alt.Chart(values(rows))
    x = alt.X("train_rows:Q", title="training positions", scale=alt.Scale(type="log"))
    low, high = padded_domain([min(0.0, *(r["low"] for r in rows))],
                              [max(0.0, *(r["high"] for r in rows))])
    margin = round((high - low) * 0.05, 1)          # the end of an interval stays visible
    scale = alt.Scale(domain=[low - margin, high + margin], zero=False)
    series = alt.Color("series:N", title="net vs baseline", legend=alt.Legend(labelLimit=0))
    bars = base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="Elo"), y2="high:Q",
                                   color=series)
    line = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=70), tooltip=True).encode(
        x=x, y=alt.Y("elo:Q", scale=scale), color=series)
    level = alt.Chart(values([{"elo": 0.0}])).mark_rule(strokeDash=[4, 4], color="#555").encode(
        y=alt.Y("elo:Q", scale=scale))
    return (level + bars + line).properties(width=WIDTH, height=HEIGHT)


def errors(data: Mapping[str, Rows], options: Params) -> Built:
    rows = [{**r, "what": f"{r['step']}: {os.path.basename(str(r['subject']))}"}
            for r in data["dashboard_errors"]]
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_bar(color="#c0392b", tooltip=True).encode(
        x=alt.X("errors:Q"), y=alt.Y("what:N", sort="-x", title=None),
    ).properties(width=WIDTH, height=alt.Step(22))


# --------------------------------------------------------------------------------------------
# A model version
# --------------------------------------------------------------------------------------------

def model_losses(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_model_curves"]
    if not rows:
        return None
    return alt.Chart(values(rows)).transform_fold(
        ["train_loss", "val_loss"], as_=["split", "loss"]).mark_line(
        point=True, tooltip=True).encode(
        x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("loss:Q", scale=loss_scale(options)),
        color=alt.Color("split:N", title="split"),
    ).properties(width=WIDTH, height=HEIGHT).interactive()


def epoch_metrics(rows: Rows) -> Rows:
    """One row per epoch and metric: learning rate, speed and the kind's numeric extras."""
    found: Rows = []
    for r in rows:
        metrics = {"learning_rate": r["learning_rate"], "positions_per_s": r["positions_per_s"],
                   **json_object(r["extra"])}
        found += [{"epoch": r["epoch"], "metric": k, "value": v} for k, v in metrics.items()
                  if isinstance(v, int | float) and not isinstance(v, bool)
                  and math.isfinite(v)]
    return found


def model_metrics(data: Mapping[str, Rows], options: Params) -> Built:
    rows = epoch_metrics(data["dashboard_model_curves"])
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_line(point=True, tooltip=True).encode(
        x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("value:Q", title=None, axis=alt.Axis(format="~g")),
    ).properties(width=240, height=150).facet(
        facet=alt.Facet("metric:N", title=None), columns=2).resolve_scale(y="independent")


def model_ladder(data: Mapping[str, Rows], options: Params) -> Built:
    rows = with_interval(data["dashboard_ladder_history"], "ladder_elo")
    if not rows:
        return None
    scale = elo_axis(rows, "Elo")
    base = alt.Chart(values(rows))
    x = alt.X("recorded_at:T", title="evaluated at (UTC)")
    return (base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="ladder Elo"),
                                    y2="high:Q")
            + base.mark_point(filled=True, size=80, tooltip=True).encode(
                x=x, y=alt.Y("ladder_elo:Q", scale=scale))).properties(
        width=WIDTH, height=HEIGHT)


def volatility_roc(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_volatility_roc"]
    if not rows:
        return None
    chance = alt.Chart(values([{"fpr": 0.0, "tpr": 0.0}, {"fpr": 1.0, "tpr": 1.0}])).mark_line(
        color="#999", strokeDash=[4, 4]).encode(x="fpr:Q", y="tpr:Q")
    roc = alt.Chart(values(rows)).mark_line(point=True, tooltip=True).encode(
        x=alt.X("fpr:Q", title="false positive rate", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("tpr:Q", title="true positive rate", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model_id:N", title="model"), order="point:Q")
    return (chance + roc).properties(width=360, height=360)


def volatility_gains(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_volatility_gains"]
    if not rows:
        return None
    return alt.Chart(values(rows)).transform_fold(
        ["stable_found", "random", "perfect"], as_=["curve", "share"]).mark_line(
        point=True, tooltip=True).encode(
        x=alt.X("percent:Q", title="% of positions examined"),
        y=alt.Y("share:Q", title="share of stable positions found",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("curve:N", title=None),
        detail="model_id:N",
    ).properties(width=360, height=360)


def lmr_heatmap(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_lmr_heatmap"]
    if not rows:
        return None
    base = alt.Chart(values(rows)).encode(
        x=alt.X("move_no:O", title="move number (30: 30 and later)"),
        y=alt.Y("depth:O", title="depth", sort="descending"))
    cells = base.mark_rect(tooltip=True).encode(
        color=alt.Color("reduction:Q", title="mean safe reduction (plies)",
                        scale=alt.Scale(scheme="viridis")))
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text("reduction:Q", format=".1f"),
        color=alt.condition(alt.datum.reduction > 1.5, alt.value("black"), alt.value("white")))
    return (cells + text).properties(width=WIDTH, height=alt.Step(24))


def decisive_share(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_policy_value_checkpoints"]
    if not rows:
        return None
    model = options.get("model")
    marked = [{**r, "this": r["model_id"] == model} for r in rows]
    lines = alt.Chart(values(marked)).transform_fold(
        ["decisive_share", "decisive_target_share"], as_=["share of", "share"]).mark_line(
        point=True, tooltip=True).encode(
        x=alt.X("round:Q", title="self-play round (checkpoint)", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("share:Q", title="share of positions with |v| > 0.5",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("share of:N", title=None))
    this = alt.Chart(values([r for r in marked if r["this"]])).mark_rule(
        strokeDash=[2, 2], color="#555").encode(x="round:Q")
    return (lines + this).properties(width=WIDTH, height=HEIGHT)


# --------------------------------------------------------------------------------------------
# Compare runs
# --------------------------------------------------------------------------------------------

def compare_curves(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_compare_curves"]
    if not rows:
        return None
    return alt.Chart(values(rows)).transform_fold(
        ["train_loss", "val_loss"], as_=["split", "loss"]).mark_line(
        point=True, tooltip=True).encode(
        x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("loss:Q", scale=loss_scale(options)),
        color=alt.Color("model_id:N", title="model"),
        strokeDash=alt.StrokeDash("split:N", title="split"),
    ).properties(width=WIDTH, height=320).interactive()


# --------------------------------------------------------------------------------------------
# A match
# --------------------------------------------------------------------------------------------

def match_row(data: Mapping[str, Rows]) -> Row | None:
    found = data["dashboard_match"]
    return found[0] if found else None


def match_sprt(data: Mapping[str, Rows], options: Params) -> Built:
    match = match_row(data)
    points = sprt_series(match, data["dashboard_match_games"]) if match else []
    if not points:
        return None
    lower, upper = points[0]["lower_bound"], points[0]["upper_bound"]
    points = [{"games": 0, "pairs": 0, "llr": 0.0}, *points]    # every test starts at 0
    scale = alt.Scale(domain=padded_domain([lower, *(p["llr"] for p in points)],
                                           [upper, *(p["llr"] for p in points)], 1.0))
    base = alt.Chart(values(points))
    bounds = alt.Chart(values([{"bound": "H0 (lower)", "llr": lower},
                               {"bound": "H1 (upper)", "llr": upper}])).mark_rule(
        strokeDash=[6, 3]).encode(y=alt.Y("llr:Q", scale=scale),
                                  color=alt.Color("bound:N", title="bound",
                                                  scale=alt.Scale(range=["#c0392b", "#27ae60"])))
    line = base.mark_line(point=True, tooltip=True, color="#2c3e50").encode(
        x=alt.X("games:Q", title="games"), y=alt.Y("llr:Q", title="LLR", scale=scale))
    return (bounds + line).properties(width=WIDTH, height=HEIGHT).resolve_scale(
        color="independent")


def match_elo(data: Mapping[str, Rows], options: Params) -> Built:
    points = elo_series(data["dashboard_match_games"])
    finite = [p for p in points if p["elo"] is not None]
    if not finite:
        return None
    first = finite[0]["player"]
    base = alt.Chart(values(finite))
    x = alt.X("games:Q", title="games")
    band = base.mark_area(opacity=0.25).encode(
        x=x, y=alt.Y("lower:Q", title=f"Elo of {first} (95% interval)"), y2="upper:Q")
    line = base.mark_line(point=True, tooltip=True).encode(x=x, y="elo:Q")
    zero = alt.Chart(values([{"elo": 0.0}])).mark_rule(color="#999").encode(y="elo:Q")
    return (band + line + zero).properties(width=WIDTH, height=HEIGHT)


def match_pentanomial(data: Mapping[str, Rows], options: Params) -> Built:
    match = match_row(data)
    points = sprt_series(match, data["dashboard_match_games"], need_sprt=False) \
        if match else []
    if not points:
        return None
    last = points[-1]
    cells = ["LL", "LD", "DD+WL", "WD", "WW"]
    rows = [{"pair": cell, "pairs": count, "order": i}
            for i, (cell, count) in enumerate(zip(cells, last["counts"], strict=True))]
    return alt.Chart(values(rows), title=f"game pairs of {last['player']}").mark_bar(
        tooltip=True).encode(
        x=alt.X("pair:N", sort=cells, title="pair result (first player's view)",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("pairs:Q", title="pairs", axis=alt.Axis(tickMinStep=1)),
    ).properties(width=360, height=HEIGHT)


def match_crosstable(data: Mapping[str, Rows], options: Params) -> Built:
    rows = [{**r, "score": r["points"] / r["games"], "text": f"{r['points']:g}/{r['games']}"}
            for r in data["dashboard_crosstable"]]
    if not rows:
        return None
    base = alt.Chart(values(rows)).encode(
        x=alt.X("opponent:N", title="opponent", axis=alt.Axis(labelAngle=0, labelLimit=115)),
        y=alt.Y("player:N", title="player"))
    cells = base.mark_rect(tooltip=True).encode(
        color=alt.Color("score:Q", title="score share", scale=alt.Scale(
            domain=[0, 0.5, 1], range=["#c0392b", "#f7f7f7", "#27ae60"])))
    text = base.mark_text().encode(text="text:N")
    return (cells + text).properties(width=alt.Step(120), height=alt.Step(40))


# --------------------------------------------------------------------------------------------
# Ratings
# --------------------------------------------------------------------------------------------

def rating_pool(rows: Rows) -> Built:
    rows = with_interval(rows)
    if not rows:
        return None
    scale = elo_axis(rows, "Elo")
    base = alt.Chart(values(rows))
    y = alt.Y("player:N", sort=None, title=None)
    return (base.mark_rule().encode(y=y, x=alt.X("low:Q", scale=scale, title="Elo (95%)"),
                                    x2="high:Q")
            + base.mark_point(filled=True, size=80, tooltip=True).encode(
                y=y, x=alt.X("elo:Q", scale=scale))).properties(width=WIDTH,
                                                                 height=alt.Step(26))


CHARTS = (
    Chart("positions-per-source", "Positions per source file",
          ("dashboard_positions_per_source",), positions_per_source),
    Chart("labels", "Labelled positions per engine and depth", ("label_coverage",),
          labels_per_engine),
    Chart("coverage-over-time", "Labelled positions over time", ("dashboard_coverage_over_time",),
          coverage_over_time),
    Chart("training", "Models: losses per kind and ladder ratings",
          ("dashboard_models", "dashboard_training_curves", "dashboard_ladder_history"),
          training, log_option=True,
          note="Click a version to show only its curves and ratings; click empty space to "
               "show all."),
    Chart("elo-by-data", "Elo against training positions (each evaluated version)",
          ("dashboard_elo_by_data",), elo_by_data,
          note="Each version's latest match against its baseline, with the 95% interval; "
               "0 is the baseline's level. Train with --train-percent for a curve in one "
               "home.",
          empty="No evaluated version with a recorded data set yet."),
    Chart("errors", "Ingest and label errors", ("dashboard_errors",), errors),
    Chart("model-losses", "Loss per epoch: train against validation",
          ("dashboard_model_curves",), model_losses, log_option=True),
    Chart("model-metrics", "Learning rate, speed and the kind's metrics per epoch",
          ("dashboard_model_curves",), model_metrics),
    Chart("model-ladder", "Stockfish-ladder rating at each evaluation",
          ("dashboard_ladder_history",), model_ladder),
    Chart("volatility-roc", "ROC curve (positive: stable)", ("dashboard_volatility_roc",),
          volatility_roc),
    Chart("volatility-gains", "Cumulative gains", ("dashboard_volatility_gains",),
          volatility_gains),
    Chart("lmr-heatmap", "Mean safe reduction by depth and move number",
          ("dashboard_lmr_heatmap",), lmr_heatmap),
    Chart("decisive-share", "Decisive share against its target per checkpoint",
          ("dashboard_policy_value_checkpoints",), decisive_share),
    Chart("compare-curves", "Loss curves", ("dashboard_compare_curves",), compare_curves,
          log_option=True),
    Chart("match-sprt", "LLR against games, with the SPRT's bounds",
          ("dashboard_match", "dashboard_match_games"), match_sprt,
          empty="Not an SPRT, or no game pair finished yet."),
    Chart("match-elo", "Elo with its 95% interval over games", ("dashboard_match_games",),
          match_elo, empty="No Elo yet: undefined while one side has scored every point."),
    Chart("match-pentanomial", "Pentanomial counts", ("dashboard_match",
                                                      "dashboard_match_games"),
          match_pentanomial),
    Chart("match-crosstable", "Crosstable (points/games)", ("dashboard_crosstable",),
          match_crosstable),
    Chart("rating-pool", "Ratings with 95% intervals", ("dashboard_latest_ratings",),
          lambda data, options: rating_pool(data["dashboard_latest_ratings"])),
    Chart("ladder-pool", "Stockfish ladder: each version's latest rating",
          ("dashboard_ladder_pool",), lambda data, options: rating_pool(
              data["dashboard_ladder_pool"])),
)
BY_NAME = {chart.name: chart for chart in CHARTS}

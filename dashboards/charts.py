"""The dashboard's charts: each a small Vega-Lite spec (built with Altair) next to the named
queries it reads. The browser renders a spec with vega-embed (``dashboards.server``), the
static report renders the same spec to SVG with vl-convert (``dashboards.report``).

A chart's ``build`` gets the rows of its queries (by query name) and the page's options
(``log``: a log-scale loss axis; ``smooth``: a smoothing weight; ``x``: the x axis, see
``dashboards.curves``) and returns the chart, or None when there is nothing to draw. Every
line chart zooms and pans (mouse wheel and drag; a double-click resets it).
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

from dashboards.curves import (
    ELO_FORMAT,
    LOSS_FORMAT,
    MATCH_X,
    SPLITS,
    TRAINING_X,
    XChoice,
    integer_axis,
    line_legend,
    merge_coinciding,
    number_axis,
    smoothed_series,
    smoothing,
    tip,
    with_times,
    x_choice,
    x_encoding,
)
from dashboards.data import Params, Row, Rows, json_object
from dashboards.match import elo_series, sprt_series

Built = alt.TopLevelMixin | None
WIDTH = 560
HEIGHT = 260
ELO_MIN_SPAN = 100.0   # an Elo axis spans at least this many points (one player, no interval)
NO_LADDER = ("No Stockfish-ladder rating yet: chesslab evaluate KIND@N --ladder 1350,1600 "
             "rates a version against Stockfish at those UCI_Elo.")


@dataclass(frozen=True)
class Chart:
    name: str                                   # URL and element id: /chart/<name>
    title: str
    queries: tuple[str, ...]                    # named queries, warehouse/sql/queries
    build: Callable[[Mapping[str, Rows], Params], Built]
    log_option: bool = False                    # the page offers a log-scale loss axis
    smooth_option: bool = False                 # the page offers a smoothing slider
    x_options: tuple[XChoice, ...] = ()         # the x axes the page offers (first: default)
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


def elo_axis(rows: Rows) -> alt.Scale:
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
    return alt.Chart(values(rows)).mark_bar().encode(
        x=alt.X("positions:Q", title="positions", axis=number_axis()),
        y=alt.Y("file:N", sort="-x", title=None),
        tooltip=[tip("file", "file"), tip("positions", "positions", ",")],
    ).properties(width=WIDTH, height=alt.Step(22))


def labels_per_engine(data: Mapping[str, Rows], options: Params) -> Built:
    rows = [{**r, "labels": f"{r['engine_name']} {r['engine_version']} depth {r['depth']}"}
            for r in data["label_coverage"]]
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_bar().encode(
        x=alt.X("positions:Q", title="labelled positions", axis=number_axis()),
        y=alt.Y("labels:N", title=None, sort=None),
        color=alt.Color("depth:O", title="depth", scale=alt.Scale(scheme="viridis")),
        tooltip=[tip("labels", "labels"), tip("positions", "positions", ","),
                 tip("pct_of_positions", "% of positions", ".1f")],
    ).properties(width=WIDTH, height=alt.Step(22))


def coverage_over_time(data: Mapping[str, Rows], options: Params) -> Built:
    """Labelled positions per depth over time; depths labelled from one search (the same
    counts minute by minute) are one line named "5 = 6 = 7"."""
    rows = merge_coinciding(with_times(data["dashboard_coverage_over_time"], "minute"),
                            "depth", lambda r: (r["minute"], r["labelled"]))
    if not rows:
        return None
    return alt.Chart(values(rows)).mark_line(point=True).encode(
        x=alt.X("minute:T", title="time (UTC)", scale=alt.Scale(type="utc")),
        y=alt.Y("labelled:Q", title="labelled positions", axis=number_axis()),
        color=alt.Color("depth:N", title="depth (= : the same counts)", sort=None,
                        legend=line_legend(labelLimit=0)),
        tooltip=[tip("depth", "depth"), tip("minute_text", "minute"),
                 tip("labelled", "labelled positions", ",")],
    ).properties(width=WIDTH, height=HEIGHT).interactive()


def loss_rows(rows: Rows, weight: float) -> Rows:
    """Curve rows folded to one row per (version, split, epoch) with ``loss`` and its
    ``smoothed`` value (the loss itself without smoothing), timestamps readable."""
    folded = [{**r, "split": name, "loss": r[column]} for r in with_times(rows, "recorded_at")
              for column, name in SPLITS.items() if r.get(column) is not None]
    folded.sort(key=lambda r: (r.get("model_id", ""), r["split"], r["epoch"]))
    return smoothed_series(folded, ("model_id", "split"), "loss", weight)


def loss_curves(rows: Rows, options: Params, color: alt.Color | None = None,
                title: str = "loss", height: int = HEIGHT, pick: Any = None,
                zoom: str | None = None) -> alt.LayerChart | alt.FacetChart:
    """Train and validation loss per epoch (or step, or wall time): with a ``color`` per
    version, train solid and validation dashed; without, a colour per split. With
    smoothing, the raw curves faded under the smoothed ones (as TensorBoard draws them).
    Zoom and pan with the mouse wheel and drag; a double-click resets."""
    weight = smoothing(options)
    folded = loss_rows(rows, weight)
    base = alt.Chart(values(folded))
    if pick is not None:
        base = base.transform_filter(pick)
    x = x_encoding(x_choice(options, TRAINING_X))
    scale = loss_scale(options)
    lines: dict[str, Any] = {"color": alt.Color("split:N", title="split",
                                                sort=list(SPLITS.values()),
                                                legend=line_legend())}
    if color is not None:
        lines = {"color": color, "strokeDash": alt.StrokeDash(
            "split:N", title="split", sort=list(SPLITS.values()), legend=line_legend())}
    tooltip = [*([tip("model_id", "model")] if any("model_id" in r for r in folded) else []),
               tip("split", "split"), tip("epoch", "epoch", ",d"), tip("step", "step", ","),
               tip("recorded_at_text", "at"), tip("loss", "loss", LOSS_FORMAT)]
    if weight:
        tooltip.append(tip("smoothed", f"smoothed ({weight:g})", LOSS_FORMAT))
    raw = base.mark_line(point=not weight, opacity=0.3 if weight else 1.0).encode(
        x=x, y=alt.Y("loss:Q", title=title, scale=scale, axis=number_axis()),
        tooltip=tooltip, **lines)
    layers = [raw]
    if weight:
        layers.append(base.mark_line(point=True).encode(
            x=x, y=alt.Y("smoothed:Q", title=title, scale=scale, axis=number_axis()),
            tooltip=tooltip, **lines))
    return alt.layer(*layers).properties(width=WIDTH, height=height).interactive(name=zoom)


def training(data: Mapping[str, Rows], options: Params) -> Built:
    """Every model version as a dot (click one: the loss curves and the ladder follow), loss
    curves with one y axis per kind (each zooms on its own), and the ladder rating of each
    version."""
    models = data["dashboard_models"]
    if not models:
        return None
    pick = alt.selection_point(name="model", fields=["model_id"], empty=True)
    dots = alt.Chart(values(models), title="model versions (click to select)").mark_point(
        filled=True, size=140).encode(
        x=alt.X("version:O", title="version", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("kind:N", title=None),
        color=alt.Color("status:N", title="status"),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.25)),
        tooltip=[tip("model_id", "model"), tip("name", "name"), tip("status", "status"),
                 tip("epochs", "epochs", ",d"), tip("val_loss", "validation loss", LOSS_FORMAT)],
    ).add_params(pick).properties(width=WIDTH)
    charts: list[Any] = [dots]
    curves = data["dashboard_training_curves"]
    for kind in sorted({r["kind"] for r in curves}):
        charts.append(loss_curves(
            [r for r in curves if r["kind"] == kind], options,
            alt.Color("model_id:N", title="model", legend=line_legend()),
            f"{kind} loss", 180, pick, zoom=f"zoom_{kind}"))
    ladder = with_interval(with_times(data["dashboard_ladder_history"], "recorded_at"),
                           "ladder_elo")
    if ladder:
        charts.append(ladder_chart(ladder, pick))
    return alt.vconcat(*charts).resolve_scale(color="independent",
                                              strokeDash="independent")


def ladder_chart(rows: Rows, pick: Any = None) -> alt.LayerChart:
    base = alt.Chart(values(rows), title="Stockfish-ladder rating per model version")
    if pick is not None:
        base = base.transform_filter(pick)
    x = alt.X("model_id:N", title="model version", sort=None, axis=alt.Axis(labelAngle=0))
    scale = elo_axis(rows)
    bars = base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="ladder Elo"),
                                   y2="high:Q")
    dots = base.mark_point(filled=True, size=80).encode(
        x=x, y=alt.Y("ladder_elo:Q", scale=scale, title="ladder Elo"),
        color=alt.Color("kind:N", title="kind"), tooltip=elo_tips("ladder_elo", "ladder Elo"))
    return (bars + dots).properties(width=WIDTH, height=HEIGHT)


def elo_tips(field: str = "elo", title: str = "Elo") -> list[alt.Tooltip]:
    return [tip("model_id", "model"), tip(field, title, ".1f"), tip("low", "95% low", ".1f"),
            tip("high", "95% high", ".1f"), tip("recorded_at_text", "evaluated at")]


def elo_by_data(data: Mapping[str, Rows], options: Params) -> Built:
    """Elo against training positions: one point per evaluated version with its 95% interval,
    a line per architecture, baseline and search limit (a curve at 5,000 nodes is not mixed
    with a match at 10+0.1), the baseline's level at 0; positions on a log axis
    (each doubling of the data is one step)."""
    rows = [{**r, "low": r["elo_lower"] if r["elo_lower"] is not None else r["elo"],
             "high": r["elo_upper"] if r["elo_upper"] is not None else r["elo"],
             "series": f"{r['arch']} vs {r['against']} at {r['limits']}"}
            for r in with_times(data["dashboard_elo_by_data"], "recorded_at")
            if r["train_rows"]]
    if not rows:
        return None
    base = alt.Chart(values(rows))
    x = alt.X("train_rows:Q", title="training positions", scale=alt.Scale(type="log"),
              axis=number_axis())
    scale = elo_scale(rows)
    series = alt.Color("series:N", title="net vs baseline", legend=line_legend(labelLimit=0))
    bars = base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="Elo"), y2="high:Q",
                                   color=series)
    line = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=70)).encode(
        x=x, y=alt.Y("elo:Q", scale=scale, title="Elo"), color=series,
        tooltip=[*elo_tips(), tip("limits", "search limit"),
                 tip("train_rows", "training positions", ","),
                 tip("games", "games", ",d")])
    level = alt.Chart(values([{"elo": 0.0}])).mark_rule(strokeDash=[4, 4], color="#555").encode(
        y=alt.Y("elo:Q", scale=scale, title="Elo"))
    return alt.layer(line, bars, level).properties(width=WIDTH, height=HEIGHT).interactive()


def elo_scale(rows: Rows) -> alt.Scale:
    """An Elo axis over the intervals and 0 (the baseline's level), 5% margin each side so an
    interval's end stays visible."""
    low, high = padded_domain([min(0.0, *(r["low"] for r in rows))],
                              [max(0.0, *(r["high"] for r in rows))])
    margin = round((high - low) * 0.05, 1)
    return alt.Scale(domain=[low - margin, high + margin], zero=False)


def net_strength(data: Mapping[str, Rows], options: Params) -> Built:
    """A net's strength over its versions: each evaluated version's match Elo against each
    baseline with its 95% interval (a line per kind, baseline and search limit), the SPRT's verdict as the
    point's shape, promoted versions ringed."""
    rows = [{**r, "low": r["elo_lower"] if r["elo_lower"] is not None else r["elo"],
             "high": r["elo_upper"] if r["elo_upper"] is not None else r["elo"],
             "series": f"{r['kind']} vs {r['against']} at {r['limits']}",
             "verdict": r["sprt"] or "no SPRT"}
            for r in with_times(data["dashboard_net_strength"], "recorded_at")
            if r["elo"] is not None]
    if not rows:
        return None
    base = alt.Chart(values(rows))
    x = alt.X("version:Q", title="version", axis=integer_axis(),
              scale=alt.Scale(zero=False, padding=20))
    scale = elo_scale(rows)
    series = alt.Color("series:N", title="net vs baseline", legend=line_legend(labelLimit=0))
    bars = base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="Elo"), y2="high:Q",
                                   color=series)
    line = base.mark_line().encode(x=x, y=alt.Y("elo:Q", scale=scale, title="Elo"),
                                   color=series)
    dots = base.mark_point(filled=True, size=90).encode(
        x=x, y=alt.Y("elo:Q", scale=scale, title="Elo"), color=series,
        shape=alt.Shape("verdict:N", title="SPRT verdict"),
        tooltip=[*elo_tips(), tip("name", "name"), tip("limits", "search limit"),
                 tip("verdict", "SPRT"),
                 tip("games", "games", ",d"), tip("ladder_elo", "ladder Elo", ".1f"),
                 tip("promoted", "promoted")])
    level = alt.Chart(values([{"elo": 0.0}])).mark_rule(strokeDash=[4, 4], color="#555").encode(
        y=alt.Y("elo:Q", scale=scale, title="Elo"))
    layers = [line, bars, dots, level]
    promoted = [r for r in rows if r["promoted"]]
    if promoted:
        layers.append(alt.Chart(values(promoted)).mark_point(size=260, color="#222").encode(
            x=x, y=alt.Y("elo:Q", scale=scale, title="Elo")))
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT).interactive()


# --------------------------------------------------------------------------------------------
# A model version
# --------------------------------------------------------------------------------------------

def model_losses(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_model_curves"]
    if not rows:
        return None
    return loss_curves(rows, options)


def epoch_metrics(rows: Rows) -> Rows:
    """One row per epoch and metric: learning rate, speed and the kind's numeric extras."""
    found: Rows = []
    for r in rows:
        metrics = {"learning_rate": r["learning_rate"], "positions_per_s": r["positions_per_s"],
                   **json_object(r["extra"])}
        found += [{"epoch": r["epoch"], "step": r["step"], "recorded_at": r["recorded_at"],
                   "metric": k, "value": v} for k, v in metrics.items()
                  if isinstance(v, int | float) and not isinstance(v, bool)
                  and math.isfinite(v)]
    return found


def model_metrics(data: Mapping[str, Rows], options: Params) -> Built:
    """One small chart per metric (each its own axis, each zooming on its own), two a row."""
    weight = smoothing(options)
    rows = smoothed_series(with_times(epoch_metrics(data["dashboard_model_curves"]),
                                      "recorded_at"), ("metric",), "value", weight)
    if not rows:
        return None
    x = x_encoding(x_choice(options, TRAINING_X))
    panels = []
    for number, metric in enumerate(dict.fromkeys(r["metric"] for r in rows)):
        base = alt.Chart(values([r for r in rows if r["metric"] == metric]), title=metric)
        tooltip = [tip("epoch", "epoch", ",d"), tip("step", "step", ","),
                   tip("recorded_at_text", "at"), tip("value", metric, ",.4~r")]
        layers = [base.mark_line(point=not weight, opacity=0.3 if weight else 1.0).encode(
            x=x, y=alt.Y("value:Q", title=None, axis=number_axis()), tooltip=tooltip)]
        if weight:
            layers.append(base.mark_line(point=True).encode(
                x=x, y=alt.Y("smoothed:Q", title=None, axis=number_axis()),
                tooltip=[*tooltip, tip("smoothed", f"smoothed ({weight:g})", ",.4~r")]))
        panels.append(alt.layer(*layers).properties(width=250, height=150).interactive(
            name=f"zoom_{number}"))
    return alt.concat(*panels, columns=2)


def model_ladder(data: Mapping[str, Rows], options: Params) -> Built:
    """The version's ladder rating at each evaluation (an evaluation a column, its time as
    a person reads it)."""
    rows = with_interval(with_times(data["dashboard_ladder_history"], "recorded_at"),
                         "ladder_elo")
    if not rows:
        return None
    scale = elo_axis(rows)
    base = alt.Chart(values(rows))
    x = alt.X("recorded_at_text:N", title="evaluated at", sort=None,
              axis=alt.Axis(labelAngle=0, labelLimit=0))
    return (base.mark_rule().encode(x=x, y=alt.Y("low:Q", scale=scale, title="ladder Elo"),
                                    y2="high:Q")
            + base.mark_point(filled=True, size=80).encode(
                x=x, y=alt.Y("ladder_elo:Q", scale=scale, title="ladder Elo"),
                tooltip=elo_tips("ladder_elo", "ladder Elo"))).properties(
        width=WIDTH, height=HEIGHT)


def volatility_roc(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_volatility_roc"]
    if not rows:
        return None
    chance = alt.Chart(values([{"fpr": 0.0, "tpr": 0.0}, {"fpr": 1.0, "tpr": 1.0}])).mark_line(
        color="#999", strokeDash=[4, 4]).encode(
        x=alt.X("fpr:Q", title="false positive rate"), y=alt.Y("tpr:Q", title="true positive rate"))
    roc = alt.Chart(values(rows)).mark_line(point=True).encode(
        x=alt.X("fpr:Q", title="false positive rate", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("tpr:Q", title="true positive rate", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model_id:N", title="model", legend=line_legend()), order="point:Q",
        tooltip=[tip("model_id", "model"), tip("fpr", "false positive rate", ".3f"),
                 tip("tpr", "true positive rate", ".3f"),
                 tip("threshold", "threshold", ".3f")])
    return alt.layer(roc, chance).properties(width=360, height=360).interactive()


def volatility_gains(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_volatility_gains"]
    if not rows:
        return None
    return alt.Chart(values(rows)).transform_fold(
        ["stable_found", "random", "perfect"], as_=["curve", "share"]).mark_line(
        point=True).encode(
        x=alt.X("percent:Q", title="% of positions examined"),
        y=alt.Y("share:Q", title="share of stable positions found",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("curve:N", title=None, legend=line_legend()),
        detail="model_id:N",
        tooltip=[tip("model_id", "model"), tip("curve", "curve"),
                 tip("percent", "% examined", ".0f"), tip("share", "share found", ".3f")],
    ).properties(width=360, height=360).interactive()


def lmr_heatmap(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_lmr_heatmap"]
    if not rows:
        return None
    base = alt.Chart(values(rows)).encode(
        x=alt.X("move_no:O", title="move number (30: 30 and later)"),
        y=alt.Y("depth:O", title="depth", sort="descending"))
    cells = base.mark_rect().encode(
        color=alt.Color("reduction:Q", title="mean safe reduction (plies)",
                        scale=alt.Scale(scheme="viridis")),
        tooltip=[tip("depth", "depth"), tip("move_no", "move number"),
                 tip("reduction", "mean safe reduction", ".2f")])
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
    x = alt.X("round:Q", title="self-play round (checkpoint)", axis=integer_axis())
    lines = alt.Chart(values(marked)).transform_fold(
        ["decisive_share", "decisive_target_share"], as_=["share of", "share"]).mark_line(
        point=True).encode(
        x=x,
        y=alt.Y("share:Q", title="share of positions with |v| > 0.5",
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("share of:N", title=None, legend=line_legend()),
        tooltip=[tip("model_id", "model"), tip("share of", "curve"),
                 tip("share", "share", ".3f")])
    this = alt.Chart(values([r for r in marked if r["this"]])).mark_rule(
        strokeDash=[2, 2], color="#555").encode(x=x)
    return alt.layer(lines, this).properties(width=WIDTH, height=HEIGHT).interactive()


# --------------------------------------------------------------------------------------------
# Compare runs
# --------------------------------------------------------------------------------------------

def compare_curves(data: Mapping[str, Rows], options: Params) -> Built:
    rows = data["dashboard_compare_curves"]
    if not rows:
        return None
    return loss_curves(rows, options, alt.Color("model_id:N", title="model",
                                                legend=line_legend()), height=320)


# --------------------------------------------------------------------------------------------
# A match
# --------------------------------------------------------------------------------------------

def match_row(data: Mapping[str, Rows]) -> Row | None:
    found = data["dashboard_match"]
    return found[0] if found else None


def match_sprt(data: Mapping[str, Rows], options: Params) -> Built:
    """The LLR after each game pair against the SPRT's bounds; x in games or wall time."""
    match = match_row(data)
    points = sprt_series(match, data["dashboard_match_games"]) if match else []
    if not points:
        return None
    choice = x_choice(options, MATCH_X)
    lower, upper = points[0]["lower_bound"], points[0]["upper_bound"]
    if not choice.temporal:                           # every test starts at 0
        points = [{"games": 0, "pairs": 0, "llr": 0.0, "finished_at": None}, *points]
    scale = alt.Scale(domain=padded_domain([lower, *(p["llr"] for p in points)],
                                           [upper, *(p["llr"] for p in points)], 1.0))
    y = alt.Y("llr:Q", title="LLR", scale=scale)
    bounds = alt.Chart(values([{"bound": "H0 (lower)", "llr": lower},
                               {"bound": "H1 (upper)", "llr": upper}])).mark_rule(
        strokeDash=[6, 3]).encode(y=y, color=alt.Color(
            "bound:N", title="bound", scale=alt.Scale(range=["#c0392b", "#27ae60"]),
            legend=line_legend()))
    line = alt.Chart(values(with_times(points, "finished_at"))).mark_line(
        point=True, color="#2c3e50").encode(
        x=x_encoding(choice), y=y,
        tooltip=[tip("games", "games", ",d"), tip("pairs", "pairs", ",d"),
                 tip("llr", "LLR", ".3f"), tip("finished_at_text", "at")])
    return alt.layer(line, bounds).properties(width=WIDTH, height=HEIGHT).interactive()


def match_elo(data: Mapping[str, Rows], options: Params) -> Built:
    """The first player's Elo and its 95% interval after each game; x in games or wall
    time."""
    points = with_times(elo_series(data["dashboard_match_games"]), "finished_at")
    finite = [p for p in points if p["elo"] is not None]
    if not finite:
        return None
    title = f"Elo of {finite[0]['player']} (95% interval)"
    x = x_encoding(x_choice(options, MATCH_X))
    base = alt.Chart(values(finite))
    band = base.transform_filter("datum.lower != null && datum.upper != null").mark_area(
        opacity=0.25).encode(x=x, y=alt.Y("lower:Q", title=title), y2="upper:Q")
    line = base.mark_line(point=True).encode(
        x=x, y=alt.Y("elo:Q", title=title),
        tooltip=[tip("games", "games", ",d"), tip("wins", "wins", ",d"),
                 tip("draws", "draws", ",d"), tip("losses", "losses", ",d"),
                 tip("elo", "Elo", ELO_FORMAT), tip("lower", "95% low", ELO_FORMAT),
                 tip("upper", "95% high", ELO_FORMAT), tip("los", "LOS", ".1%"),
                 tip("finished_at_text", "at")])
    zero = alt.Chart(values([{"elo": 0.0}])).mark_rule(color="#999").encode(
        y=alt.Y("elo:Q", title=title))
    return alt.layer(line, band, zero).properties(width=WIDTH, height=HEIGHT).interactive()


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
    return alt.Chart(values(rows), title=f"game pairs of {last['player']}").mark_bar().encode(
        x=alt.X("pair:N", sort=cells, title="pair result (first player's view)",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("pairs:Q", title="pairs", axis=integer_axis()),
        tooltip=[tip("pair", "pair result"), tip("pairs", "pairs", ",d")],
    ).properties(width=360, height=HEIGHT)


def match_crosstable(data: Mapping[str, Rows], options: Params) -> Built:
    """Points per player (rows, named in full) against each opponent (columns, by the
    opponent's row number, as printed crosstables do: long engine specs stay readable)."""
    found = data["dashboard_crosstable"]
    if not found:
        return None
    number = {p: i for i, p in enumerate(sorted({r["player"] for r in found}
                                                | {r["opponent"] for r in found}), 1)}
    rows = [{**r, "score": r["points"] / r["games"], "text": f"{r['points']:g}/{r['games']}",
             "row": f"{number[r['player']]}. {r['player']}",
             "column": str(number[r["opponent"]])} for r in found]
    order = [str(n) for n in number.values()]
    base = alt.Chart(values(rows)).encode(
        x=alt.X("column:O", title="opponent (row number)", sort=order,
                axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("row:N", title=None, sort=[f"{n}. {p}" for p, n in number.items()],
                axis=alt.Axis(labelLimit=0)))
    cells = base.mark_rect().encode(
        color=alt.Color("score:Q", title="score share", scale=alt.Scale(
            domain=[0, 0.5, 1], range=["#c0392b", "#f7f7f7", "#27ae60"])),
        tooltip=[tip("player", "player"), tip("opponent", "opponent"), tip("text", "points"),
                 tip("score", "score", ".1%")])
    text = base.mark_text().encode(text="text:N")
    return (cells + text).properties(width=alt.Step(70), height=alt.Step(36))


# --------------------------------------------------------------------------------------------
# Ratings
# --------------------------------------------------------------------------------------------

def rating_pool(rows: Rows) -> Built:
    rows = with_interval(rows)
    if not rows:
        return None
    scale = elo_axis(rows)
    base = alt.Chart(values(rows))
    y = alt.Y("player:N", sort=None, title=None, axis=alt.Axis(labelLimit=0))
    title = "Elo (95%)"
    return (base.mark_rule().encode(y=y, x=alt.X("low:Q", scale=scale, title=title),
                                    x2="high:Q")
            + base.mark_point(filled=True, size=80).encode(
                y=y, x=alt.X("elo:Q", scale=scale, title=title),
                tooltip=[tip("player", "player"), tip("elo", "Elo", ".1f"),
                         tip("low", "95% low", ".1f"), tip("high", "95% high", ".1f"),
                         tip("games", "games", ",d")])).properties(width=WIDTH,
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
          training, log_option=True, smooth_option=True, x_options=TRAINING_X,
          note="Click a version to show only its curves and ratings; click empty space to "
               "show all."),
    Chart("net-strength", "Strength over versions (each evaluated version)",
          ("dashboard_net_strength",), net_strength,
          note="Each version's latest match Elo against each baseline, with the 95% interval; "
               "the shape is the SPRT's verdict, a ring marks a promoted version.",
          empty="No evaluated version yet: chesslab evaluate KIND@N plays one."),
    Chart("elo-by-data", "Elo against training positions (each evaluated version)",
          ("dashboard_elo_by_data",), elo_by_data,
          note="Each version's latest match against its baseline, with the 95% interval; "
               "0 is the baseline's level. Train with --train-percent for a curve in one "
               "home.",
          empty="No evaluated version with a recorded data set yet."),
    Chart("model-losses", "Loss per epoch: train against validation",
          ("dashboard_model_curves",), model_losses, log_option=True, smooth_option=True,
          x_options=TRAINING_X),
    Chart("model-metrics", "Learning rate, speed and the kind's metrics per epoch",
          ("dashboard_model_curves",), model_metrics, smooth_option=True,
          x_options=TRAINING_X),
    Chart("model-ladder", "Stockfish-ladder rating at each evaluation",
          ("dashboard_ladder_history",), model_ladder, empty=NO_LADDER),
    Chart("volatility-roc", "ROC curve (positive: stable)", ("dashboard_volatility_roc",),
          volatility_roc),
    Chart("volatility-gains", "Cumulative gains", ("dashboard_volatility_gains",),
          volatility_gains),
    Chart("lmr-heatmap", "Mean safe reduction by depth and move number",
          ("dashboard_lmr_heatmap",), lmr_heatmap),
    Chart("decisive-share", "Decisive share against its target per checkpoint",
          ("dashboard_policy_value_checkpoints",), decisive_share),
    Chart("compare-curves", "Loss curves", ("dashboard_compare_curves",), compare_curves,
          log_option=True, smooth_option=True, x_options=TRAINING_X),
    Chart("match-sprt", "LLR against games, with the SPRT's bounds",
          ("dashboard_match", "dashboard_match_games"), match_sprt, x_options=MATCH_X,
          empty="Not an SPRT, or no game pair finished yet."),
    Chart("match-elo", "Elo with its 95% interval over games", ("dashboard_match_games",),
          match_elo, x_options=MATCH_X,
          empty="No Elo yet: undefined while one side has scored every point."),
    Chart("match-pentanomial", "Pentanomial counts", ("dashboard_match",
                                                      "dashboard_match_games"),
          match_pentanomial),
    Chart("match-crosstable", "Crosstable (points/games)", ("dashboard_crosstable",),
          match_crosstable),
    Chart("rating-pool", "Ratings with 95% intervals", ("dashboard_latest_ratings",),
          lambda data, options: rating_pool(data["dashboard_latest_ratings"])),
    Chart("ladder-pool", "Stockfish ladder: each version's latest rating",
          ("dashboard_ladder_pool",), lambda data, options: rating_pool(
              data["dashboard_ladder_pool"]), empty=NO_LADDER),
)
BY_NAME = {chart.name: chart for chart in CHARTS}

"""What the dashboard's line charts share, as TensorBoard and W&B offer it: smoothing (the
debiased exponential moving average TensorBoard draws over the faded raw curve), the x axis
(epoch, optimiser step or wall time of a training run; games or wall time of a match), axes
that read as numbers do (whole-number ticks for counts, ``1,000`` rather than ``1e+3``),
rounded tooltips, legends whose symbols are the marks' lines, and series that coincide
drawn as one line named after all of them.

The page's controls send ``smooth`` (0 to 0.99) and ``x`` (a choice's name) with a chart's
request; a chart reads them here.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

from dashboards.data import DashboardError, Params, Rows, human_time

SMOOTH_MAX = 0.99
LOSS_FORMAT = ".3~r"          # a loss in a tooltip: 0.0209, not 0.0208845460353
NUMBER_FORMAT = ",~r"         # an axis or a tooltip number: 1,000 and 0.0005, no exponent
ELO_FORMAT = "+.1f"
SPLITS = {"train_loss": "train", "val_loss": "validation"}


# --------------------------------------------------------------------------------------------
# Smoothing
# --------------------------------------------------------------------------------------------

def smoothing(options: Params) -> float:
    """The page's smoothing weight, 0 (none) to 0.99; DashboardError names a bad one."""
    text = options.get("smooth")
    if text in (None, ""):
        return 0.0
    try:
        weight = float(text)
    except ValueError:
        raise DashboardError(f"smooth: a number from 0 to {SMOOTH_MAX} is needed, got "
                             f"{text!r}") from None
    if not 0 <= weight <= SMOOTH_MAX:
        raise DashboardError(f"smooth: must be from 0 to {SMOOTH_MAX}, got {text!r}")
    return weight


def ema(values: Sequence[float | None], weight: float) -> list[float | None]:
    """TensorBoard's smoothing: an exponential moving average debiased by the weight of the
    values seen (its first value is the first raw value); gaps stay gaps.

    >>> ema([1.0, 0.0, 0.0], 0.5)
    [1.0, 0.3333333333333333, 0.14285714285714285]
    >>> ema([2.0, None, 2.0], 0.9)
    [2.0, None, 2.0]
    """
    last, seen, smoothed = 0.0, 0, list[float | None]()
    for value in values:
        if value is None or not math.isfinite(value):
            smoothed.append(value)
            continue
        last, seen = last * weight + (1 - weight) * value, seen + 1
        smoothed.append(last / (1 - weight ** seen))
    return smoothed


def smoothed_series(rows: Rows, series: Sequence[str], value: str, weight: float) -> Rows:
    """``rows`` (in x order) with ``smoothed``: ``value``'s moving average within each
    series (rows alike in the ``series`` fields); the value itself when ``weight`` is 0."""
    groups: dict[tuple[Any, ...], Rows] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(f) for f in series), []).append(row)
    out: Rows = []
    for group in groups.values():
        out += [{**r, "smoothed": s} for r, s in
                zip(group, ema([r[value] for r in group], weight), strict=True)]
    return out


# --------------------------------------------------------------------------------------------
# The x axis
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class XChoice:
    """One x axis a chart offers: its name (the ``x`` option), its row field and title."""

    name: str
    label: str                   # the option's text on the page
    field: str
    title: str
    temporal: bool = False


TRAINING_X = (XChoice("epoch", "epoch", "epoch", "epoch"),
              XChoice("step", "step", "step", "optimiser step"),
              XChoice("time", "wall time", "recorded_at", "wall time (UTC)", temporal=True))
MATCH_X = (XChoice("games", "games", "games", "games"),
           XChoice("time", "wall time", "finished_at", "wall time (UTC)", temporal=True))


def x_choice(options: Params, choices: Sequence[XChoice]) -> XChoice:
    """The x axis the page asked for (the first choice by default)."""
    name = options.get("x") or choices[0].name
    for choice in choices:
        if choice.name == name:
            return choice
    raise DashboardError(f"x: must be one of {', '.join(c.name for c in choices)}, got "
                         f"{name!r}")


def x_encoding(choice: XChoice) -> alt.X:
    if choice.temporal:
        return alt.X(f"{choice.field}:T", title=choice.title,
                     scale=alt.Scale(type="utc"), axis=time_of_day_axis())
    return alt.X(f"{choice.field}:Q", title=choice.title, axis=integer_axis(),
                 scale=alt.Scale(zero=False, nice=False))


# --------------------------------------------------------------------------------------------
# Axes, tooltips, legends
# --------------------------------------------------------------------------------------------

def integer_axis(**kwargs: Any) -> alt.Axis:
    """An axis of counts (epochs, games, versions, pairs): ticks, grid lines and labels at
    whole numbers only, thousands separated (Vega-Lite's ``tickMinStep`` is ignored,
    vega-lite#9034, and drew epoch 1.5)."""
    between = "datum.value % 1 !== 0"
    hidden = {"condition": {"test": between, "value": 0}, "value": 1}
    return alt.Axis(labelExpr=f"{between} ? '' : format(datum.value, ',')",
                    tickOpacity=hidden, gridOpacity=hidden, **kwargs)


def time_of_day_axis(**kwargs: Any) -> alt.Axis:
    """A wall-time axis read as times of day in UTC, whatever the points' spacing:
    ``10:16:55`` at whole seconds, ``10:16:55.650`` between them (a run's epochs a fraction
    of a second apart). Vega-Lite 6 drops an axis ``format`` whose ``formatType`` is
    ``"utc"`` (the ticks then read d3's multi-format: ``.340``, ``:05``, ``11 AM``), so the
    label is ``utcFormat`` in ``labelExpr``."""
    label = "utcFormat(datum.value, datum.value % 1000 ? '%H:%M:%S.%L' : '%H:%M:%S')"
    return alt.Axis(labelExpr=label, **kwargs)


def number_axis(**kwargs: Any) -> alt.Axis:
    """A measured value's axis: ``1,000`` and ``0.0005``, never ``1e+3``."""
    return alt.Axis(format=NUMBER_FORMAT, **kwargs)


def line_legend(**kwargs: Any) -> alt.Legend:
    """A legend of lines drawn as lines (a dashed series shows its dash), not as dots."""
    return alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5, symbolSize=400, **kwargs)


def with_times(rows: Rows, *fields: str) -> Rows:
    """Rows with ``<field>_text``: each timestamp as a person reads it (for tooltips)."""
    return [{**r, **{f"{f}_text": human_time(r[f]) if r.get(f) else "" for f in fields}}
            for r in rows]


def tip(field: str, title: str, fmt: str | None = None) -> alt.Tooltip:
    """A tooltip line: quantitative with ``fmt``, else the field as text."""
    if fmt is None:
        return alt.Tooltip(f"{field}:N", title=title)
    return alt.Tooltip(f"{field}:Q", title=title, format=fmt)


# --------------------------------------------------------------------------------------------
# Series that coincide
# --------------------------------------------------------------------------------------------

def merge_coinciding(rows: Rows, series: str, key: Callable[[Mapping[str, Any]], Any],
                     joiner: str = " = ") -> Rows:
    """Rows of series that draw the same line (equal ``key`` row by row) merged into one
    series named after all of them ("5 = 6 = 7"): a line drawn exactly over another would
    hide it, and a legend would name a series nobody can see.

    >>> rows = [{"d": d, "x": x, "y": x} for d in (5, 6) for x in (1, 2)]
    >>> merge_coinciding(rows + [{"d": 7, "x": 1, "y": 0}], "d", lambda r: (r["x"], r["y"]))
    [{'d': '5 = 6', 'x': 1, 'y': 1}, {'d': '5 = 6', 'x': 2, 'y': 2}, {'d': '7', 'x': 1, 'y': 0}]
    """
    lines: dict[Any, list[Mapping[str, Any]]] = {}
    for row in rows:
        lines.setdefault(row[series], []).append(row)
    shapes: dict[tuple[Any, ...], list[Any]] = {}
    for name, line in lines.items():
        shapes.setdefault(tuple(key(r) for r in line), []).append(name)
    merged: Rows = []
    for names in shapes.values():
        label = joiner.join(str(n) for n in names)
        merged += [{**r, series: label} for r in lines[names[0]]]
    return merged

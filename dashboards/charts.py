"""Charts as inline SVG, drawn on the server from query rows: no script and no network, so
the same markup serves the live dashboard and the static report, offline.

Every mark carries its value in a ``data-value`` attribute and a ``<title>`` (the tooltip),
so a reader (and the browser test) can find the figures the chart was drawn from.
"""
from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Callable, Sequence
from typing import Any

WIDTH = 640
HEIGHT = 260
MARGIN = (40, 20, 30, 56)             # top, right, bottom, left
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf")
Point = tuple[float, float]
CHAR_W = 6.5                          # a generous width of one character at font-size 11
LONGEST_LABEL = 72                    # longer labels keep their end (the title has them whole)


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def number(value: float) -> str:
    """A figure as shown: integers plainly, others with 4 significant digits.

    >>> number(41.0), number(0.123456), number(1234.5)
    ('41', '0.1235', '1234')
    """
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"


def time_text(seconds: float, span_s: float = 0.0) -> str:
    """A time (POSIX seconds) as a time axis shows it, in UTC: to the minute, or the date
    alone when the axis spans days.

    >>> time_text(1772366400.0), time_text(1772366400.0, span_s=5 * 86400)
    ('2026-03-01 12:00', '2026-03-01')
    """
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.strftime("%Y-%m-%d" if span_s >= 2 * 86400 else "%Y-%m-%d %H:%M")


def label_column(labels: Sequence[str]) -> tuple[list[str], int]:
    """The labels as shown (the end of an overlong one) and the width their column needs.

    >>> label_column(["a", "abcd"])
    (['a', 'abcd'], 38)
    """
    shown = [text if len(text) <= LONGEST_LABEL else "…" + text[1 - LONGEST_LABEL:]
             for text in labels]
    return shown, int(max(len(text) for text in shown) * CHAR_W) + 12


def svg(body: str, width: int = WIDTH, height: int = HEIGHT, kind: str = "chart") -> str:
    return (f"<svg class='chart' data-chart='{kind}' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' font-family='sans-serif' font-size='11' "
            f"role='img'>{body}</svg>")


def span(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if low == high:
        low, high = low - 1, high + 1
    return low, high


def scale(value: float, low: float, high: float, start: float, end: float) -> float:
    return start + (value - low) / (high - low) * (end - start)


def axes(x_range: tuple[float, float], y_range: tuple[float, float], x_label: str,
         y_label: str, width: int = WIDTH, height: int = HEIGHT,
         x_text: Callable[[float], str] = number, x_middle: bool = False) -> str:
    """Both axes with their end ticks (and a middle one on the x axis) and labels."""
    top, right, bottom, left = MARGIN
    x0, x1, y0, y1 = left, width - right, height - bottom, top
    middle = (x_range[0] + x_range[1]) / 2
    ticks = [f"<text x='{x0}' y='{y0 + 14}'>{esc(x_text(x_range[0]))}</text>",
             f"<text x='{x1}' y='{y0 + 14}' text-anchor='end'>{esc(x_text(x_range[1]))}</text>",
             *([f"<text x='{(x0 + x1) / 2}' y='{y0 + 14}' text-anchor='middle'>"
                f"{esc(x_text(middle))}</text>"] if x_middle else []),
             f"<text x='{x0 - 4}' y='{y0}' text-anchor='end'>{number(y_range[0])}</text>",
             f"<text x='{x0 - 4}' y='{y1 + 8}' text-anchor='end'>{number(y_range[1])}</text>"]
    return (f"<line x1='{x0}' y1='{y0}' x2='{x1}' y2='{y0}' stroke='#333'/>"
            f"<line x1='{x0}' y1='{y0}' x2='{x0}' y2='{y1}' stroke='#333'/>{''.join(ticks)}"
            f"<text x='{(x0 + x1) / 2}' y='{height - 4}' text-anchor='middle'>{esc(x_label)}"
            f"</text><text x='12' y='{(y0 + y1) / 2}' transform='rotate(-90 12 "
            f"{(y0 + y1) / 2})' text-anchor='middle'>{esc(y_label)}</text>")


def legend(names: Sequence[str]) -> str:
    items = []
    for i, name in enumerate(names):
        x = MARGIN[3] + (i % 4) * 140
        y = 12 + (i // 4) * 13
        items.append(f"<rect x='{x}' y='{y - 8}' width='10' height='3' "
                     f"fill='{PALETTE[i % len(PALETTE)]}'/><text x='{x + 14}' y='{y}'>"
                     f"{esc(name)[:22]}</text>")
    return "".join(items)


def line_chart(series: dict[str, list[Point]], x_label: str, y_label: str,
               y_range: tuple[float, float] | None = None, x_time: bool = False) -> str:
    """One polyline (and a dot per point) per named series; with ``x_time`` the x values
    are times (POSIX seconds) shown as UTC dates, and when there is only one time, each
    series' value at it is a bar (dots on a line of no length say little)."""
    points = [p for values in series.values() for p in values
              if all(math.isfinite(v) for v in p)]
    if not points:
        return "<p class='empty'>No rows yet.</p>"
    if x_time and len({p[0] for p in points}) == 1:
        return (f"<p class='note'>{esc(y_label)} at {time_text(points[0][0])} UTC, the only "
                f"time so far:</p>" + bar_chart(
                    [{"series": name, "value": values[-1][1]}
                     for name, values in series.items() if values], "series", "value"))
    xs, ys = span([p[0] for p in points]), y_range or span([p[1] for p in points])

    def x_text(x: float) -> str:
        return time_text(x, xs[1] - xs[0]) if x_time else number(x)
    top, right, bottom, left = MARGIN
    marks = []
    for i, (name, values) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        drawn = [(scale(x, *xs, left, WIDTH - right), scale(y, *ys, HEIGHT - bottom, top), x, y)
                 for x, y in values if math.isfinite(x) and math.isfinite(y)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in drawn)
        marks.append(f"<polyline data-series='{esc(name)}' points='{path}' fill='none' "
                     f"stroke='{colour}' stroke-width='1.5'/>")
        marks += [f"<circle cx='{px:.1f}' cy='{py:.1f}' r='2.5' fill='{colour}' "
                  f"data-series='{esc(name)}' data-x='{esc(x_text(x))}' "
                  f"data-value='{number(y)}'><title>{esc(name)}: {esc(x_text(x))}, "
                  f"{number(y)}</title></circle>"
                  for px, py, x, y in drawn]
    return svg(axes(xs, ys, x_label, y_label, x_text=x_text, x_middle=x_time)
               + "".join(marks) + legend(list(series)), kind="line")


def bar_chart(rows: Sequence[dict[str, Any]], label: str, value: str, unit: str = "") -> str:
    """Horizontal bars, one per row, labelled with ``label`` and the value."""
    rows = [r for r in rows if r[value] is not None]
    if not rows:
        return "<p class='empty'>No rows yet.</p>"
    high = max(float(r[value]) for r in rows) or 1.0
    shown, label_width = label_column([str(r[label]) for r in rows])
    bar, chart_width = 18, max(WIDTH, label_width + 360)
    marks = []
    for i, r in enumerate(rows):
        y = 6 + i * (bar + 4)
        width = float(r[value]) / high * (chart_width - label_width - 80)
        marks.append(
            f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end'>"
            f"{esc(shown[i])}</text><rect x='{label_width}' y='{y}' "
            f"width='{max(width, 1):.1f}' height='{bar}' fill='{PALETTE[0]}' "
            f"data-label='{esc(r[label])}' data-value='{number(float(r[value]))}'><title>"
            f"{esc(r[label])}: {number(float(r[value]))}{unit}</title></rect>"
            f"<text x='{label_width + width + 4:.1f}' y='{y + 13}'>"
            f"{number(float(r[value]))}{unit}</text>")
    return svg("".join(marks), width=chart_width, height=12 + len(rows) * (bar + 4),
               kind="bar")


def interval_chart(rows: Sequence[dict[str, Any]], label: str, value: str, plus: str,
                   minus: str) -> str:
    """A dot per row at ``value`` with a line over its interval (ratings, Elo)."""
    rows = [r for r in rows if r[value] is not None]
    if not rows:
        return "<p class='empty'>No rows yet.</p>"
    low = min(r[value] - (r[minus] or 0) for r in rows)
    high = max(r[value] + (r[plus] or 0) for r in rows)
    low, high = span([low, high])
    shown, label_width = label_column([str(r[label]) for r in rows])
    row, width = 20, max(WIDTH, label_width + 360)
    marks = []
    for i, r in enumerate(rows):
        y = 14 + i * row

        def x(elo: float) -> float:
            return scale(elo, low, high, label_width, width - 40)

        marks.append(
            f"<text x='{label_width - 8}' y='{y + 4}' text-anchor='end'>"
            f"{esc(shown[i])}</text>"
            f"<line x1='{x(r[value] - (r[minus] or 0)):.1f}' y1='{y}' "
            f"x2='{x(r[value] + (r[plus] or 0)):.1f}' y2='{y}' stroke='#555'/>"
            f"<circle cx='{x(r[value]):.1f}' cy='{y}' r='4' fill='{PALETTE[0]}' "
            f"data-label='{esc(r[label])}' data-value='{number(r[value])}'><title>"
            f"{esc(r[label])}: {number(r[value])} +{number(r[plus] or 0)} "
            f"-{number(r[minus] or 0)}</title></circle>"
            f"<text x='{width - 36}' y='{y + 4}'>{number(r[value])}</text>")
    return svg("".join(marks), width=width, height=20 + len(rows) * row, kind="interval")


def heatmap(cells: Sequence[tuple[float, float, float]], x_label: str, y_label: str) -> str:
    """Cells (x, y, value) on a grid, darker for larger values."""
    if not cells:
        return "<p class='empty'>No rows yet.</p>"
    xs = sorted({c[0] for c in cells})
    ys = sorted({c[1] for c in cells})
    low, high = span([c[2] for c in cells])
    top, right, bottom, left = MARGIN
    cw = (WIDTH - left - right) / len(xs)
    ch = (HEIGHT - top - bottom) / len(ys)
    marks = []
    for x, y, value in cells:
        shade = scale(value, low, high, 0.1, 1.0)
        px, py = left + xs.index(x) * cw, HEIGHT - bottom - (ys.index(y) + 1) * ch
        marks.append(f"<rect x='{px:.1f}' y='{py:.1f}' width='{cw:.1f}' height='{ch:.1f}' "
                     f"fill='{PALETTE[0]}' fill-opacity='{shade:.2f}' data-x='{number(x)}' "
                     f"data-y='{number(y)}' data-value='{number(value)}'><title>"
                     f"{esc(x_label)} {number(x)}, {esc(y_label)} {number(y)}: "
                     f"{number(value)}</title></rect>")
    return svg(axes((xs[0], xs[-1]), (ys[0], ys[-1]), x_label, y_label) + "".join(marks),
               kind="heatmap")


def sprt_chart(rows: Sequence[dict[str, Any]], label: str) -> str:
    """Each SPRT run's LLR as a bar from 0, with its lower and upper bounds as ticks."""
    if not rows:
        return "<p class='empty'>No rows yet.</p>"
    low, high = span([v for r in rows for v in (r["llr"], r["lower_bound"],
                                                 r["upper_bound"], 0.0)])
    shown, label_width = label_column([str(r[label]) for r in rows])
    row, width = 22, max(WIDTH, label_width + 360)

    def x(value: float) -> float:
        return scale(value, low, high, label_width, width - 60)

    marks = []
    for i, r in enumerate(rows):
        y = 8 + i * row
        start, end = sorted((x(0.0), x(r["llr"])))
        marks.append(
            f"<text x='{label_width - 8}' y='{y + 12}' text-anchor='end'>"
            f"{esc(shown[i])}</text>"
            f"<rect x='{start:.1f}' y='{y}' width='{max(end - start, 1):.1f}' height='16' "
            f"fill='{PALETTE[2] if r['decision'] == 'H1' else PALETTE[1]}' "
            f"data-label='{esc(r[label])}' data-value='{number(r['llr'])}'><title>LLR "
            f"{number(r['llr'])} in [{number(r['lower_bound'])}, "
            f"{number(r['upper_bound'])}]: {esc(r['decision'])}</title></rect>"
            + "".join(f"<line x1='{x(b):.1f}' x2='{x(b):.1f}' y1='{y - 2}' y2='{y + 18}' "
                      f"stroke='#000' stroke-dasharray='2,2'/>"
                      for b in (r["lower_bound"], r["upper_bound"]))
            + f"<text x='{width - 56}' y='{y + 12}'>{number(r['llr'])} "
              f"{esc(r['decision'])}</text>")
    return svg("".join(marks), width=width, height=16 + len(rows) * row, kind="sprt")


def crosstable(rows: Sequence[dict[str, Any]]) -> str:
    """Points against each opponent as an HTML grid per tournament."""
    if not rows:
        return "<p class='empty'>No rows yet.</p>"
    parts = []
    for tournament in dict.fromkeys(r["tournament_id"] for r in rows):
        own = [r for r in rows if r["tournament_id"] == tournament]
        players = sorted({r["player"] for r in own} | {r["opponent"] for r in own})
        cell = {(r["player"], r["opponent"]): r for r in own}
        head = "".join(f"<th>{esc(p)}</th>" for p in players)
        body = "".join(
            f"<tr><th>{esc(p)}</th>" + "".join(
                f"<td data-value='{number(cell[p, o]['points'])}'>"
                f"{number(cell[p, o]['points'])}/{cell[p, o]['games']}</td>"
                if (p, o) in cell else "<td></td>" for o in players) + "</tr>"
            for p in players)
        parts.append(f"<h4>{esc(tournament)}</h4><div class='scroll'><table class='crosstable'>"
                     f"<thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
                     f"</div>")
    return "".join(parts)

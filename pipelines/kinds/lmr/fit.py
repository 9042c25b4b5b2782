"""``chesslab train lmr``: paper 003's late-move-reduction regression (Table 6.1) with
scikit-learn, registered as a model version like the Lightning kinds (same folders, models,
model_datasets, model_metrics and model_events tables), then deployed: the chosen formula is
scaled until the engine's bench counts the default formula's nodes (Figure 6.1's method).

Every formula is fitted through the origin (``LinearRegression(fit_intercept=False)``: the
paper's table has no constant term and negative R^2, which only a fit without intercept scored
against the mean can give). Terms: log d and log m of the node's depth and move number,
|alpha - S| (alpha and the node's static evaluation, cp) and md (the non-pawn material
difference |white - black|, cp).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LinearRegression

from engines.alphabeta.bench import BenchConfig, run_bench
from engines.alphabeta.formula import LmrFormula
from pipelines.lmr.config import (
    PAPER_SCALE,
    PAPER_TABLE_6_1,
    SWEEP,
    LmrConfig,
    LmrTrainError,
    formula_name,
)
from pipelines.models import registry  # its clock, read when stamping (tests patch it)
from pipelines.models.registry import (
    ModelVersion,
    record_event,
    record_model,
    resolve_model,
)
from pipelines.train.trainer import Run, open_run, sha256
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

log = logging.getLogger(__name__)

KIND = "lmr"   # the kind this fit trains (pipelines/kinds/lmr/kind.py)
ARTIFACT = "lmr.json"   # its "formula" is what the lmr kind deploys (pipelines/kinds/lmr)

__all__ = ["INTERCEPTS", "PAPER_SCALE", "PAPER_TABLE_6_1", "SWEEP", "Fit", "LmrConfig",
           "LmrTrainError", "Normalisation", "fit_table", "format_table", "normalise", "train_lmr"]


@dataclass(frozen=True)
class Fit:
    """One formula fitted: its coefficients and in-sample R^2, next to the paper's."""

    terms: tuple[str, ...]
    coefficients: tuple[float, ...]
    r2: float
    paper_coefficients: tuple[float, ...]
    paper_r2: float

    @property
    def formula(self) -> str:
        return formula_name(self.terms)


@dataclass(frozen=True)
class Normalisation:
    """Figure 6.1: the scale (and, when no scale alone gets close, the intercept) whose bench
    node count is nearest the default formula's."""

    scale: float
    nodes: int
    default_nodes: int
    curve: tuple[tuple[float, int], ...]    # every (scale, nodes) benched, in order
    intercept: float = 0.0
    intercepts: tuple[tuple[float, int], ...] = ()   # every (intercept, nodes) at ``scale``

    @property
    def ratio(self) -> float:
        return self.nodes / self.default_nodes

    def apply(self, formula: LmrFormula) -> LmrFormula:
        """The deployed formula: ``formula`` scaled, then shifted by the intercept."""
        return formula.scaled(self.scale).shifted(self.intercept)


# --------------------------------------------------------------------------------------------
# Data and fits
# --------------------------------------------------------------------------------------------

def load_examples(lake: Lake, config: LmrConfig) -> list[dict[str, Any]]:
    rows = query(connect(lake), named_query("lmr_dataset"),
                 {"data_run": config.data_run}).to_pylist()
    if len(rows) < config.min_rows:
        where = f"lmr-data run {config.data_run!r}" if config.data_run else "lmr_examples"
        raise LmrTrainError(f"train lmr: {len(rows)} usable examples in {where}, need "
                            f"{config.min_rows} (run chesslab lmr-data first)")
    return rows


def term_columns(rows: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Every regression term, one value per example."""
    depth = np.log(np.array([r["depth"] for r in rows], dtype=np.float64))
    move = np.log(np.array([r["move_no"] for r in rows], dtype=np.float64))
    alpha = np.array([r["alpha"] for r in rows], dtype=np.float64)
    static = np.array([r["stat_eval"] for r in rows], dtype=np.float64)
    white = np.array([r["np_material_w"] for r in rows], dtype=np.float64)
    black = np.array([r["np_material_b"] for r in rows], dtype=np.float64)
    return {"logd*logm": depth * move, "logd": depth, "logm": move,
            "|alpha-S|": np.abs(alpha - static), "md": np.abs(white - black)}


def fit_formula(columns: dict[str, np.ndarray], target: np.ndarray,
                terms: Sequence[str]) -> tuple[tuple[float, ...], float]:
    """Least squares through the origin; R^2 as sklearn scores it (against the mean)."""
    features = np.column_stack([columns[t] for t in terms])
    model = LinearRegression(fit_intercept=False).fit(features, target)
    return tuple(float(c) for c in model.coef_), float(model.score(features, target))


def fit_table(rows: Sequence[dict[str, Any]], label: str) -> list[Fit]:
    """Every Table 6.1 formula fitted to the examples' ``label_<label>``."""
    columns = term_columns(rows)
    target = np.array([r[f"label_{label}"] for r in rows], dtype=np.float64)
    fits = []
    for terms, paper_coefficients, paper_r2 in PAPER_TABLE_6_1:
        coefficients, r2 = fit_formula(columns, target, terms)
        fits.append(Fit(terms, coefficients, r2, paper_coefficients, paper_r2))
    return fits


def at_max_share(rows: Sequence[dict[str, Any]]) -> float:
    """The share of examples whose re-search never failed high (Table 5.1's label is then
    full depth - 1, the largest reduction; the code rule gives that one step earlier too);
    where it is near 1 the R^2 column measures how well each formula fits log-shaped terms
    to depth - 1, not what makes a reduction safe."""
    return float(np.mean([r["label_table"] == r["depth_full"] - 1 for r in rows]))


def fit_rows(model: str, fits: Sequence[Fit], label: str, rows: int) -> list[dict[str, Any]]:
    """The ``lmr_fits`` rows."""
    fitted_at = registry.now()
    return [{"model_id": model, "formula": f.formula, "terms": list(f.terms),
             "coefficients": list(f.coefficients), "r2": f.r2,
             "paper_coefficients": list(f.paper_coefficients), "paper_r2": f.paper_r2,
             "label": label, "rows": rows, "fitted_at": fitted_at} for f in fits]


def format_table(fits: Sequence[Fit]) -> str:
    """The fitted table side by side with Table 6.1."""
    def coefs(values: Sequence[float]) -> str:
        return ", ".join(f"{v:.4g}" for v in values)
    width = max(len(f.formula) for f in fits)
    lines = [f"{'formula':<{width}}  {'R2':>8} {'paper':>8}  coefficients | paper's"]
    lines += [f"{f.formula:<{width}}  {f.r2:8.4f} {f.paper_r2:8.4f}  {coefs(f.coefficients)} | "
              f"{coefs(f.paper_coefficients)}" for f in fits]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Deployment: the bench normalisation of Figure 6.1
# --------------------------------------------------------------------------------------------

def deployed_formula(fits: Sequence[Fit], name: str) -> LmrFormula:
    fit = next(f for f in fits if f.formula == name)
    return LmrFormula.of(dict(zip(fit.terms, fit.coefficients, strict=True)))


#: Intercepts the normalisation tries after the scale search, nearest zero first: twenty
#: steps of 0.05 reach +-0.5, where every reduction has moved by at most one ply.
INTERCEPTS = tuple(round(sign * 0.05 * k, 2) for k in range(1, 11) for sign in (1, -1))

#: Node depths a bench of depth D reaches (check extensions add a ply now and then).
EXTENSION_MARGIN = 2


def distinct_scales(formula: LmrFormula, low: float, high: float, max_depth: int) -> list[float]:
    """One scale per distinct reduction table (over depths <= max_depth) from low to high,
    both included: the midpoints between the scales where a table entry changes."""
    steps: set[float] = set()
    for depth in range(1, min(max_depth, 63) + 1):
        for move in range(1, 64):
            value = formula.value(depth, move)
            if value > 0:
                steps.update(k / value for k in range(math.ceil(low * value),
                                                      math.floor(high * value) + 1)
                             if low < k / value < high)
    edges = [low, *sorted(steps), high]
    return [low, *((a + b) / 2 for a, b in zip(edges[1:-2], edges[2:-1], strict=True)), high]


def normalise(formula: LmrFormula, bench: BenchConfig, tolerance: float, max_steps: int,
              intercept_steps: int = 0) -> Normalisation:
    """The scale whose ``formula.scaled(scale)`` bench count is within ``tolerance`` of the
    default formula's (see :data:`SWEEP`); the nearest scale benched when none is found.

    The count is a step function of the scale, and one table cell at small d and m can move
    it by 10-20% (a bench of 24 positions at depth 8 jumped from +17.5% to -1.35% where
    cell (5, 5) went from 1 to 2). When no scale gets within the tolerance, up to
    ``intercept_steps`` benches try Listing A.4's intercept at the nearest scale
    (:data:`INTERCEPTS`, nearest zero first), which moves every threshold by the same amount
    instead of in proportion; the nearest of all the points benched wins."""
    target = run_bench(bench).nodes
    curve: dict[float, int] = {}

    def nodes(scale: float) -> int:
        if scale not in curve:
            curve[scale] = run_bench(bench, formula.scaled(scale)).nodes
        return curve[scale]

    def nearest(points: dict[float, int]) -> tuple[float, int]:
        return min(points.items(), key=lambda point: abs(point[1] - target))

    def close_enough(points: dict[float, int]) -> bool:
        return abs(nearest(points)[1] / target - 1) <= tolerance

    low = 0.0
    for high in SWEEP:
        if nodes(high) <= target:
            break
        low = high
    if 0 < low < high and not close_enough(curve):
        scales = distinct_scales(formula, low, high, bench.depth + EXTENSION_MARGIN)
        below, above = 0, len(scales) - 1
        while above - below > 1 and len(curve) < max_steps and not close_enough(curve):
            middle = (below + above) // 2
            below, above = (middle, above) if nodes(scales[middle]) > target else (below, middle)
        for offset in range(1, len(scales)):
            for index in (below - offset, above + offset):
                if len(curve) < max_steps and not close_enough(curve) and 0 <= index < len(scales):
                    nodes(scales[index])
    scale, found = nearest(curve)
    shifts: dict[float, int] = {0.0: found}
    for intercept in INTERCEPTS[:intercept_steps]:
        if close_enough(shifts):
            break
        shifts[intercept] = run_bench(bench, formula.scaled(scale).shifted(intercept)).nodes
    intercept, found = nearest(shifts)
    return Normalisation(scale, found, target, tuple(curve.items()), intercept,
                         tuple((i, n) for i, n in shifts.items() if i))


# --------------------------------------------------------------------------------------------
# The model version
# --------------------------------------------------------------------------------------------

def dataset_record(rows: Sequence[dict[str, Any]], config: LmrConfig) -> dict[str, Any]:
    keys = sorted(f"{r['run_id']}:{r['seq']}" for r in rows)
    engines = sorted({r["label_engine"] for r in rows})
    return {"view": "lmr_examples", "query": "lmr_dataset",
            "parameters": json.dumps({"data_run": config.data_run, "label": config.label}),
            "label_engine_id": ";".join(engines),
            "label_depths": sorted({int(r["depth_full"]) for r in rows}),
            "table_versions": "{}", "train_rows": len(rows), "validation_rows": 0,
            "position_keys_hash": hashlib.sha256("\n".join(keys).encode()).hexdigest()}


def metrics_row(model: str, fits: Sequence[Fit], rows: int, seconds: float) -> dict[str, Any]:
    """One ``model_metrics`` row (epoch 0): every formula's R^2 in ``extra``; train_loss is
    the unexplained share (1 - R^2) of the best formula."""
    best = max(fits, key=lambda f: f.r2)
    return {"model_id": model, "epoch": 0, "step": 0, "train_loss": 1.0 - best.r2,
            "val_loss": None, "positions_per_s": rows / max(seconds, 1e-9),
            "learning_rate": 0.0, "extra": json.dumps({f.formula: f.r2 for f in fits}),
            "recorded_at": registry.now()}


def engine_spec(model: str, formula: LmrFormula, config: LmrConfig) -> str:
    """The spec that plays the model (``lmr=`` last: a ``,`` after ``@N`` reads as a ladder),
    with the formula it deploys (which the resolver gives again from the artifact)."""
    return f"alphabeta:eval={config.eval},lmr_formula={formula},lmr={model}"


def export(run: Run, fits: Sequence[Fit], formula: LmrFormula, normal: Normalisation,
           config: LmrConfig) -> Path:
    path = run.folder / ARTIFACT
    path.write_text(json.dumps({
        "model_id": run.model_id, "label": config.label, "deploy": config.deploy,
        "fitted": str(formula), "scale": normal.scale, "intercept": normal.intercept,
        "formula": str(normal.apply(formula)),
        "fits": [dataclasses.asdict(f) for f in fits]}, indent=2) + "\n")
    return path


def train_lmr(lake: Lake, config: LmrConfig,
              progress: Callable[[str], None] | None = None) -> tuple[ModelVersion, list[Fit]]:
    """Fit, record, normalise and register ``lmr@N`` (a killed run resumes its version)."""
    say = progress or log.info
    run = open_run(lake, KIND, config)  # type: ignore[arg-type]
    rows = load_examples(lake, config)
    if not run.resumed:
        lake.write("model_datasets", [{"model_id": run.model_id,
                                       **dataset_record(rows, config), "recorded_at": registry.now()}])
        record_event(lake, run.model_id, "started", {"folder": str(run.folder)})
    started = time.perf_counter()
    fits = fit_table(rows, config.label)
    lake.write("lmr_fits", fit_rows(run.model_id, fits, config.label, len(rows)))
    lake.write("model_metrics", [metrics_row(run.model_id, fits, len(rows),
                                             time.perf_counter() - started)])
    at_max = at_max_share(rows)
    record_event(lake, run.model_id, "trained", {"rows": len(rows), "label": config.label,
                                                 "at_max_share": at_max})
    say(f"{run.model_id}: {len(rows)} examples, label {config.label}, {at_max:.1%} of them "
        f"full depth - 1 (the largest reduction: then the label is a function of the depth "
        f"alone)\n{format_table(fits)}")
    formula = deployed_formula(fits, config.deploy)
    normal = normalise(formula, config.bench_config(), config.tolerance, config.max_steps,
                       config.intercept_steps)
    say(f"{run.model_id}: scale {normal.scale:.5f} (paper {PAPER_SCALE}), intercept "
        f"{normal.intercept:+.2f}: bench "
        f"{normal.nodes} nodes vs default {normal.default_nodes} ({normal.ratio:.4f})"
        + ("" if abs(normal.ratio - 1) <= 0.01 else " -- NOT within 1%: no scale or intercept "
           "tried reaches the default's count on this bench"))
    return register(lake, run, config, fits, formula, normal), fits


def register(lake: Lake, run: Run, config: LmrConfig, fits: Sequence[Fit],
             formula: LmrFormula, normal: Normalisation) -> ModelVersion:
    """Export, models row (last but the events: a version without it is unfinished), events."""
    path = export(run, fits, formula, normal, config)
    digest = sha256(path)
    scaled = normal.apply(formula)
    spec = engine_spec(run.model_id, scaled, config)
    record_model(lake, KIND, run.version, config.name or KIND,
                 json.dumps({**json.loads(config.to_json()), "engine_spec": spec}), path, digest)
    record_event(lake, run.model_id, "exported", {"path": str(path), "sha256": digest})
    bench = config.bench_config()
    record_event(lake, run.model_id, "deployed", {
        "scale": normal.scale, "intercept": normal.intercept, "formula": str(scaled),
        "engine_spec": spec,
        "bench_nodes": normal.nodes, "default_bench_nodes": normal.default_nodes,
        "ratio": normal.ratio, "within_1_percent": abs(normal.ratio - 1) <= 0.01,
        "bench": dataclasses.asdict(bench), "curve": [list(p) for p in normal.curve],
        "intercepts": [list(p) for p in normal.intercepts],
        "paper_scale": PAPER_SCALE})
    return resolve_model(lake, run.model_id)


def describe_fit(lake: Lake, model: ModelVersion) -> str:
    """What ``chesslab train lmr`` prints about the version: the R^2 of the deployed formula
    and the train loss (1 - R^2 of the best formula)."""
    con = connect(lake)
    deployed = model.config["deploy"]
    fits = {row["formula"]: row["r2"] for row in query(
        con, named_query("dashboard_lmr_fits"), {"model": model.model_id}).to_pylist()}
    loss = query(con, named_query("train_summary"), {"model": model.model_id}
                 ).to_pylist()[0]["train_loss"]
    return (f"{model.model_id}: R² of the deployed formula {deployed}: {fits[deployed]:.4f}; "
            f"train loss {loss:.4f} (1 - R² of the best formula), no validation loss (the fit "
            f"is in-sample)")

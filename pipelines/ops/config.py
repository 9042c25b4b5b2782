"""The schedules file (``chesslab serve --config schedules.toml``): one typed, validated
dataclass per scheduled job, with documented defaults; every field may be left out.

```toml
[runs]
retries = 2                 # retries of a failed scheduled run, then it is recorded failed
retry_delay_s = 60
timezone = "UTC"            # of the cron expressions

[refresh]
cron = "0 2 * * *"          # nightly: ingest the folders' new files, label what is new
folders = ["incoming"]      # relative to the schedules file's folder
depths = [5, 6, 7]          # any other `chesslab label` option: nodes, workers, ...

[retrain]
cron = "0 4 * * *"
kinds = ["nnue"]            # one deployment per kind: retrain-nnue, ...
min_new_labels = 10000      # labels newer than the latest model's dataset needed to retrain

[evaluate]
interval_s = 600            # how often the registry is polled for new model versions
nodes = 20000               # the default limit when none of tc, nodes, depth is given
ladder = "1800-2600/200"    # any other `chesslab evaluate` option: sprt, against, tc, ...

[evaluate.policy_value]     # options for one model kind's versions, over the ones above
nodes = 128                 # PUCT simulations a move (the default when no limit is given)
```
"""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.evaluate.config import EvaluateConfig
from pipelines.label.config import LabelConfig

RETRAIN_KINDS = ("nnue", "volatility")
LIMITS = ("tc", "nodes", "depth")
DEFAULT_LIMIT = {"nodes": 20_000}     # evaluation games, unless the file gives a limit
#: Per model kind, the limit of its evaluation games unless the file gives one: a PUCT
#: simulation costs a network call, a thousand times an alpha-beta node.
DEFAULT_KIND_LIMITS = {"policy_value": {"nodes": 128}}
MODEL_KINDS = ("nnue", "volatility", "policy_value")


def kind_options(options: dict[str, Any], kind: str) -> dict[str, Any]:
    """The evaluate options for versions of ``kind``: the section's options with the kind's
    own table (``[evaluate.KIND]``) over them.

    >>> kind_options({"nodes": 20000, "policy_value": {"nodes": 64}}, "policy_value")
    {'nodes': 64}
    >>> kind_options({"nodes": 20000, "policy_value": {"nodes": 64}}, "nnue")
    {'nodes': 20000}
    """
    common = {k: v for k, v in options.items() if k not in MODEL_KINDS}
    return {**common, **options.get(kind, {})}


class OpsConfigError(ValueError):
    """A bad schedules file: names the file, the section and the bad key or value."""


def check_cron(cron: str, where: str) -> None:
    """Five fields, as Prefect's cron schedules (and crontab) take them.

    >>> check_cron("0 2 * * *", "refresh")
    >>> check_cron("nightly", "refresh")
    Traceback (most recent call last):
    ...
    pipelines.ops.config.OpsConfigError: refresh.cron: want 5 fields (minute hour day month \
weekday), got 'nightly'
    """
    if len(cron.split()) != 5:
        raise OpsConfigError(f"{where}.cron: want 5 fields (minute hour day month weekday), "
                             f"got {cron!r}")


@dataclass(frozen=True)
class RunPolicy:
    """How every scheduled run is run."""

    retries: int = 2                 # retries of a failed run before it is recorded failed
    retry_delay_s: float = 60.0      # seconds between a failure and its retry
    timezone: str = "UTC"            # time zone of the cron expressions

    def __post_init__(self) -> None:
        if self.retries < 0 or self.retry_delay_s < 0:
            raise OpsConfigError(f"runs: retries and retry_delay_s must be >= 0, got "
                                 f"{self.retries!r} and {self.retry_delay_s!r}")


@dataclass(frozen=True)
class RefreshSchedule:
    """``refresh``: ingest the new files of ``folders``, then label what is new."""

    cron: str = "0 2 * * *"                           # nightly at 02:00
    folders: tuple[str, ...] = ("incoming",)          # watched folders (absolute once loaded)
    label: dict[str, Any] = field(default_factory=lambda: {"depths": [5, 6, 7]})
    enabled: bool = True

    def __post_init__(self) -> None:
        check_cron(self.cron, "refresh")
        if not self.folders:
            raise OpsConfigError("refresh.folders: give at least one folder")
        self.label_config()

    def label_config(self) -> LabelConfig:
        """The label step's config (its options checked as ``chesslab label`` checks them)."""
        return step_config(LabelConfig, self.label, "refresh")


@dataclass(frozen=True)
class RetrainSchedule:
    """``retrain-KIND``: a new version from the latest model's config once enough new labels
    exist."""

    cron: str = "0 4 * * *"                           # nightly at 04:00, after refresh
    kinds: tuple[str, ...] = ("nnue",)
    min_new_labels: int = 10_000
    enabled: bool = True

    def __post_init__(self) -> None:
        check_cron(self.cron, "retrain")
        bad = [k for k in self.kinds if k not in RETRAIN_KINDS]
        if bad:
            raise OpsConfigError(f"retrain.kinds: unknown kind {bad[0]!r} "
                                 f"(one of {', '.join(RETRAIN_KINDS)})")
        if self.min_new_labels < 1:
            raise OpsConfigError(f"retrain.min_new_labels: must be at least 1, got "
                                 f"{self.min_new_labels!r}")


@dataclass(frozen=True)
class EvaluateSchedule:
    """``evaluate``: every model version without an ``evaluated`` event is evaluated against
    ``KIND@best`` (else the configured baseline) and the Stockfish ladder."""

    interval_s: float = 600.0                         # registry polled every 10 minutes
    options: dict[str, Any] = field(default_factory=lambda: {**DEFAULT_LIMIT,
                                                             **DEFAULT_KIND_LIMITS})
    enabled: bool = True

    def __post_init__(self) -> None:
        if self.interval_s < 1:
            raise OpsConfigError(f"evaluate.interval_s: must be at least 1, got "
                                 f"{self.interval_s!r}")
        for kind in MODEL_KINDS:
            if not isinstance(self.options.get(kind, {}), dict):
                raise OpsConfigError(f"evaluate.{kind}: want a table, got "
                                     f"{self.options[kind]!r}")
            self.evaluate_config(f"{kind}@1")

    def evaluate_config(self, model: str, **overrides: Any) -> EvaluateConfig:
        options = kind_options(self.options, model.split("@", 1)[0])
        return step_config(EvaluateConfig, {**options, **overrides, "model": model},
                           "evaluate")


@dataclass(frozen=True)
class Schedules:
    """The whole schedules file."""

    runs: RunPolicy = field(default_factory=RunPolicy)
    refresh: RefreshSchedule = field(default_factory=RefreshSchedule)
    retrain: RetrainSchedule = field(default_factory=RetrainSchedule)
    evaluate: EvaluateSchedule = field(default_factory=EvaluateSchedule)


def step_config(config_cls: type[Any], values: dict[str, Any], section: str) -> Any:
    """``config_cls(**values)`` with lists as tuples; unknown keys and bad values name the
    section."""
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise OpsConfigError(f"{section}: unknown option {unknown[0]!r}")
    try:
        return config_cls(**{k: tuple(v) if isinstance(v, list) else v
                             for k, v in values.items()})
    except (TypeError, ValueError) as exc:
        raise OpsConfigError(f"{section}: {exc}") from None


def split_keys(section: str, values: dict[str, Any], own: set[str]) -> tuple[dict[str, Any],
                                                                            dict[str, Any]]:
    """(the schedule's own keys, the step options) of one section."""
    if not isinstance(values, dict):
        raise OpsConfigError(f"{section}: want a table, got {values!r}")
    return ({k: v for k, v in values.items() if k in own},
            {k: v for k, v in values.items() if k not in own})


def parse_schedules(data: dict[str, Any], base: Path) -> Schedules:
    """The schedules of a parsed TOML document; relative folders are taken from ``base``."""
    unknown = sorted(set(data) - {"runs", "refresh", "retrain", "evaluate"})
    if unknown:
        raise OpsConfigError(f"unknown section [{unknown[0]}] (runs, refresh, retrain, evaluate)")
    try:
        runs = RunPolicy(**data.get("runs", {}))
        own, label = split_keys("refresh", data.get("refresh", {}), {"cron", "folders",
                                                                   "enabled"})
        folders = tuple(str((base / f).resolve()) for f in own.pop("folders", ["incoming"]))
        refresh = RefreshSchedule(folders=folders, label=label or {"depths": [5, 6, 7]}, **own)
        retrain_values = dict(data.get("retrain", {}))
        if "kinds" in retrain_values:
            retrain_values["kinds"] = tuple(retrain_values["kinds"])
        retrain = RetrainSchedule(**retrain_values)
        own, options = split_keys("evaluate", data.get("evaluate", {}), {"interval_s",
                                                                       "enabled"})
        if not any(limit in options for limit in LIMITS):
            options = {**DEFAULT_LIMIT, **options}
            for kind, limit in DEFAULT_KIND_LIMITS.items():
                table = options.get(kind, {})
                if isinstance(table, dict) and not any(k in table for k in LIMITS):
                    options[kind] = {**limit, **table}
        evaluate = EvaluateSchedule(options=options, **own)
    except TypeError as exc:   # an unknown key of a schedule
        raise OpsConfigError(str(exc).replace("__init__()", "schedule")) from None
    return Schedules(runs, refresh, retrain, evaluate)


def load_schedules(path: str | Path | None = None) -> Schedules:
    """The schedules of ``path`` (a TOML file), or the defaults with folders under the current
    directory when ``path`` is None."""
    if path is None:
        return parse_schedules({}, Path.cwd())
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OpsConfigError(f"{file}: cannot read the schedules file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise OpsConfigError(f"{file}: not valid TOML ({exc})") from None
    try:
        return parse_schedules(data, file.resolve().parent)
    except OpsConfigError as exc:
        raise OpsConfigError(f"{file}: {exc}") from None

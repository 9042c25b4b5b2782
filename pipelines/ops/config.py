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
import json
import re
import tomllib
import types
import typing
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.evaluate.config import EvaluateConfig
from pipelines.label.config import LabelConfig
from pipelines.models.kinds import all_kinds, kind_names

LIMITS = ("tc", "nodes", "depth")
DEFAULT_LIMIT = {"nodes": 20_000}     # evaluation games, unless the file gives a limit


def retrain_kinds() -> list[str]:
    """The kinds whose declaration says they are retrained on schedule."""
    return [kind.name for kind in all_kinds() if kind.retrain]


def default_kind_limits() -> dict[str, dict[str, int]]:
    """Per model kind, the limit of its evaluation games unless the file gives one (its
    declaration's: a PUCT simulation costs a network call, a thousand alpha-beta nodes)."""
    return {kind.name: dict(kind.limits) for kind in all_kinds() if kind.limits}


def kind_options(options: dict[str, Any], kind: str) -> dict[str, Any]:
    """The evaluate options for versions of ``kind``: the section's options with the kind's
    own table (``[evaluate.KIND]``) over them.

    >>> kind_options({"nodes": 20000, "policy_value": {"nodes": 64}}, "policy_value")
    {'nodes': 64}
    >>> kind_options({"nodes": 20000, "policy_value": {"nodes": 64}}, "nnue")
    {'nodes': 20000}
    """
    common = {k: v for k, v in options.items() if k not in kind_names()}
    return {**common, **options.get(kind, {})}


class OpsConfigError(ValueError):
    """A bad schedules file: names the file, the section and the bad key or value."""


#: The five cron fields: name, lowest and highest value, names allowed for values.
CRON_FIELDS = (
    ("minute", 0, 59, ()), ("hour", 0, 23, ()), ("day of month", 1, 31, ()),
    ("month", 1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                      "nov", "dec")),
    ("day of week", 0, 7, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")))
CRON_ITEM = re.compile(r"^(?:\*|(?P<low>\w+)(?:-(?P<high>\w+))?)(?:/(?P<step>\d+))?$")
# croniter's extensions Prefect accepts: the last day of the month, the nth weekday, ...
CRON_SPECIAL = {2: re.compile(r"^(?:L|\?)$"), 4: re.compile(r"^(?:\w+(?:#[1-5]|L)|\?)$")}


def check_cron(cron: str, where: str) -> None:
    """Five fields, as Prefect's cron schedules (and crontab) take them; a bad field is named
    with the values it accepts.

    >>> check_cron("0 2 * * *", "refresh")
    >>> check_cron("*/15 9-17 * jan-jun mon-fri", "refresh")
    >>> check_cron("nightly", "refresh")
    Traceback (most recent call last):
    ...
    pipelines.ops.config.OpsConfigError: refresh.cron: want 5 fields (minute hour day month \
weekday), got 'nightly'
    >>> check_cron("61 * * * *", "refresh")
    Traceback (most recent call last):
    ...
    pipelines.ops.config.OpsConfigError: refresh.cron: minute '61' is not in 0-59, in '61 * * * *'
    """
    fields = cron.split()
    if len(fields) != 5:
        raise OpsConfigError(f"{where}.cron: want 5 fields (minute hour day month weekday), "
                             f"got {cron!r}")
    for index, (text, (name, low, high, names)) in enumerate(zip(fields, CRON_FIELDS,
                                                                 strict=True)):
        for item in text.split(","):
            special = CRON_SPECIAL.get(index)
            if special is not None and special.match(item):
                continue
            problem = cron_item_problem(item, low, high, names)
            if problem:
                raise OpsConfigError(f"{where}.cron: {name} {item!r} {problem}, in {cron!r}")


def cron_item_problem(item: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    """Why one comma-separated item of a cron field is bad, or None."""
    match = CRON_ITEM.match(item)
    if not match:
        return "is not *, N, N-M or one of those /STEP"
    allowed = f"{low}-{high}" + (f" or {names[0]}-{names[-1]}" if names else "")
    for part in (match["low"], match["high"]):
        if part is None:
            continue
        value = names.index(part.lower()) + low if part.lower() in names else \
            int(part) if part.isdigit() else None
        if value is None or not low <= value <= high:
            return f"is not in {allowed}"
    if match["step"] is not None and int(match["step"]) == 0:
        return "has a step of 0"
    return None


def check_timezone(name: str) -> None:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise OpsConfigError(f"runs.timezone: unknown time zone {name!r} (an IANA name such "
                             f"as UTC or Europe/Berlin)") from None


# -- value types: a schedules file is checked against the typed fields before they are built -

def type_problem(hint: Any, value: Any, example: Any = None) -> str | None:
    """What ``value`` (parsed TOML) should have been for a field typed ``hint`` (``example``:
    a value of that type to show), or None when it fits. Types this does not know (Any,
    dict) are left to the config's own checks.

    >>> type_problem(tuple[int, ...], "five")
    'a list of integers (such as [5, 6, 7])'
    >>> type_problem(str, 5, example="0 2 * * *")
    'a string (such as "0 2 * * *")'
    >>> type_problem(int | None, 3), type_problem(float, 2)
    (None, None)
    """
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        if value is None and len(args) < len(typing.get_args(hint)):
            return None
        return type_problem(args[0], value, example) if len(args) == 1 else None
    if typing.get_origin(hint) is tuple and args and args[-1] is Ellipsis:
        inner = args[0]
        if isinstance(value, (list, tuple)) and all(type_problem(inner, v) is None
                                                    for v in value):
            return None
        name, shown = LIST_WORDS.get(inner, (getattr(inner, "__name__", str(inner)), "[]"))
        if isinstance(example, (list, tuple)) and example:
            shown = toml_value(list(example))
        return f"a list of {name} (such as {shown})"
    if hint in TYPE_WORDS:
        fits = (isinstance(value, bool) if hint is bool else
                isinstance(value, hint) and not isinstance(value, bool) or
                hint is float and isinstance(value, int) and not isinstance(value, bool))
        if fits:
            return None
        name, shown = TYPE_WORDS[hint]
        if example is not None and type_problem(hint, example) is None:
            shown = toml_value(example)
        return f"{name} (such as {shown})"
    return None


TYPE_WORDS: dict[Any, tuple[str, str]] = {
    int: ("an integer", "5"), float: ("a number", "0.5"), str: ("a string", '"text"'),
    bool: ("true or false", "true")}
LIST_WORDS: dict[Any, tuple[str, str]] = {
    int: ("integers", "[5, 6, 7]"), float: ("numbers", "[0, 2.5]"), str: ("strings", '["a"]')}


def check_types(config_cls: type[Any], values: dict[str, Any], section: str) -> None:
    """OpsConfigError naming ``section.key``, the bad value and the type wanted (with the
    field's default as the example)."""
    hints = typing.get_type_hints(config_cls)
    defaults = {f.name: field_default(f) for f in dataclasses.fields(config_cls)}
    for key, value in values.items():
        if key in hints:
            problem = type_problem(hints[key], value, defaults.get(key))
            if problem:
                raise OpsConfigError(f"{section}.{key}: want {problem}, got {toml_value(value)}")


def field_default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def toml_value(value: Any) -> str:
    """A value as the schedules file writes it (``"five"``, ``[5, "x"]``, ``true``)."""
    return json.dumps(value, default=str)


@dataclass(frozen=True)
class RunPolicy:
    """How every scheduled run is run."""

    retries: int = 2                 # retries of a failed run before it is recorded failed
    retry_delay_s: float = 60.0      # seconds between a failure and its retry
    timezone: str = "UTC"            # time zone of the cron expressions

    def __post_init__(self) -> None:
        check_types(RunPolicy, vars(self), "runs")
        check_timezone(self.timezone)
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
        check_types(RefreshSchedule, vars(self), "refresh")
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
        check_types(RetrainSchedule, vars(self), "retrain")
        check_cron(self.cron, "retrain")
        retrained = retrain_kinds()
        bad = [k for k in self.kinds if k not in retrained]
        if bad:
            raise OpsConfigError(f"retrain.kinds: unknown kind {bad[0]!r} "
                                 f"(the kinds retrained on schedule: {', '.join(retrained)})")
        if self.min_new_labels < 1:
            raise OpsConfigError(f"retrain.min_new_labels: must be at least 1, got "
                                 f"{self.min_new_labels!r}")


@dataclass(frozen=True)
class EvaluateSchedule:
    """``evaluate``: every model version without an ``evaluated`` event is evaluated against
    ``KIND@best`` (else the configured baseline) and the Stockfish ladder."""

    interval_s: float = 600.0                         # registry polled every 10 minutes
    options: dict[str, Any] = field(default_factory=lambda: {**DEFAULT_LIMIT,
                                                             **default_kind_limits()})
    enabled: bool = True

    def __post_init__(self) -> None:
        check_types(EvaluateSchedule, vars(self), "evaluate")
        if self.interval_s < 1:
            raise OpsConfigError(f"evaluate.interval_s: must be at least 1, got "
                                 f"{self.interval_s!r}")
        for kind in kind_names():
            if not isinstance(self.options.get(kind, {}), dict):
                raise OpsConfigError(f"evaluate.{kind}: want a table, got "
                                     f"{toml_value(self.options[kind])}")
            check_types(EvaluateConfig, self.options.get(kind, {}), f"evaluate.{kind}")
            self.evaluate_config(f"{kind}@1")

    def evaluate_config(self, model: str, **overrides: Any) -> EvaluateConfig:
        options = kind_options(self.options, model.split("@", 1)[0])
        return step_config(EvaluateConfig, {**options, **overrides, "model": model},
                           "evaluate")


@dataclass(frozen=True)
class MakeNetSchedule:
    """``make-net``: data, training, evaluation and promotion of an NNUE within a time budget
    (``chesslab make-net``'s options), on a cron or, with none (the default), when triggered
    (``chesslab trigger make-net``)."""

    cron: str = ""                                    # "": on demand only
    options: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True

    def __post_init__(self) -> None:
        check_types(MakeNetSchedule, vars(self), "make-net")
        if self.cron:
            check_cron(self.cron, "make-net")
        self.make_net_config()

    def make_net_config(self, **overrides: Any) -> Any:
        """The run's config (its options checked as ``chesslab make-net`` checks them)."""
        from pipelines.makenet import MakeNetConfig

        return step_config(MakeNetConfig, {**self.options, **overrides}, "make-net")


@dataclass(frozen=True)
class Schedules:
    """The whole schedules file."""

    runs: RunPolicy = field(default_factory=RunPolicy)
    refresh: RefreshSchedule = field(default_factory=RefreshSchedule)
    retrain: RetrainSchedule = field(default_factory=RetrainSchedule)
    evaluate: EvaluateSchedule = field(default_factory=EvaluateSchedule)
    make_net: MakeNetSchedule = field(default_factory=MakeNetSchedule)


def step_config(config_cls: type[Any], values: dict[str, Any], section: str) -> Any:
    """``config_cls(**values)`` with lists as tuples; unknown keys and bad values name the
    section."""
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise OpsConfigError(f"{section}: unknown option {unknown[0]!r}")
    check_types(config_cls, values, section)
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
    unknown = sorted(set(data) - {"runs", "refresh", "retrain", "evaluate", "make-net"})
    if unknown:
        raise OpsConfigError(f"unknown section [{unknown[0]}] (runs, refresh, retrain, "
                             f"evaluate, make-net)")
    try:
        runs = RunPolicy(**data.get("runs", {}))
        own, label = split_keys("refresh", data.get("refresh", {}), {"cron", "folders",
                                                                   "enabled"})
        check_types(RefreshSchedule, own, "refresh")
        folders = tuple(str((base / f).resolve()) for f in own.pop("folders", ["incoming"]))
        refresh = RefreshSchedule(folders=folders, label=label or {"depths": [5, 6, 7]}, **own)
        retrain_values = dict(data.get("retrain", {}))
        check_types(RetrainSchedule, retrain_values, "retrain")
        if "kinds" in retrain_values:
            retrain_values["kinds"] = tuple(retrain_values["kinds"])
        retrain = RetrainSchedule(**retrain_values)
        own, options = split_keys("evaluate", data.get("evaluate", {}), {"interval_s",
                                                                       "enabled"})
        if not any(limit in options for limit in LIMITS):
            options = {**DEFAULT_LIMIT, **options}
            for kind, limit in default_kind_limits().items():
                table = options.get(kind, {})
                if isinstance(table, dict) and not any(k in table for k in LIMITS):
                    options[kind] = {**limit, **table}
        evaluate = EvaluateSchedule(options=options, **own)
        own, options = split_keys("make-net", data.get("make-net", {}), {"cron", "enabled"})
        make_net = MakeNetSchedule(options=options, **own)
    except TypeError as exc:   # an unknown key of a schedule
        raise OpsConfigError(str(exc).replace("__init__()", "schedule")) from None
    return Schedules(runs, refresh, retrain, evaluate, make_net)


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

"""Model kinds: each one declared once, in its own folder, and found on disk.

A kind is a folder ``pipelines/kinds/<name>/`` whose ``kind.py`` defines ``KIND``, a
:class:`ModelKind`: its name, its options (a config dataclass and its presets), how it trains
(a Lightning kind for the generic trainer, or its own fit), how a version deploys into an
engine (:attr:`ModelKind.deploy`: the engine options of a registered version), its evaluation
defaults (the engine that plays a version, the baseline, the limits) and whether it is
retrained on schedule. The train command, the resolver (:mod:`pipelines.models.deploy`), the
evaluate step and the schedules ask this module; none of them lists the kinds, so a new kind
is one new folder (``docs/adding.md``), as a new engine is (:func:`engines.uci.program_names`).

Discovery imports nothing heavy: a ``kind.py`` imports its config class and leaves the
trainer's modules (torch, scikit-learn) to the functions it declares.

>>> sorted(kind_names())
['lmr', 'nnue', 'policy_value', 'volatility']
>>> load_kind("nnue").engine
'alphabeta:eval=nnue,model={model}'
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipelines.models.names import ModelError, ModelVersion

#: The package whose folders are the kinds (found at run time: it stands on this module, not
#: under it), and the module of each folder that defines the kind's ``KIND``.
KINDS_PACKAGE, KIND_MODULE = "pipelines.kinds", "kind"
#: The evaluation baseline of a kind that names none: the alpha-beta engine's HCE.
DEFAULT_BASELINE = "alphabeta:eval=hce"

Progress = Callable[[str], None]
EngineOptions = dict[str, str]


@dataclass(frozen=True)
class ModelKind:
    """One model kind, as its ``pipelines/kinds/<name>/kind.py`` declares it.

    name: the kind's name, the folder's (``nnue``: versions are ``nnue@1``, ...).
    config: the options dataclass of a training run (one ``--option`` each in ``chesslab
        train NAME``; its docstring's first line is the kind's help).
    make_config: ``(preset, given options) -> config``; ``presets`` are the names it takes.
    lightning: for a kind trained by the generic Lightning trainer
        (:func:`pipelines.train.trainer.train_model`), a factory of its data, module and
        export (:class:`pipelines.train.trainer.LightningKind`); else ``fit``:
    fit: ``(lake, config, progress) -> version``: a kind that trains itself (the LMR
        regression with scikit-learn), registering its version as the trainer does.
    in_process: ``chesslab train NAME`` fits it in its own process (seconds), not as the
        ``train`` step on a runner.
    command: whether ``chesslab train NAME`` trains it (``policy_value`` versions come from
        ``chesslab selfplay-train``, one per round).
    deploy: ``version -> engine options`` (program option fields and their values:
        ``{"model": "nnue@3", "nnue": FILE}``): how a version plays in an engine. The
        resolver (:func:`pipelines.models.deploy.engine_options`) checks the version's
        artifact against the registry first. The option that names the version (``model``,
        ``lmr``, ``volatility``) is among them, with the concrete ``KIND@N``.
    engine: the engine spec that plays a version in an evaluation, ``{model}`` standing for
        its id (a version whose config has an ``engine_spec`` plays that instead); None: no
        engine plays the kind's versions unless their config says how.
    baseline: the evaluation's default opponent, ``{model}`` for the version itself (then the
        evaluation measures its search against its bare net, and promotes nothing); None:
        :data:`DEFAULT_BASELINE`.
    limits: the evaluation games' limit when none is given (``{"nodes": 128}``).
    retrain: whether ``chesslab serve`` may retrain it when enough new labels exist.
    describe: ``(lake, version) -> str``: what ``chesslab train`` prints after training.
    panels: the kind's own panels on a version's dashboard page, by name: charts of
        ``dashboards.charts`` and tables of ``dashboards.tables`` whose queries take the
        version as ``$model`` (``("volatility-roc", "volatility-table")``), in that order.
    """

    name: str
    config: type
    make_config: Callable[[str, Mapping[str, Any]], Any]
    presets: tuple[str, ...] = ("tiny", "small", "full")
    lightning: Callable[[], Any] | None = None
    fit: Callable[[Any, Any, Progress], ModelVersion] | None = None
    in_process: bool = False
    command: bool = True
    deploy: Callable[[ModelVersion], EngineOptions] | None = None
    engine: str | None = None
    baseline: str | None = None
    limits: Mapping[str, int] = field(default_factory=dict)
    retrain: bool = False
    describe: Callable[[Any, ModelVersion], str] | None = None
    panels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.lightning is None) == (self.fit is None):
            raise ModelError(f"model kind {self.name!r}: declare exactly one of lightning "
                             f"and fit (how it trains)")

    @property
    def summary(self) -> str:
        """The first line of the config's docstring."""
        return (self.config.__doc__ or self.name).strip().splitlines()[0]

    @property
    def trainer(self) -> str:
        """How it trains: ``lightning`` or ``own fit``."""
        return "lightning" if self.lightning is not None else "own fit"

    @property
    def plays_itself(self) -> bool:
        """Whether its default baseline is the version itself (its search against its net)."""
        return "{model}" in (self.baseline or "")

    def baseline_for(self, model_id: str) -> str:
        """The default opponent of ``model_id`` in an evaluation."""
        return (self.baseline or DEFAULT_BASELINE).format(model=model_id)


def kind_names() -> list[str]:
    """The kinds with a ``kind.py``, found on disk without importing any of them."""
    package = importlib.import_module(KINDS_PACKAGE)
    return sorted({path.parent.name for folder in package.__path__
                   for path in Path(folder).glob(f"*/{KIND_MODULE}.py")})


def load_kind(name: str) -> ModelKind:
    """The ``KIND`` of ``pipelines/kinds/<name>/kind.py``; ModelError listing the kinds."""
    names = kind_names()
    if name not in names:
        raise ModelError(f"unknown model kind {name!r} (kinds: {', '.join(names) or 'none'})")
    module = importlib.import_module(f"{KINDS_PACKAGE}.{name}.{KIND_MODULE}")
    kind = getattr(module, "KIND", None)
    if not isinstance(kind, ModelKind) or kind.name != name:
        raise ModelError(f"pipelines/kinds/{name}/{KIND_MODULE}.py defines no KIND named "
                         f"{name!r}")
    return kind


def all_kinds() -> list[ModelKind]:
    """Every declared kind, by name."""
    return [load_kind(name) for name in kind_names()]


def is_kind(name: str) -> bool:
    return name in kind_names()


def playing_spec(kind: str, model_id: str, config: Mapping[str, Any]) -> str:
    """The engine spec that plays a version (an evaluation's candidate, the dashboard's "plays
    as"): its config's ``engine_spec`` when it names one, else its kind's ``engine``.
    ModelError when neither says.

    >>> playing_spec("nnue", "nnue@3", {})
    'alphabeta:eval=nnue,model=nnue@3'
    >>> playing_spec("nnue", "nnue@4", {"engine_spec": "alphabeta:eval=hce-simple"})
    'alphabeta:eval=hce-simple'
    """
    if config.get("engine_spec"):
        return str(config["engine_spec"])
    engine = load_kind(kind).engine
    if engine is None:
        raise ModelError(f"model {model_id!r}: no engine plays models of kind {kind!r} "
                         f"(its kind declares none, nor does its config)")
    return engine.format(model=model_id)

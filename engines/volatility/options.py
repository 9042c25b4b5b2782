"""The UCI options that switch the volatility early stop on, shared by every program that
offers it (``alphabeta``, ``stockfish-volatility``).

``Volatility`` names the stop rule: empty (off), a net's file, a model version
(``volatility@N``: its file is then ``VolatilityFile``) or ``random:RATE``, the paper's control
player that stops one ply early on a share RATE of the searches. Engines take files, never
model names: ``chesslab engine``, tournaments and evaluations resolve ``volatility@N``,
``volatility@latest`` and ``volatility@best`` through the registry to the version and its file
(:mod:`pipelines.models.deploy`); the identity records the version, not the file.
``VolatilityThreshold`` overrides the model's own threshold (empty: the one chosen at training,
Table 4.1's row at its target FPR).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.identity import MODEL_VERSION
from engines.timeman import IterationPolicy, TimeManagementError
from engines.uci import UciError, UciOption
from engines.volatility.policy import RandomStability, VolatilityPolicy

VOLATILITY, FILE, THRESHOLD = "Volatility", "VolatilityFile", "VolatilityThreshold"
RANDOM_PREFIX = "random:"


def uci_options(volatility: str, threshold: str,
                file: str = "") -> tuple[UciOption, UciOption, UciOption]:
    return (UciOption(VOLATILITY, "string", volatility), UciOption(FILE, "string", file),
            UciOption(THRESHOLD, "string", threshold))


def net_file(volatility: str, file: str) -> str:
    """The file of the net the stop rule names: ``file`` when the rule names a model version,
    else the rule itself (a path). UciError when a version comes without its file."""
    if MODEL_VERSION.match(volatility):
        if not file:
            raise UciError(f"{VOLATILITY} {volatility!r} names a model: give its file with "
                           f"--volatility-file ({FILE}; chesslab engine, tournament and "
                           f"evaluate resolve the model to it)")
        return file
    if file:
        raise UciError(f"{FILE} {file!r} goes with a model version in {VOLATILITY} "
                       f"(volatility@N), not {volatility!r}")
    return volatility


def check_volatility(value: str, file: str = "") -> str:
    """``value`` when it names a stop rule: a valid ``random:RATE``, or a net whose file
    exists (it is loaded when the searcher is built). UciError quoting it otherwise."""
    if value.startswith(RANDOM_PREFIX):
        random_rate(value)
    elif value or file:
        from engines.volatility.model import VolatilityModelError, artifact_path

        try:
            artifact_path(net_file(value, file), value)
        except VolatilityModelError as exc:
            raise UciError(str(exc)) from None
    return value


def random_rate(value: str) -> float:
    text = value[len(RANDOM_PREFIX):]
    try:
        rate = float(text)
    except ValueError:
        raise UciError(f"{VOLATILITY} {value!r}: random:RATE takes a number") from None
    if not 0.0 <= rate <= 1.0:
        raise UciError(f"{VOLATILITY} {value!r}: the rate must be in [0, 1]")
    return rate


def make_policy(values: Mapping[str, Any]) -> IterationPolicy | None:
    """The policy the option values ask for; None when the early stop is off."""
    rule, threshold_text = str(values.get(VOLATILITY) or ""), str(values.get(THRESHOLD) or "")
    if not rule:
        return None
    if rule.startswith(RANDOM_PREFIX):
        return VolatilityPolicy(RandomStability(random_rate(rule)), threshold=0.5)
    from engines.volatility.model import VolatilityModelError, load_model

    try:
        model = load_model(net_file(rule, str(values.get(FILE) or "")), rule)
        threshold = float(threshold_text) if threshold_text else model.threshold
        return VolatilityPolicy(model.stability, threshold)
    except VolatilityModelError as exc:
        raise UciError(str(exc)) from None
    except (ValueError, TimeManagementError):
        raise UciError(f"{THRESHOLD} takes a number in [0, 1], got {threshold_text!r}") from None

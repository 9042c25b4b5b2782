"""One identity for every player: who produced a label, who played a tournament game.

An engine is its name, its version and the options that change how it plays, so the
``engine_id`` hashes exactly those: ``name-version-<8 hex of sha256>``. Options are made
canonical first (names sorted, values as UCI text, ``true``/``false`` for switches, options that
only change what the engine prints left out), so Stockfish labelled with ``Threads=1, Hash=16``
and Stockfish playing a tournament with ``?Threads=1&Hash=16`` are the same engine.

For chesslab's own engines the identity also records the search (the program), the
evaluation and the model version (``KIND@VERSION``), which the options already pin down.

>>> identity = EngineIdentity.from_id_name("Stockfish 15.1", {"Threads": 1, "Hash": "16"})
>>> (identity.name, identity.version, identity.engine_id)
('Stockfish', '15.1', 'stockfish-15.1-563d6074')
>>> EngineIdentity.from_id_name("Stockfish 15.1", {"Hash": 16, "Threads": "1",
...                                               "UCI_ShowWDL": True}).engine_id
'stockfish-15.1-563d6074'
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.stamps import content_id, utc_now

SLUG = re.compile(r"[^a-z0-9.]+")
KINDS = ("own", "external")
#: UCI options that change only what an engine prints, never the move it plays.
DISPLAY_ONLY_OPTIONS = frozenset({"uci_showwdl", "uci_showcurrline", "uci_showrefutations"})
#: A model version as engines load it: ``KIND@VERSION`` (``nnue@3``).
MODEL_VERSION = re.compile(r"^[a-z][a-z0-9_]*@[A-Za-z0-9][A-Za-z0-9._-]*$")

OptionValue = str | int | float | bool


class EngineIdentityError(ValueError):
    """An identity field that cannot be recorded; the message quotes the bad value."""


def option_text(value: OptionValue) -> str:
    """An option value as UCI sends it: ``true``/``false`` for switches.

    >>> option_text(True), option_text(16), option_text("hce")
    ('true', '16', 'hce')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def canonical_options(options: Mapping[str, OptionValue]) -> dict[str, str]:
    """Options sorted by name, as text, without the display-only ones.

    >>> canonical_options({"UCI_ShowWDL": True, "Threads": 1, "Hash": 16})
    {'Hash': '16', 'Threads': '1'}
    """
    return {name: option_text(value) for name, value in sorted(options.items())
            if name.lower() not in DISPLAY_ONLY_OPTIONS}


def check_model_version(model: str) -> str:
    """``model`` when it reads ``KIND@VERSION``; EngineIdentityError quoting it otherwise."""
    if not MODEL_VERSION.match(model):
        raise EngineIdentityError(f"model must read KIND@VERSION (e.g. nnue@3), got {model!r}")
    return model


@dataclass(frozen=True)
class EngineIdentity:
    """A row of the ``engines`` table; ``options`` are made canonical on creation.

    kind: ``own`` (a chesslab program) or ``external``.
    search, evaluation, model: for own engines, the program, its evaluation and the model
        version it loads (``KIND@VERSION``); None otherwise.
    """

    name: str
    version: str
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    kind: str = "external"
    search: str | None = None
    evaluation: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", canonical_options(self.options))
        if self.kind not in KINDS:
            raise EngineIdentityError(
                f"engine {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.model is not None:
            check_model_version(self.model)

    @classmethod
    def from_id_name(cls, id_name: str, options: Mapping[str, OptionValue]) -> EngineIdentity:
        """An external engine from its UCI ``id name`` ("Stockfish 15.1"): the version is the
        last word when that starts with a digit."""
        words = id_name.split()
        if len(words) > 1 and words[-1][:1].isdigit():
            return cls(" ".join(words[:-1]), words[-1], dict(options))
        return cls(id_name.strip() or "unknown", "", dict(options))

    @property
    def options_json(self) -> str:
        return json.dumps(self.options, separators=(",", ":"))

    @property
    def engine_id(self) -> str:
        """``name-version-<8 hex>`` of (name, version, canonical options)."""
        # 8 digits (not content_id's default 16): the engine ids stored in every warehouse
        digest = content_id([self.name, self.version, sorted(self.options.items())], n=8)
        stem = "-".join(SLUG.sub("-", part.lower()).strip("-") for part in
                        (self.name, self.version) if part)
        return f"{stem or 'engine'}-{digest}"

    def row(self) -> dict[str, Any]:
        """The ``engines`` table row."""
        return {"engine_id": self.engine_id, "name": self.name, "version": self.version,
                "options": self.options_json, "kind": self.kind, "search": self.search,
                "evaluation": self.evaluation, "model": self.model,
                "created_at": utc_now()}

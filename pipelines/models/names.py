"""What a model is, without the warehouse: names (``KIND@VERSION``, ``KIND@latest``,
``KIND@best``), a registered version, and the errors that name a model. Importing it is cheap
(the train command's parser and the kinds use it)."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = ("started", "trained", "exported", "deployed", "evaluated", "promoted", "retired")
NAME = re.compile(r"^(?P<kind>[a-z][a-z0-9_]*)@(?P<version>[1-9][0-9]*|latest|best)$")


class ModelError(ValueError):
    """A model name, kind or artifact that cannot be used: one line naming the model."""


class ModelNotFoundError(ModelError, LookupError):
    """A model name does not resolve: quotes the name."""

    def __str__(self) -> str:  # KeyError-style quoting is not wanted for a one-line message
        return str(self.args[0])


class ModelArtifactError(ModelError):
    """A model's artifact is missing or is not the file the registry recorded: names the model,
    the file and both hashes."""


@dataclass(frozen=True)
class ModelVersion:
    """One finished model version of the registry."""

    model_id: str            # KIND@VERSION
    kind: str
    name: str
    version: int
    config: dict[str, Any]
    artifact_path: Path
    artifact_sha256: str
    created_at: dt.datetime
    status: str | None


def model_id(kind: str, version: int) -> str:
    return f"{kind}@{version}"

"""The model registry over the warehouse: versions per kind, events, and the one resolver of
model names (``nnue@3``, ``nnue@latest``, ``nnue@best`` = the latest promoted)."""
from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse import Lake, connect
from warehouse.catalog import named_query, query

EVENTS = ("started", "trained", "exported", "deployed", "evaluated", "promoted", "retired")
NAME = re.compile(r"^(?P<kind>[a-z][a-z0-9_]*)@(?P<version>[1-9][0-9]*|latest|best)$")


class ModelNotFoundError(LookupError):
    """A model name does not resolve: quotes the name."""

    def __str__(self) -> str:  # KeyError-style quoting is not wanted for a one-line message
        return str(self.args[0])


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


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def resolve_model(lake: Lake, name: str) -> ModelVersion:
    """``KIND@VERSION``, ``KIND@latest`` or ``KIND@best`` -> the model version.

    ModelNotFoundError (a LookupError) naming the model when there is no such model.
    """
    match = NAME.match(name.strip())
    if not match:
        raise ModelNotFoundError(
            f"bad model name {name!r}: use KIND@VERSION, KIND@latest or KIND@best (nnue@3)")
    kind, which = match["kind"], match["version"]
    con = connect(lake)
    versions = query(con, named_query("model_versions"), {"kind": kind}).to_pylist()
    if which == "best":
        promoted = [r["model_id"] for r in
                    query(con, named_query("model_promotions"), {"kind": kind}).to_pylist()]
        versions = [v for v in versions if v["model_id"] in promoted[:1]]
    elif which != "latest":
        versions = [v for v in versions if v["version"] == int(which)]
    if not versions:
        known = ", ".join(sorted(v["model_id"] for v in
                                 query(con, named_query("model_versions"), {"kind": kind})
                                 .to_pylist())) or "none"
        raise ModelNotFoundError(f"no model {name!r} (known {kind} models: {known})")
    return as_model_version(versions[0])


def as_model_version(row: dict[str, Any]) -> ModelVersion:
    return ModelVersion(
        model_id=row["model_id"], kind=row["kind"], name=row["name"], version=row["version"],
        config=json.loads(row["config"]), artifact_path=Path(row["artifact_path"]),
        artifact_sha256=row["artifact_sha256"], created_at=row["created_at"],
        status=row["status"])


def record_event(lake: Lake, model: str, event: str, payload: dict[str, Any]) -> None:
    """Append one event of a model's life (the latest one is its status)."""
    if event not in EVENTS:
        raise ValueError(f"model {model}: unknown event {event!r} (one of {', '.join(EVENTS)})")
    lake.write("model_events", [{
        "event_id": uuid.uuid4().hex, "model_id": model, "event": event,
        "payload": json.dumps(payload, sort_keys=True), "recorded_at": now()}])


def record_model(lake: Lake, kind: str, version: int, name: str, config_json: str,
                 artifact: Path, sha256: str) -> None:
    lake.write("models", [{
        "model_id": model_id(kind, version), "kind": kind, "name": name, "version": version,
        "config": config_json, "artifact_path": str(artifact), "artifact_sha256": sha256,
        "created_at": now()}])


def registered_versions(lake: Lake, kind: str) -> set[int]:
    """Versions of ``kind`` with a models row (finished training)."""
    rows = query(connect(lake), named_query("model_versions"), {"kind": kind}).to_pylist()
    return {int(r["version"]) for r in rows}


def list_models(lake: Lake, kind: str | None = None) -> Any:
    """Model versions with status and headline metrics (``chesslab models``), as Arrow."""
    return query(connect(lake), named_query("models_list"), {"kind": kind})

"""The model registry over the warehouse: versions per kind, events, and the one resolver of
model names (``nnue@3``, ``nnue@latest``, ``nnue@best`` = the latest promoted) to versions.
It imports nothing from the training code (``pipelines/train``): every room that turns a name
into a version stands on it, not on the trainers.

Artifacts are recorded relative to the home (``models/nnue/3/nnue.npz``), so a copied home
plays its own files and a moved one keeps its models; rows written before, with absolute
paths, still resolve (to the same file under this home when it has one). Whatever loads an
artifact into an engine goes through :func:`verified_artifact`: the file's sha256 must be the
one recorded at export. New versions are numbered by :func:`allocate_version`, atomically
between trainers on one home.
"""
from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from engines.stamps import file_sha256
from engines.stamps import utc_now as now
from pipelines.models.names import (
    EVENTS,
    NAME,
    ModelArtifactError,
    ModelError,
    ModelNotFoundError,
    ModelVersion,
    model_id,
)
from warehouse import Lake, connect
from warehouse.catalog import named_query, query

__all__ = ["EVENTS", "NAME", "ModelArtifactError", "ModelError", "ModelNotFoundError",
           "ModelVersion", "allocate_version", "claim_version", "list_models", "model_id",
           "record_event", "record_model", "registered_versions", "resolve_model",
           "resolve_verified", "verified_artifact", "file_sha256", "now"]

# ``now``: the registry's clock is the one clock, ``engines.stamps.utc_now``, under the name
# its rows are stamped with (here and by the trainers, as ``registry.now()``, read when
# stamping): the one place tests patch to order the rows they write.


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
    if not versions:
        kinds = sorted({r["kind"] for r in query(con, named_query("models_list"),
                                                  {"kind": None}).to_pylist()})
        raise ModelNotFoundError(f"no model {name!r}: the registry has no {kind} models "
                                 f"(kinds: {', '.join(kinds) or 'none'})")
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
    return as_model_version(versions[0], lake.home)


def as_model_version(row: dict[str, Any], home: Path) -> ModelVersion:
    return ModelVersion(
        model_id=row["model_id"], kind=row["kind"], name=row["name"], version=row["version"],
        config=json.loads(row["config"]),
        artifact_path=artifact_location(home, row["artifact_path"]),
        artifact_sha256=row["artifact_sha256"], created_at=row["created_at"],
        status=row["status"])


def stored_artifact_path(home: Path, artifact: Path) -> str:
    """How a models row records an artifact: relative to the home when it lies under it.

    >>> stored_artifact_path(Path("/h"), Path("/h/models/nnue/3/nnue.npz"))
    'models/nnue/3/nnue.npz'
    >>> stored_artifact_path(Path("/h"), Path("/elsewhere/net.npz"))
    '/elsewhere/net.npz'
    """
    artifact = Path(os.path.abspath(artifact))
    for root in (Path(os.path.abspath(home)), Path(os.path.realpath(home))):
        for candidate in (artifact, Path(os.path.realpath(artifact))):
            if candidate.is_relative_to(root):
                return candidate.relative_to(root).as_posix()
    return str(artifact)


def artifact_location(home: Path, stored: str) -> Path:
    """The file a models row's ``artifact_path`` names under ``home``: a relative path is taken
    from the home; an absolute one (rows written before paths were relative) is taken as it
    is, unless this home holds the same ``models/...`` file (a copied or moved home).

    >>> str(artifact_location(Path("/h"), "models/nnue/3/nnue.npz"))
    '/h/models/nnue/3/nnue.npz'
    """
    path = Path(stored)
    if not path.is_absolute():
        return home / path
    if path.is_relative_to(home) or "models" not in path.parts:
        return path
    at = len(path.parts) - 1 - path.parts[::-1].index("models")
    own = home.joinpath(*path.parts[at:])
    return own if own.is_file() else path


def verified_artifact(model: ModelVersion) -> Path:
    """The model's artifact file once its sha256 is the recorded one; ModelArtifactError (one
    line naming the model, the file and both hashes) when it is missing or another file."""
    path = model.artifact_path
    try:
        found = file_sha256(path)
    except OSError as exc:
        raise ModelArtifactError(f"model {model.model_id}: cannot read its artifact "
                                 f"{str(path)!r} ({exc.strerror or exc})") from None
    if found != model.artifact_sha256:
        raise ModelArtifactError(
            f"model {model.model_id}: artifact {str(path)!r} has sha256 {found}, the registry "
            f"recorded {model.artifact_sha256} (the file was replaced or damaged)")
    return path


def resolve_verified(lake: Lake, name: str) -> ModelVersion:
    """:func:`resolve_model`, its artifact checked against the recorded hash: what every place
    that loads a model into an engine uses."""
    model = resolve_model(lake, name)
    verified_artifact(model)
    return model


def record_event(lake: Lake, model: str, event: str, payload: dict[str, Any]) -> None:
    """Append one event of a model's life (the latest one is its status)."""
    if event not in EVENTS:
        raise ModelError(f"model {model}: unknown event {event!r} (one of {', '.join(EVENTS)})")
    lake.write("model_events", [{
        "event_id": uuid.uuid4().hex, "model_id": model, "event": event,
        "payload": json.dumps(payload, sort_keys=True), "recorded_at": now()}])


def record_model(lake: Lake, kind: str, version: int, name: str, config_json: str,
                 artifact: Path, sha256: str) -> None:
    lake.write("models", [{
        "model_id": model_id(kind, version), "kind": kind, "name": name, "version": version,
        "config": config_json, "artifact_path": stored_artifact_path(lake.home, artifact),
        "artifact_sha256": sha256,
        "created_at": now()}])


def registered_versions(lake: Lake, kind: str) -> set[int]:
    """Versions of ``kind`` with a models row (finished training)."""
    rows = query(connect(lake), named_query("model_versions"), {"kind": kind}).to_pylist()
    return {int(r["version"]) for r in rows}


def list_models(lake: Lake, kind: str | None = None) -> Any:
    """Model versions with status and headline metrics (``chesslab models``), as Arrow."""
    return query(connect(lake), named_query("models_list"), {"kind": kind})


# --------------------------------------------------------------------------------------------
# Version numbers: one per training run, never shared by two trainers of one home
# --------------------------------------------------------------------------------------------

#: The lock file of a version folder, held by the trainer that runs it for its whole run.
RUN_LOCK = ".training.lock"
#: The lock file of a kind's folder, held while a version number is chosen.
ALLOCATION_LOCK = ".versions.lock"


@dataclass
class VersionLock:
    """The held lock of a version folder: released when the run ends (or its process dies, so
    a killed run can be resumed)."""

    handle: IO[str] | None

    def release(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def lock_version(folder: Path) -> VersionLock | None:
    """The version folder's run lock, or None when a live trainer holds it."""
    handle = open(folder / RUN_LOCK, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return VersionLock(handle)


def allocate_version(folder: Path, finished: set[int],
                     resumable: Callable[[Path], bool]) -> tuple[int, bool, VersionLock]:
    """(version, resumed, its held lock) of a training run of one kind (``folder``: the
    kind's models folder, ``finished``: its registered versions).

    The newest unfinished version that ``resumable(version folder)`` accepts and no live
    trainer holds is resumed (a killed run); else the next number is claimed by creating its
    folder. The choice is made under the kind's allocation lock, and the chosen version's
    run lock is held until :meth:`VersionLock.release`, so two identical runs side by side
    take two numbers (before, the second one "resumed" the first one's live version and both
    wrote version 1)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ALLOCATION_LOCK, "a") as allocation:
        fcntl.flock(allocation, fcntl.LOCK_EX)
        try:
            numbered = sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())
            for version in reversed(numbered):
                path = folder / str(version)
                if version in finished or not resumable(path):
                    continue
                held = lock_version(path)
                if held is not None:
                    return version, True, held
            version = claim_version(folder, max([*numbered, *finished, 0]) + 1)
            held = lock_version(folder / str(version))
            assert held is not None, "a folder just created is held by no one"
            return version, False, held
        finally:
            fcntl.flock(allocation, fcntl.LOCK_UN)


def claim_version(folder: Path, first: int) -> int:
    """The first free version number from ``first`` on, claimed by creating its folder (a
    trainer beside this one that claimed a number meanwhile keeps it; this one takes the
    next)."""
    version = first
    while True:
        try:
            (folder / str(version)).mkdir(parents=True)
            return version
        except FileExistsError:
            version += 1

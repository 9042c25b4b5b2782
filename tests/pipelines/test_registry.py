"""The model registry (issue 9): KIND@VERSION / KIND@latest / KIND@best names, latest-wins
status from the append-only events, and ``chesslab models``.

Registry rows are written through the registry's own functions with real artifact files;
training itself is covered by test_train_nnue.py.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pipelines.models.registry
from flows.cli import main as cli_main
from pipelines.models.registry import (
    ModelArtifactError,
    ModelError,
    ModelNotFoundError,
    allocate_version,
    artifact_location,
    claim_version,
    list_models,
    now,
    record_event,
    record_model,
    registered_versions,
    resolve_model,
    resolve_verified,
)
from warehouse import Lake, connect


def register(lake: Lake, version: int, kind: str = "nnue") -> Path:
    """A finished model: an artifact file, its models row, trained and exported events."""
    artifact = lake.home / "models" / kind / str(version) / "net.npz"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_bytes(f"{kind} {version}".encode())
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    record_model(lake, kind, version, f"{kind}-tiny", '{"epochs": 1}', artifact, digest)
    for event in ("trained", "exported"):
        record_event(lake, f"{kind}@{version}", event, {})
    return artifact


@pytest.fixture(autouse=True)
def in_sequence(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry's clock as a sequence: each row written gets the next millisecond, so
    the events are in the order the test records them (latest wins), whatever the clock's
    resolution and however fast the writes follow each other."""
    ticks = itertools.count()
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def in_order() -> dt.datetime:
        return start + dt.timedelta(milliseconds=next(ticks))

    monkeypatch.setattr(pipelines.models.registry, "now", in_order)
    yield
    assert not holders(in_order), (
        f"{', '.join(holders(in_order))} kept this test's clock: a module first imported "
        "while it was patched bound it by name, and every later test in this process writes "
        "rows dated 2026-01-01 (read the registry's clock when stamping, not at import)")


def holders(clock: object) -> list[str]:
    """``module.name`` of every chesslab module attribute other than the registry's own
    ``now`` that is ``clock``: a copy the monkeypatch cannot undo."""
    return [f"{name}.{attribute}" for name, module in list(sys.modules.items())
            if name.split(".")[0] in ("pipelines", "flows", "engines", "warehouse")
            for attribute, value in list(vars(module).items())
            if value is clock and (module, attribute) != (pipelines.models.registry, "now")]


@pytest.fixture
def lake(home: Path) -> Lake:
    lake = Lake(home)
    for version in (1, 2, 3):
        register(lake, version)
    register(lake, 1, kind="volatility")
    return lake


def promote(lake: Lake, model: str) -> None:
    record_event(lake, model, "promoted", {"by": "test"})


def test_names_resolve_to_versions(lake: Lake) -> None:
    """nnue@2 is version 2, nnue@latest the highest version, per kind."""
    assert resolve_model(lake, "nnue@2").version == 2
    second = resolve_model(lake, "nnue@2")
    assert (second.kind, second.config) == ("nnue", {"epochs": 1})     # as register() wrote
    latest = resolve_model(lake, "nnue@latest")
    assert (latest.model_id, latest.status, latest.name) == ("nnue@3", "exported", "nnue-tiny")
    assert latest.artifact_path.read_bytes() == b"nnue 3"
    assert latest.artifact_sha256 == hashlib.sha256(b"nnue 3").hexdigest()
    assert resolve_model(lake, "volatility@latest").model_id == "volatility@1"


def test_best_is_the_latest_promoted(lake: Lake) -> None:
    with pytest.raises(ModelNotFoundError, match=r"no model 'nnue@best' \(known nnue models: "
                                                 r"nnue@1, nnue@2, nnue@3\)"):
        resolve_model(lake, "nnue@best")
    promote(lake, "nnue@2")
    assert resolve_model(lake, "nnue@best").model_id == "nnue@2"
    promote(lake, "nnue@1")
    best = resolve_model(lake, "nnue@best")
    assert (best.model_id, best.status) == ("nnue@1", "promoted")


def test_unknown_names_are_one_line_errors(lake: Lake) -> None:
    for name, message in (("nnue@9", "no model 'nnue@9'"), ("lmr@latest", "no model 'lmr@latest'"),
                          ("nnue", "bad model name 'nnue'"), ("nnue@0", "bad model name")):
        with pytest.raises(ModelNotFoundError, match=message) as error:
            resolve_model(lake, name)
        assert "\n" not in str(error.value)


def test_a_kind_not_held_names_the_kinds_the_registry_holds(lake: Lake, tmp_path: Path) -> None:
    """The error for a kind with no model lists the kinds there are (by hand: nnue and
    volatility registered above), or says none in an empty registry."""
    with pytest.raises(ModelNotFoundError) as error:
        resolve_model(lake, "lmr@latest")
    assert str(error.value) == ("no model 'lmr@latest': the registry has no lmr models "
                                "(kinds: nnue, volatility)")
    with pytest.raises(ModelNotFoundError) as error:
        resolve_model(Lake(tmp_path / "empty"), "nnue@1")
    assert str(error.value) == ("no model 'nnue@1': the registry has no nnue models "
                                "(kinds: none)")


def test_status_is_the_latest_event_and_runs_in_progress_show(lake: Lake) -> None:
    """model_status: latest event wins; a run with only 'started' is listed, unfinished."""
    for event in ("deployed", "evaluated", "retired"):
        record_event(lake, "nnue@2", event, {})
    record_event(lake, "nnue@4", "started", {"folder": "x"})
    lake.write("model_metrics", [{"model_id": "nnue@4", "epoch": e, "step": 10 * (e + 1),
                                  "train_loss": 0.5 / (e + 1), "val_loss": 0.6 / (e + 1)}
                                 for e in range(2)])
    rows = {r["model_id"]: r for r in list_models(lake, "nnue").to_pylist()}
    assert [rows[m]["status"] for m in ("nnue@1", "nnue@2", "nnue@3", "nnue@4")] == [
        "exported", "retired", "exported", "started"]
    assert (rows["nnue@4"]["epochs"], rows["nnue@4"]["val_loss"]) == (2, 0.3)
    assert rows["nnue@4"]["name"] is None
    with pytest.raises(ModelNotFoundError):
        resolve_model(lake, "nnue@4")
    with pytest.raises(ValueError, match="unknown event 'shipped'"):
        record_event(lake, "nnue@1", "shipped", {})
    status = connect(lake).sql("select kind, count(*) from model_status group by all "
                               "order by kind").fetchall()
    assert status == [("nnue", 4), ("volatility", 1)]


def test_models_command_lists_and_resolves(lake: Lake, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    promote(lake, "nnue@3")
    assert cli_main(["models", "--kind", "nnue", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("model_id,kind,version,name,status")
    assert [line.split(",")[:5] for line in lines[1:]] == [
        ["nnue@1", "nnue", "1", "nnue-tiny", "exported"],
        ["nnue@2", "nnue", "2", "nnue-tiny", "exported"],
        ["nnue@3", "nnue", "3", "nnue-tiny", "promoted"]]
    assert cli_main(["models", "--show", "nnue@best"]) == 0
    assert capsys.readouterr().out.startswith("nnue@3 nnue-tiny status=promoted")
    assert cli_main(["models", "--show", "nnue@7"]) == 2
    assert "chesslab models: error: no model 'nnue@7'" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Issue 32 item 5: artifacts relative to the home, checked by hash; atomic version numbers
# --------------------------------------------------------------------------------------------

def test_artifacts_are_stored_relative_to_the_home_and_follow_it(lake: Lake,
                                                                 tmp_path: Path) -> None:
    """The models row records ``models/nnue/3/net.npz``: a copied home resolves to its own
    files (not the original's), a moved home keeps its models; a row written before, with an
    absolute path, still resolves, to the copy's own file when the copy has it."""
    import shutil

    stored = connect(lake).execute("select artifact_path from models where model_id = 'nnue@3'"
                                   ).fetchone()[0]
    assert stored == "models/nnue/3/net.npz"
    copy = Lake(shutil.copytree(lake.home, tmp_path / "copy"))
    (copy.home / stored).write_bytes(b"the copy's own net")
    assert resolve_model(copy, "nnue@3").artifact_path == copy.home / stored
    assert resolve_model(lake, "nnue@3").artifact_path.read_bytes() == b"nnue 3"
    moved = Lake(shutil.move(str(copy.home), tmp_path / "moved"))
    assert resolve_model(moved, "nnue@3").artifact_path.read_bytes() == b"the copy's own net"

    legacy = lake.home / "models" / "nnue" / "4" / "net.npz"     # an absolute path, as before
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"nnue 4")
    lake.write("models", [{"model_id": "nnue@4", "kind": "nnue", "name": "old", "version": 4,
                           "config": "{}", "artifact_path": str(legacy),
                           "artifact_sha256": hashlib.sha256(b"nnue 4").hexdigest(),
                           "created_at": now()}])
    assert resolve_model(lake, "nnue@4").artifact_path == legacy
    twin = Lake(shutil.copytree(lake.home, tmp_path / "twin"))
    assert resolve_model(twin, "nnue@4").artifact_path == twin.home / "models/nnue/4/net.npz"
    shutil.rmtree(lake.home / "models" / "nnue" / "4")            # the original is gone
    assert resolve_verified(twin, "nnue@4").artifact_path.read_bytes() == b"nnue 4"
    outside = tmp_path / "elsewhere.npz"
    outside.write_bytes(b"outside")
    record_model(lake, "nnue", 5, "outside", "{}", outside,
                 hashlib.sha256(b"outside").hexdigest())
    assert resolve_verified(lake, "nnue@5").artifact_path == outside


def test_a_replaced_or_missing_artifact_is_refused_naming_the_model_and_both_hashes(
        lake: Lake) -> None:
    """The recorded sha256 is checked when a model is loaded: a swapped file is refused in
    one line with the model and both hashes (before, its games went under the old name)."""
    path = resolve_verified(lake, "nnue@2").artifact_path
    path.write_bytes(b"a different net")
    recorded = hashlib.sha256(b"nnue 2").hexdigest()
    found = hashlib.sha256(b"a different net").hexdigest()
    with pytest.raises(ModelArtifactError) as error:
        resolve_verified(lake, "nnue@2")
    assert str(error.value) == (f"model nnue@2: artifact '{path}' has sha256 {found}, the "
                                f"registry recorded {recorded} (the file was replaced or "
                                "damaged)")
    path.unlink()
    with pytest.raises(ModelArtifactError) as error:
        resolve_verified(lake, "nnue@2")
    assert str(error.value) == (f"model nnue@2: cannot read its artifact '{path}' "
                                "(No such file or directory)")
    assert resolve_model(lake, "nnue@2").model_id == "nnue@2"    # listing still works


def test_two_identical_training_runs_take_two_versions(lake: Lake) -> None:
    """Two identical `train nnue` runs side by side both wrote version 1 (the second took the
    first one's live folder for a killed run to resume) and recorded duplicate events. Now a
    version a live trainer holds is never resumed: the second run claims version 4 (1..3 are
    registered); once the first run is gone (killed), the same config resumes its version."""
    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.train.config import preset
    from pipelines.train.trainer import open_run

    config = preset(NnueConfig, "tiny", epochs=1)
    first = open_run(lake, "nnue", config)
    second = open_run(lake, "nnue", config)
    assert (first.version, first.resumed) == (4, False)
    assert (second.version, second.resumed) == (5, False)
    first.release()                                   # its process died
    again = open_run(lake, "nnue", config)
    assert (again.version, again.resumed) == (4, True)
    assert open_run(lake, "nnue", config).version == 6   # 4 and 5 held: a new number
    second.release()
    again.release()


# --------------------------------------------------------------------------------------------
# Issue 48: what mutation testing found unchecked (events, version numbers, legacy paths)
# --------------------------------------------------------------------------------------------

def test_events_are_checked_and_their_payload_stored_with_sorted_keys(lake: Lake) -> None:
    with pytest.raises(ModelError) as error:
        record_event(lake, "nnue@1", "blessed", {})
    assert str(error.value) == ("model nnue@1: unknown event 'blessed' (one of started, "
                                "trained, exported, deployed, evaluated, promoted, retired)")
    record_event(lake, "nnue@1", "evaluated", {"score": 0.5, "games": 10})
    payload = connect(lake).execute(
        "select payload from model_events where model_id = 'nnue@1' and event = 'evaluated'"
    ).fetchone()[0]
    assert payload == '{"games": 10, "score": 0.5}'


def test_registered_versions_are_those_of_the_lake_asked(lake: Lake, tmp_path: Path) -> None:
    """Of the lake passed, not of the CHESSLAB_HOME the process was started with."""
    assert registered_versions(lake, "nnue") == {1, 2, 3}
    other = Lake(tmp_path / "other")
    register(other, 7)
    assert registered_versions(other, "nnue") == {7}
    assert registered_versions(other, "volatility") == set()


def test_a_legacy_absolute_path_is_kept_when_the_home_lacks_the_file(tmp_path: Path) -> None:
    """An absolute ``.../models/...`` path from another home: this home's own copy when it
    has one, else the path as recorded."""
    home = tmp_path / "home"
    recorded = "/old/home/models/nnue/4/net.npz"
    assert artifact_location(home, recorded) == Path(recorded)
    own = home / "models" / "nnue" / "4" / "net.npz"
    own.parent.mkdir(parents=True)
    own.write_bytes(b"net")
    assert artifact_location(home, recorded) == own


def test_version_numbers_count_from_one_past_every_registered_or_claimed_one(
        tmp_path: Path) -> None:
    """Numbers by hand: a fresh kind starts at 1 (its folder made with its parents); the
    next number passes registered versions whose folders are gone; the newest unfinished
    folder is resumed even below a finished one; a finished folder is never resumed."""
    def allocated(folder: Path, finished: set[int]) -> tuple[int, bool]:
        version, resumed, held = allocate_version(folder, finished, lambda path: True)
        held.release()
        return version, resumed

    kind = tmp_path / "home" / "models" / "nnue"            # no parent exists yet
    assert allocated(kind, set()) == (1, False)
    assert allocated(kind, {1}) == (2, False)               # 1 finished
    assert allocated(tmp_path / "gone", {5}) == (6, False)  # 5 registered, its folder gone
    older = tmp_path / "older"
    (older / "1").mkdir(parents=True)                       # unfinished, nobody holds it
    (older / "2").mkdir()                                   # finished
    assert allocated(older, {2}) == (1, True)
    assert allocated(older, {1, 2}) == (3, False)


def test_a_claimed_number_is_passed_by_the_next_claim(tmp_path: Path) -> None:
    (tmp_path / "1").mkdir()
    assert claim_version(tmp_path, 1) == 2
    assert claim_version(tmp_path, 1) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1", "2", "3"]

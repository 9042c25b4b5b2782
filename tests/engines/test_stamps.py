"""engines/stamps.py: one content id, one file hash and one clock for every recorded fact.

The ids the call sites made before they shared :func:`content_id` are stored in existing
warehouses (engine ids, tournament, rating, SPRT, self-play and Monte-Carlo run ids): each is
checked here against the formula its site used, written out with hashlib and json, so a change
to the helper's serialisation (separators, key order, encoding) fails here and not in a user's
warehouse."""
from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest

from engines.identity import EngineIdentity
from engines.registry import parse_engine
from engines.stamps import content_id, file_sha256, utc_now
from pipelines.mcc import run_id as mcc_run_id
from pipelines.puct.config import ADDED_DEFAULTS, NOT_IDENTITY, preset_config
from pipelines.ratings.bayeselo import Game, RatingsConfig
from pipelines.ratings.sources import rating_id
from pipelines.sprt import SprtConfig, SprtResult
from pipelines.sprt.store import record_sprt
from warehouse import Lake


def sha256_hex(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def test_content_id_hashes_text_bytes_and_json_with_sorted_keys() -> None:
    assert content_id("abc") == hashlib.sha256(b"abc").hexdigest()[:16]
    assert content_id(b"\x00\xff", n=64) == hashlib.sha256(b"\x00\xff").hexdigest()
    value = {"b": [1, 2.5, None], "a": "x"}
    assert content_id(value, n=12) == sha256_hex('{"a": "x", "b": [1, 2.5, null]}', 12)
    assert content_id({"a": "x", "b": [1, 2.5, None]}, n=12) == content_id(value, n=12)
    assert content_id(["a", Path("/p")]) == sha256_hex('["a", "/p"]', 16)   # default=str
    for bad in (0, 65):
        with pytest.raises(ValueError, match=f"n must be 1..64 hex digits, got {bad}"):
            content_id("abc", n=bad)


def test_engine_ids_stay_as_stored() -> None:
    """engine_id: 8 hex of [name, version, sorted options]; a player's setup hash: 16 hex of
    [kind, command, protocol, sorted options] (the interpreter left out for own engines)."""
    identity = EngineIdentity.from_id_name("Stockfish 15.1", {"Threads": 1, "Hash": "16"})
    payload = json.dumps(["Stockfish", "15.1", sorted(identity.options.items())])
    assert identity.engine_id == f"stockfish-15.1-{sha256_hex(payload, 8)}"
    assert identity.engine_id == "stockfish-15.1-563d6074"     # the module's doctest value
    spec = parse_engine("stockfish?Threads=1&Hash=16")
    text = json.dumps(["external", list(spec.command), "uci", dict(sorted(spec.options.items()))])
    assert spec.setup_hash == sha256_hex(text, 16)


def test_run_ids_stay_as_stored(tmp_path: Path) -> None:
    """Monte-Carlo, rating, SPRT (16 hex) and PUCT self-play (``pv-`` and 10 hex) run ids."""
    assert mcc_run_id("kqk", "plain", "8/8 w - -", 1, 1000, "x") == sha256_hex(
        json.dumps(("kqk", "plain", "8/8 w - -", 1, 1000, "x")), 16)
    config = RatingsConfig(anchors={"b": 1500.0, "a": 1000.0})
    games = [Game("a", "b", 1.0), Game("b", "c", 0.5)]
    text = json.dumps([[["a", "b", 1.0], ["b", "c", 0.5]],
                       [config.prior, config.advantage, config.drawelo, config.fit_advantage,
                        config.fit_drawelo, config.confidence, [["a", 1000.0], ["b", 1500.0]],
                        config.scale]])
    assert rating_id(games, config) == sha256_hex(text, 16)
    sprt = SprtConfig(0.0, 5.0)
    stored = record_sprt(Lake(tmp_path), SprtResult((3, 4, 5), 0.5, -2.9, 2.9), sprt, "t1")
    text = json.dumps([[3, 4, 5], sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, sprt.model, "t1"])
    assert stored == sha256_hex(text, 16)
    puct = preset_config("small")
    values = {k: v for k, v in dataclasses.asdict(puct).items() if k not in NOT_IDENTITY
              and not (k in ADDED_DEFAULTS and ADDED_DEFAULTS[k] == v)}
    assert puct.run_id == "pv-" + sha256_hex(json.dumps(values, sort_keys=True), 10)


def test_file_sha256_reads_a_file_in_blocks(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000          # 2.3 MB: three blocks of 1 MiB
    path = tmp_path / "openings.pgn"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing.pgn")


def test_utc_now_is_aware_utc() -> None:
    before = dt.datetime.now(dt.UTC)
    now = utc_now()
    assert now.tzinfo is dt.UTC and now.utcoffset() == dt.timedelta(0)
    assert before <= now <= dt.datetime.now(dt.UTC)

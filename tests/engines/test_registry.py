"""Engine specs: own engines, the Stockfish ladder, external programs, engines files."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engines.registry import (
    EngineSpecError,
    check_player,
    chesslab_version,
    engines_revision,
    expand_ladder,
    load_engines_file,
    own_version,
    parse_engine,
    player_identity,
    source_revision,
)


def test_own_engine_command_is_built_from_this_interpreter() -> None:
    """``alphabeta:eval=hce-simple`` runs ``python -m engines.uci alphabeta --eval ...``;
    its id does not depend on the interpreter path, only on what it plays with."""
    spec = parse_engine("alphabeta:eval=hce-simple,hash=32")
    assert spec.command == (sys.executable, "-m", "engines.uci", "alphabeta", "--eval",
                            "hce-simple", "--hash", "32")
    assert spec.kind == "own" and spec.name == "alphabeta:eval=hce-simple,hash=32"
    assert spec.setup_hash != parse_engine("alphabeta:eval=hce").setup_hash


def test_own_engine_identity_records_search_evaluation_and_model() -> None:
    """``alphabeta:eval=nnue,model=nnue@3`` parses, passes the model as the UCI option
    ``Model`` and its identity records the evaluation and the model version; the same
    settings spelt differently (defaults written out, ``?Hash=16``) are the same engine."""
    nnue = parse_engine("alphabeta:eval=nnue,model=nnue@3")
    assert nnue.command[3:] == ("alphabeta", "--eval", "nnue", "--model", "nnue@3")
    identity = player_identity(nnue)
    assert (identity.kind, identity.search, identity.evaluation, identity.model) == (
        "own", "alphabeta", "nnue", "nnue@3")
    assert identity.options == {"Eval": "nnue", "Hash": "16", "LMR": "standard",
                                "Model": "nnue@3", "NnueTempo": "0", "Volatility": "",
                                "VolatilityThreshold": ""}
    assert identity.version == own_version() == f"{chesslab_version()}+rev.{engines_revision()}"
    plain = player_identity(parse_engine("alphabeta"))
    assert (plain.evaluation, plain.model) == ("hce", None)
    assert plain.engine_id == player_identity(parse_engine("alphabeta:eval=hce?hash=16")).engine_id
    assert plain.engine_id == player_identity(
        parse_engine("alphabeta:search_log_rate=0.5")).engine_id  # logging plays no move
    assert plain.engine_id != identity.engine_id
    assert plain.engine_id != player_identity(parse_engine("alphabeta?Hash=8")).engine_id
    assert plain.engine_id.startswith(f"alphabeta-{chesslab_version()}-rev.{engines_revision()}-")


def test_own_engine_versions_follow_the_engine_code(tmp_path: Path) -> None:
    """An own engine's version carries a hash of the engines' sources: a change to the search
    (a .pyx), to Python code or to a .pxd is a new revision, compiled caches are not."""
    (tmp_path / "alphabeta").mkdir()
    search = tmp_path / "alphabeta" / "search.pyx"
    search.write_text("cdef int NNUE_TEMPO = 28\n")
    (tmp_path / "uci.py").write_text("x = 1\n")
    before = source_revision(tmp_path)
    assert len(before) == 8 and int(before, 16) >= 0
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "uci.cpython-311.pyc").write_bytes(b"\x00")
    (tmp_path / "alphabeta" / "search.c").write_text("/* generated */\n")
    assert source_revision(tmp_path) == before
    search.write_text("cdef int NNUE_TEMPO = 20\n")
    assert source_revision(tmp_path) != before
    search.write_text("cdef int NNUE_TEMPO = 28\n")
    assert source_revision(tmp_path) == before
    (tmp_path / "alphabeta" / "search.pxd").write_text("cdef int f()\n")
    assert source_revision(tmp_path) != before
    # issue 38: the shipped net (what alphabeta:eval=nnue plays) is part of the revision
    with_pxd = source_revision(tmp_path)
    (tmp_path / "nnue" / "nets").mkdir(parents=True)
    (tmp_path / "nnue" / "nets" / "psq768.npz").write_bytes(b"net")
    assert source_revision(tmp_path) != with_pxd


def test_bad_own_engine_settings_are_errors_naming_the_engine() -> None:
    # issue 38: eval=nnue alone plays the shipped net (no model); a missing file is an error
    shipped = player_identity(parse_engine("alphabeta:eval=nnue"))
    assert (shipped.evaluation, shipped.model) == ("nnue", None)
    with pytest.raises(EngineSpecError, match="'alphabeta:eval=nnue,nnue=no/such.npz'.*no such"):
        player_identity(parse_engine("alphabeta:eval=nnue,nnue=no/such.npz"))
    with pytest.raises(EngineSpecError, match="KIND@VERSION.*'nnue3'"):
        player_identity(parse_engine("alphabeta:eval=nnue,model=nnue3"))
    with pytest.raises(EngineSpecError, match="no option 'Contempt'"):
        player_identity(parse_engine("alphabeta?Contempt=10"))


def test_stockfish_ladder_rungs(stockfish_path: str) -> None:
    """``stockfish@1600`` sets UCI_LimitStrength and UCI_Elo and is anchored at 1600;
    options and a display name can be added."""
    rung = parse_engine("stockfish@1600?Hash=16#sf1600")
    assert rung.name == "sf1600" and rung.elo == 1600 and rung.kind == "ladder"
    assert rung.options == {"UCI_LimitStrength": True, "UCI_Elo": 1600, "Hash": 16}
    assert expand_ladder("stockfish@1350-2000/250") == [
        "stockfish@1350", "stockfish@1600", "stockfish@1850"]
    assert expand_ladder("stockfish@1400,1500") == ["stockfish@1400", "stockfish@1500"]
    with pytest.raises(EngineSpecError, match="'toga2@1500'"):
        parse_engine("toga2@1500")


def test_engines_file_and_unknown_specs(tmp_path: Path, stockfish_path: str) -> None:
    """Players named in TOML; unknown names and missing programs are errors quoting them."""
    path = tmp_path / "engines.toml"
    path.write_text('[players.fast]\nspec = "stockfish"\noptions = {Threads = 1}\n'
                    '[players.x]\ncommand = ["/bin/cat"]\nprotocol = "xboard"\nelo = 1200\n')
    players = load_engines_file(path)
    assert players["fast"].options == {"Threads": 1}
    assert players["x"].protocol == "xboard" and players["x"].kind == "ladder"
    assert parse_engine("fast#quick", players).name == "quick"
    with pytest.raises(EngineSpecError, match="'nosuchengine'"):
        parse_engine("nosuchengine")
    with pytest.raises(EngineSpecError, match="'/no/such/program'"):
        parse_engine("uci:/no/such/program")


@pytest.mark.parametrize("spec,message", [
    ("alphabeta:eval=hcee", "engine 'alphabeta:eval=hcee': eval 'hcee' is not valid (did you "
     "mean 'hce'?); valid: hce, hce-simple, nnue, nnue-hybrid"),
    ("alphabeta:evl=hce", "engine 'alphabeta:evl=hce': no setting 'evl' (did you mean "
     "'eval'?); alphabeta settings: eval, nnue, lmr, hash,"),
    ("alphabeta:hash=big", "engine 'alphabeta:hash=big': hash takes an integer, got 'big'"),
    ("alphabeta:hash=0", "engine 'alphabeta:hash=0': --hash must be 1..65536 MB, got 0"),
    ("alphabeta:eval", "engine 'alphabeta:eval': setting 'eval' needs a value (eval=VALUE)"),
    ("mcts:variant=uct", "engine 'mcts:variant=uct': variant 'uct' is not valid; valid: mcc,"),
    ("mcts:epsilon=lots", "engine 'mcts:epsilon=lots': epsilon takes a number, got 'lots'"),
    ("puct:net=random,formula=azero", "formula 'azero' is not valid (did you mean "
     "'alphazero'?); valid: alphazero, tjack, chessbreaker"),
    ("alphabeta?Hsh=8", "engine 'alphabeta?Hsh=8': no option 'Hsh' (did you mean 'Hash'?); "
     "options: Hash, Eval,"),
    ("alphabeta?Hash=0", "engine 'alphabeta?Hash=0': option 'Hash' takes 1..65536, got '0'"),
    ("alphabeta?Eval=hcee", "option 'Eval' takes one of hce/hce-simple/nnue/nnue-hybrid, got "
     "'hcee'"),
    ("alphabeta:eval=nnue,model=nnue@3", "engine 'alphabeta:eval=nnue,model=nnue@3': "
     "evaluation 'nnue' needs the EvalFile option (model 'nnue@3'"),
])
def test_a_bad_player_spec_is_one_line_naming_it_and_what_is_valid(spec: str,
                                                                     message: str) -> None:
    """Issue 32 item 3: an own engine's settings and ?options are checked in this process
    before any game, against the program's command-line options and the UCI options it
    declares (before, a misspelled setting surfaced as "engine process died unexpectedly")."""
    with pytest.raises(EngineSpecError) as error:
        check_player(parse_engine(spec))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_good_player_specs_pass_the_check() -> None:
    for spec in ("alphabeta", "alphabeta:eval=hce-simple,hash=4?Hash=8&MultiPV=2",
                 "mcts:variant=combined,epsilon=0.2?Solver=off", "puct:net=random,simulations=0",
                 "alphabeta:volatility=random:0.5#rnd", "alphabeta?Move Overhead=50"):
        check_player(parse_engine(spec))
    check_player(parse_engine("alphabeta:eval=nnue,model=nnue@3"), load=False)  # unresolved

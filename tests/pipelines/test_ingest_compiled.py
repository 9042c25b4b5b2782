"""The compiled PGN reader (issue 35 §1) against its oracles.

python-chess is the oracle for what a file holds: on generated games (random legal games with
clocks, evals, NAGs, variations, comments, set-up positions, Chess960, null moves and illegal
moves), ingest stores exactly the games, moves, positions, annotations and error games
``chess.pgn.read_game`` reads. The Python reader (``pipelines.ingest.pgn``, python-chess's
rules plus chesslab's recovery) is the oracle for every rule it keeps: game boundaries, tags,
tokens, keys and problems agree on the fixtures and on random mixes of quirky lines, whatever
the block and chunk sizes.
"""
from __future__ import annotations

import bz2
import gzip
import io
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import chess.polyglot
import numpy as np
import pyarrow as pa
import pytest
import zstandard

from engines.core import replay_san
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig
from pipelines.ingest import chunks as chunks_module
from pipelines.ingest import games as games_module
from pipelines.ingest import keys as keys_module
from pipelines.ingest.chunks import TextBlocks, raw_games
from pipelines.ingest.games import clock_seconds, eval_columns
from pipelines.ingest.keys import BloomFilter, Occurrences, occurrence_key, split_keys
from pipelines.ingest.pgn import ParsedGame, parse_game, parse_movetext_general, split_games
from pipelines.ingest.sources import SourceFile, read_lines
from warehouse import Lake, connect

pytestmark = pytest.mark.skipif(chunks_module._pgn is None, reason="compiled reader not built")
_pgn = chunks_module._pgn

FIXTURES = Path(__file__).parent.parent / "fixtures"
SAMPLE = Path(__file__).parent.parent.parent / "data" / "sample" / "games.pgn.zst"
PGN_FILES = sorted(FIXTURES.rglob("*.pgn*")) + [SAMPLE]
QUIRK_LINES = ('[Event "x"]', '[Site "y"]', '[Broken tag', '', '', '%escape', '; semi {',
               '{comment', 'more}', '} e4', '1. e4 e5', '2. Nf3 {c} Nc6', '(2... d6 3. d4)', ')',
               '(', '{ multi', 'line }', '3. Bb5 a6 $1', '1-0', '*', '1... c5 {[%clk 0:00:10]}',
               'Nf3;x', '{;} d4', '\ufeff[Event "bom"]', '[Event  "a \\"q\\" b"]',
               '{[%eval #-3] [%clk 1:02:03.5]}', '{ [%eval 0.155] [%eval -.5,12] }',
               'e8=Q exd8N O-O-O 0-0 -- Z0 P@e4', '\xa0', '[Ev\xa0"é"]  ', 'Nbd7 R1e2 Qh4e1',
               '[Event "dup"]', '[Event "later wins"]', '[White "tab\there"]')


def text_of(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    elif path.suffix == ".bz2":
        raw = bz2.decompress(raw)
    elif path.suffix == ".zst":
        raw = zstandard.ZstdDecompressor().stream_reader(raw).read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def compiled_chunks(text: str, chunk_games: int, block: int) -> list[Any]:
    splitter = _pgn.Splitter(chunk_games)
    for start in range(0, len(text), block):
        splitter.feed(text[start:start + block])
    splitter.finish()
    return splitter.chunks()


def general(raw: Any) -> ParsedGame:
    """The Python reader's game, annotations and result by its token-by-token rules."""
    game = parse_game(raw)
    tokens = ParsedGame(raw.index, raw.line)
    parse_movetext_general(raw.movetext, tokens)
    game.clocks, game.evals, game.result = tokens.clocks, tokens.evals, tokens.result
    return game


def assert_reads_like_the_python_reader(text: str, chunk_games: int, block: int) -> None:
    from pipelines.ingest.keys import game_key, tags_json
    expected = list(split_games(io.StringIO(text)))
    chunks = compiled_chunks(text, chunk_games, block)
    assert [raw for chunk in chunks for raw in raw_games(chunk)] == expected
    games = iter(expected)
    for chunk in chunks:
        reader = _pgn.ChunkReader(chunk)
        keys = reader.parse()
        reader.start_replay()
        for i in range(reader.count):
            game = general(next(games))
            assert reader.sans(i) == game.sans
            assert reader.tags_json()[i].as_py() == tags_json(game.tags)
            assert keys[i] == game_key(tags_json(game.tags), game.sans)
            assert reader.result(i) == game.result
            assert [(line, text.decode()) for line, text in reader.bad_tags[i] or []] == \
                [(line, text) for line, text in game.bad_tags]
            variation = [p.line for p in game.problems if p.kind == "unclosed_variation"]
            assert ([] if reader.variation_line(i) is None else [reader.variation_line(i)]) \
                == variation
            known = dict(zip(_pgn.KNOWN_TAGS, reader.known_tags(i), strict=True))
            assert known == {name: game.tags.get(name) for name in _pgn.KNOWN_TAGS}
            if "FEN" in game.tags or "Variant" in game.tags:
                continue
            before = len(reader.moves()["ply"])
            plies, failure, paused = reader.replay(i)
            keys_, fens, ucis, sans, error = replay_san(None, game.sans)
            assert (plies, failure, paused) == (len(ucis), error, False)
            moves = {name: column.to_pylist()[before:] for name, column in
                     reader.moves().items()}
            assert (moves["uci"], moves["san"], moves["position_key"]) == \
                (ucis, sans, keys_[:plies])
            assert moves["clock_s"] == clock_seconds(
                pa.array(game.clocks[:plies], pa.string())).to_pylist()
            evals = eval_columns(pa.array(game.evals[:plies], pa.string()))
            assert (moves["eval_cp"], moves["eval_mate"]) == \
                (evals["eval_cp"].to_pylist(), evals["eval_mate"].to_pylist())


@pytest.mark.parametrize("path", PGN_FILES, ids=lambda p: p.name)
def test_fixtures_read_like_the_python_reader(path: Path) -> None:
    """Every fixture (and the sample corpus) cuts into the same games, tags, tokens, keys,
    annotations, problems and replays, fed in odd blocks and chunks."""
    text = text_of(path)
    for chunk_games, block in ((1, 7), (3, 1000), (1 << 20, 1 << 20)):
        assert_reads_like_the_python_reader(text, chunk_games, block)


def test_random_quirk_mixes_read_like_the_python_reader() -> None:
    """1,500 random mixes of tags, broken tags, BOMs, blank, %, ; and comment lines, escapes,
    Unicode whitespace, nulls, drops and variations: the same games and rules."""
    rng = random.Random(35)
    for _ in range(1500):
        text = "\n".join(rng.choice(QUIRK_LINES) for _ in range(rng.randint(1, 14)))
        assert_reads_like_the_python_reader(text, rng.randint(1, 3), rng.randint(1, 30))


def test_text_blocks_translate_line_ends_at_any_block_size(tmp_path: Path) -> None:
    """CRLF, a lone CR and a BOM, cut into blocks of every small size (a CR at a block's end
    waits for the next block's LF): the lines the line reader gives."""
    path = tmp_path / "ends.pgn"
    path.write_bytes(b"\xef\xbb\xbf[Event \"a\"]\r\n\r\n1. e4 e5\r2. Nf3 *\r\n\r\n"
                     b"[Event \"b\xe9\"]\r\n\r\n1. d4 *\r")
    source = SourceFile(path, "pgn", "none")
    expected = "".join(read_lines(source))
    for size in range(1, 10):
        blocks = TextBlocks(source, block_bytes=size)
        assert "".join(blocks) == expected
        assert blocks.encoding == "utf-8-sig+latin-1"


def random_position(rng: random.Random, chess960: bool = False) -> chess.Board:
    board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    for _ in range(rng.randint(0, 20)):
        moves = list(board.legal_moves)
        if not moves or board.is_game_over():
            break
        board.push(rng.choice(moves))
    return board


def comment(rng: random.Random) -> str:
    """A comment with or without annotations (python-chess reads the same ones)."""
    parts = []
    if rng.random() < 0.6:
        parts.append(rng.choice([f"[%eval {rng.uniform(-9, 9):.2f}]",
                                 f"[%eval {rng.randint(-5, 5)}]",
                                 f"[%eval #{rng.choice([-1, 1]) * rng.randint(1, 9)}]",
                                 f"[%eval {rng.uniform(-3, 3):.1f},{rng.randint(1, 30)}]"]))
    if rng.random() < 0.6:
        parts.append(f"[%clk {rng.randint(0, 2)}:{rng.randint(0, 59):02d}:"
                     f"{rng.randint(0, 59):02d}{rng.choice(['', '.5'])}]")
    if rng.random() < 0.3:
        parts.append(rng.choice(["good", "Capablanca's idea", "!?", "see (a) and (b)"]))
    rng.shuffle(parts)
    return "{ " + " ".join(parts) + " }"


# WhiteElo tags and what chesslab stores: digits, at most five of them (by hand).
ELO_TAGS = {"1500": 1500, "?": None, "": None, "12345678": None, "0099": 99, "2850": 2850,
            "99999": 99999, "100000": None}


def generated_game(rng: random.Random, number: int) -> str:
    """A random game, written with the habits of real files."""
    tags = {"Event": f"Generated {number}", "Site": "?", "White": rng.choice(["Åke", "Bo"]),
            "Black": "Capablanca, José Raúl"}
    if rng.random() < 0.7:
        tags["Result"] = rng.choice(["*", "1-0", "0-1", "1/2-1/2"])
    if rng.random() < 0.7:
        tags["WhiteElo"] = rng.choice(list(ELO_TAGS))
    kind = rng.random()
    chess960 = kind < 0.08
    board = random_position(rng, chess960) if kind < 0.25 else chess.Board()
    # a Chess960 position whose castling field names rook files needs no Variant tag
    shredder = chess960 and board.has_chess960_castling_rights() and rng.random() < 0.5
    if kind < 0.25:
        fen = board.shredder_fen() if shredder else board.fen()
        # FEN tags cut after 2 or 3 fields: python-chess fills the rest in
        tags.update({"SetUp": "1", "FEN": " ".join(fen.split()[:rng.choice([6, 6, 3, 2])])})
    if chess960 and not shredder:
        tags["Variant"] = "Chess960"
    tokens: list[str] = []
    for _ in range(rng.randint(0, 70)):
        moves = list(board.legal_moves)
        if not moves:
            break
        move = rng.choice(moves)
        if board.turn == chess.WHITE or not tokens:
            tokens.append(f"{board.fullmove_number}{'.' if board.turn else '...'}")
        san = board.san(move)
        tokens.append(san if rng.random() < 0.8 else san.rstrip("+#"))
        if rng.random() < 0.1:
            tokens.append(rng.choice(["!", "?!", "$1", "$18"]))
        if rng.random() < 0.1 and len(moves) > 1:   # a sub-variation from the same position
            other = rng.choice([m for m in moves if m != move])
            tokens.append(f"( {board.san(other)} {comment(rng)} )")
        board.push(move)
        if rng.random() < 0.7:
            tokens.append(comment(rng))
        if rng.random() < 0.02 and not chess960 and not board.is_check():
            tokens.append("--")
            board.push(chess.Move.null())
    if rng.random() < 0.1:
        tokens.append(rng.choice(["Ke9", "Nf3", "O-O-O", "Ke4", "Ra1a8"]))   # often illegal
    if rng.random() < 0.05:
        tokens.append("; a line comment\n")
    result = rng.choice(["1-0", "0-1", "1/2-1/2", "*"])
    header = "".join(f'[{name} "{value}"]\n' for name, value in tags.items())
    return f"{header}\n{' '.join(tokens)} {result}\n\n"


def python_chess_rows(text: str) -> list[dict[str, Any]]:
    """What python-chess reads in ``text``: per game its moves, positions and annotations."""
    games = []
    handle = io.StringIO(text)
    while (game := chess.pgn.read_game(handle)) is not None:
        board = game.board()
        headers = game.headers
        row: dict[str, Any] = {"errors": bool(game.errors), "moves": [],
                               "positions": {(chess.polyglot.zobrist_hash(board), board.epd(),
                                              board.is_check())},
                               "tags": (headers["Event"], headers["White"], headers["Black"],
                                        headers["Result"],
                                        ELO_TAGS.get(headers.get("WhiteElo", "")))}
        for node in game.mainline():
            score = node.eval()
            white = score.white() if score is not None else None
            row["moves"].append((
                chess.polyglot.zobrist_hash(board), node.move.uci(), board.san(node.move),
                node.clock(),
                white.score() if white is not None and not white.is_mate() else None,
                white.mate() if white is not None and white.is_mate() else None))
            board.push(node.move)
            row["positions"].add((chess.polyglot.zobrist_hash(board), board.epd(),
                                  board.is_check()))
        games.append(row)
    return games


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_games_read_like_python_chess(home: Path, tmp_path: Path, seed: int) -> None:
    """python-chess is the oracle: the same games and tags (the result marker filling an
    unknown Result), the same moves (UCI, SAN, the key of the position before each), the same
    clocks and evals, the same positions (and whether the side to move is in check), and an
    error on exactly the games python-chess reads with errors (their plies before it kept)."""
    rng = random.Random(seed)
    text = "".join(generated_game(rng, n) for n in range(120))
    path = tmp_path / "generated.pgn"
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1") if seed == 2
                     else text.encode("utf-8"))
    expected = python_chess_rows(text)
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig(workers=1, chunk_games=7,
                                                              flush_games=7)), Lake(home))
    con = connect(Lake(home))
    games = con.execute("select game_index, error is not null, plies from games "
                        "order by game_index").fetchall()
    assert summary.games == len(games) == len(expected)
    assert [(error, plies) for _, error, plies in games] == \
        [(row["errors"], len(row["moves"])) for row in expected]
    assert any(row["errors"] for row in expected) and not all(row["errors"] for row in expected)
    tags = con.execute("select event, white, black, result, white_elo from games "
                       "order by game_index").fetchall()
    # after an illegal move python-chess skips the rest, the result marker too; chesslab's
    # reader fills an unknown Result from the marker all the same
    assert [row[:3] + row[4:] if error else row for row, (_, error, _) in zip(
        tags, games, strict=True)] == [row["tags"][:3] + row["tags"][4:] if row["errors"]
                                       else row["tags"] for row in expected]
    moves = con.execute(
        "select g.game_index, m.position_key, m.uci, m.san, m.clock_s, m.eval_cp, m.eval_mate "
        "from moves m join games g using (game_id) order by g.game_index, m.ply").fetchall()
    assert [tuple(m[1:]) for m in moves] == [m for row in expected for m in row["moves"]]
    stored = set(con.execute("select position_key, fen, in_check from positions").fetchall())
    assert stored == set().union(*(row["positions"] for row in expected))
    assert summary.new_positions == len(stored)


def test_two_workers_store_what_they_count(home: Path, tmp_path: Path) -> None:
    """Two workers writing positions and moves side by side (staged, committed under the
    lock): the summary's games, plies and new positions are the rows stored, every position
    once, and a second file with the same games adds only duplicates."""
    rng = random.Random(3)
    path = tmp_path / "two.pgn"
    path.write_text("".join(generated_game(rng, n) for n in range(60)))
    copy = tmp_path / "copy.pgn"
    copy.write_text(path.read_text() + "\n")
    lake = Lake(home)
    first, second = run_step(INGEST, IngestJob((path, copy), IngestConfig(workers=2, chunk_games=5,
                                                                  flush_games=10, pool_from_mb=0)), lake)
    con = connect(lake)
    assert (first.games, first.plies, first.new_positions) == (
        con.execute("select count(*) from games").fetchone()[0],
        con.execute("select count(*) from moves").fetchone()[0],
        con.execute("select count(*) from positions").fetchone()[0])
    assert con.execute("select count(*) = count(distinct position_key) from positions"
                       ).fetchone() == (True,)
    assert (second.games, second.duplicates, second.plies, second.new_positions) == \
        (first.games, first.games, 0, 0)


def test_the_python_reader_writes_the_same_rows(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the compiled module, the Python reader and replay write the same rows: on
    broken tags, an illegal move, an unknown variant, a bad FEN, unclosed comments and
    variations, Chess960 by its aliases, a FICS ``wild/`` variant, Elo tags of 5 and 6 digits,
    and a second file of games already stored (duplicates). The variants' games as written
    by hand: ``wild/0`` replayed as chess (7 plies), "Fischer Random" as Chess960 (2 plies),
    a set-up game stopped by an illegal move as python-chess words it, a Result tag kept
    over a different marker, an unknown one filled from the marker, a Chess960 game known by
    its castling field (Shredder-FEN) alone (stored as chess960), a castling field with a stray ``-``, and a
    Chess960 game from the standard position (castling written king-takes-rook)."""
    files = [FIXTURES / "pgn" / name for name in (
        "quirks.pgn", "malformed.pgn", "chess960.pgn", "lasker_cp1252.pgn", "broken_games.pgn",
        "variants.pgn", "quirks.pgn.gz")]
    tables = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(chunks_module, "_pgn", None)
            monkeypatch.setattr(games_module, "_pgn", None)
        lake = Lake(tmp_path / str(compiled))
        summaries = run_step(INGEST, IngestJob(tuple(files), IngestConfig.tiny()), lake)
        con = connect(lake)
        assert summaries[-1].duplicates == summaries[0].games > 0
        variants = next(s.source_id for s in summaries if s.path.endswith("variants.pgn"))
        for name in ("positions", "games"):    # each row names its file
            assert con.execute(f"select count(*) from {name} anti join sources using "
                               "(source_id)").fetchone() == (0,)
        assert con.execute(
            "select event, variant, plies, white_elo, black_elo, result, error from games "
            "where source_id = ? order by game_index", [variants]).fetchall() == [
            ("FICS wild/0", "wild/0", 7, None, 99999, "1-0", None),
            ("Fischer Random", "chess960", 2, None, None, "*", None),
            ("Set-up, illegal", "standard", 4, None, None, "1-0",
             "ply 4: illegal san 'Qa4' in 4k3/5R2/8/8/8/8/8/6K1 w - - 4 3"),
            ("Tag and marker differ", "standard", 2, None, None, "1/2-1/2", None),
            ("Unknown result, marker known", "standard", 4, None, None, "0-1", None),
            ("Chess960 by its castling field", "chess960", 6, None, None, "*", None),
            ("Castling field KQkq-", "standard", 0, None, None, "*",
             "bad FEN tag 'r3k2r/8/8/8/8/8/8/R3K2R w KQkq- - 0 1': bad castling field"),
            ("Chess960 from the standard position", "chess960", 8, None, None, "*", None)]
        assert con.execute(                  # castling as python-chess writes it in Chess960
            "select list(uci order by ply) from moves join games using (game_id) "
            "where event like 'Chess960 %' and source_id = ? group by event order by event",
            [variants]).fetchall() == [
            (["f2f3", "f7f6", "g1f2", "g8f7", "f1h1", "f8h8"],),
            (["e2e4", "e7e5", "g1f3", "g8f6", "f1c4", "f8c5", "e1h1", "e8h8"],)]
        tables.append(([(s.games, s.plies, s.new_positions, s.errors, s.encoding, s.duplicates)
                        for s in summaries], *[
            con.execute(f"select * exclude ({skip}) from {name} order by all").fetchall()
            for name, skip in (("games", "source_id"), ("moves", "game_id"),
                               ("positions", "first_seen, source_id"),
                               ("ingest_errors", "recorded_at, source_id"))]))
    assert tables[0] == tables[1]


def test_a_game_longer_than_a_batch_is_written_in_parts(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay that fills its batch pauses; its moves and positions so far are written and
    it goes on: the same rows as in one part."""
    files = [FIXTURES / "pgn" / "quirks.pgn", FIXTURES / "pgn" / "malformed.pgn"]
    results = []
    for limit in (games_module.ROW_LIMIT, 16):
        monkeypatch.setattr(games_module, "ROW_LIMIT", limit)
        lake = Lake(tmp_path / str(limit))
        run_step(INGEST, IngestJob(tuple(files), IngestConfig.tiny()), lake)
        con = connect(lake)
        results.append([con.execute("select * from moves order by all").fetchall(),
                        con.execute("select * exclude (first_seen) from positions "
                                    "order by all").fetchall(), len(lake.parts("moves"))])
    assert results[0][:2] == results[1][:2]
    assert results[1][2] > results[0][2]   # the long games went in several parts


def reference_keys(bases: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    keys = []
    for base in bases:
        keys.append(occurrence_key(base, seen.get(base, 0)))
        seen[base] = seen.get(base, 0) + 1
    return keys


def test_repeats_are_numbered_across_spilled_runs() -> None:
    """Keys spilled to sorted runs on disk are still counted: 20,000 records of 3,000 games
    get the keys of a dict of every key, whatever the run size; the dict stays bounded."""
    rng = random.Random(7)
    pool = [f"{rng.getrandbits(128):032x}" for _ in range(3000)]
    bases = [rng.choice(pool) for _ in range(20000)]
    expected = reference_keys(bases)
    for run_keys in (1, 64, 1 << 20):
        with Occurrences(run_keys=run_keys) as occurrences:
            keys = []
            for start in range(0, len(bases), 500):
                keys += occurrences.keys(bases[start:start + 500])
                assert len(occurrences.seen) < run_keys + 500
            assert keys == expected
            assert occurrences.repeats == len(bases) - len(set(bases))
            folder = occurrences.spilled.folder
        assert folder is None or not Path(folder).exists()   # the runs are deleted


def test_bloom_false_positives_are_confirmed_in_the_runs() -> None:
    """A filter that answers yes for nearly every key still numbers exactly (the runs are
    the truth), and a filter sized for its keys answers yes to few keys it never saw."""
    rng = random.Random(8)
    unseen = [f"{rng.getrandbits(128):032x}" for _ in range(20000)]
    keys = [f"{rng.getrandbits(128):032x}" for _ in range(20000)]
    bloom = BloomFilter(len(keys))
    bloom.add(*split_keys(keys))
    assert bloom.contains(*split_keys(keys)).all()
    assert bloom.contains(*split_keys(unseen)).sum() < 20
    with Occurrences(run_keys=100) as occurrences:
        bases = keys[:300] + keys[:300] + unseen[:300]
        first = occurrences.keys(bases[:300])
        occurrences.spilled.filters[0].words[:] = np.iinfo(np.uint64).max   # all "maybe"
        assert first + occurrences.keys(bases[300:]) == reference_keys(bases)


def test_a_file_read_with_tiny_runs_gets_the_same_keys(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of repeated records numbers its repeats the same when every chunk's keys are
    spilled to disk (a repeat in a file is still numbered)."""
    path = FIXTURES / "repeats" / "engine_match_repeats.pgn"
    ids = []
    for run_keys in (keys_module.RUN_KEYS, 1):
        monkeypatch.setattr(keys_module, "RUN_KEYS", run_keys)
        lake = Lake(tmp_path / str(run_keys))
        [summary] = run_step(INGEST, IngestJob((path,), IngestConfig.tiny()), lake)
        ids.append(sorted(connect(lake).execute("select game_id from games").fetchall()))
        assert summary.repeats > 0
    assert ids[0] == ids[1] and len(ids[0]) == len(set(ids[0]))


def test_the_main_process_memory_is_bounded() -> None:
    """Numbering a million records keeps at most ``run_keys`` keys in memory plus a Bloom
    filter of about 20 bits a key (a dict of every key: about 100 bytes a key)."""
    rng = random.Random(9)
    with Occurrences(run_keys=1 << 14) as occurrences:
        for _ in range(100):
            occurrences.keys([f"{rng.getrandbits(128):032x}" for _ in range(10000)])
            assert len(occurrences.seen) < (1 << 14) + 10000
        bits = sum(bloom.words.nbytes * 8 for bloom in occurrences.spilled.filters)
        assert bits < 64 * 1_000_000   # a few bits a key, not the keys
        assert occurrences.spilled.total > 900_000


@pytest.mark.slow
def test_a_50_mb_line_stays_far_from_2_gb(tmp_path: Path) -> None:
    """A 50 MB single-line file (one legal game of 12.8 million plies, written in parts; a
    comment; a tag line): peak memory of the whole ingest stays under 1 GB (it took 2 GB
    and more before)."""
    shapes = {"moves": "1. e4 e5 " + "Nf3 Nc6 Ng1 Nb8 " * 3_200_000 + "1-0",
              "comment": "1. e4 {" + "x" * 50_000_000 + "} e5 1-0",
              "tag": '[Event "' + "y" * 50_000_000 + '"] 1. e4 e5 1-0'}
    for name, text in shapes.items():
        path = tmp_path / f"{name}.pgn"
        path.write_text(text)
        # VmHWM is the child's own peak: getrusage's ru_maxrss keeps the peak of the process
        # that exec'd it (pytest, over a gigabyte late in a full run) across exec
        code = ("import re\n"
                "from flows.ingest import INGEST, IngestJob\n"
                "from flows.step import run_step\n"
                "from pipelines.ingest import IngestConfig\n"
                "from warehouse import Lake\n"
                f"run_step(INGEST, IngestJob(({str(path)!r},), IngestConfig(workers=1)), "
                f"Lake({str(tmp_path / name)!r}))\n"
                "status = open('/proc/self/status').read()\n"
                "print(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        peak_mb = int(out.stdout.split()[-1]) / 1024
        assert peak_mb < 1000, (name, peak_mb)
        path.unlink()


@pytest.mark.parametrize("row_limit", [games_module.ROW_LIMIT, 4])
def test_a_compiled_chunk_reports_a_clash_with_a_stored_fen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_limit: int) -> None:
    """The compiled reader's keys are real Zobrist keys, so a clash is made by hand: the key
    of the position after 1. e4 stored before with another FEN. Ingesting a game through it
    keeps the stored FEN and records one collision naming the file, the game (index 0, line
    1), both FENs and the file's source id; also when the game is written in parts (a batch
    of 4 rows: the clash is met in the first part, not the last)."""
    monkeypatch.setattr(games_module, "ROW_LIMIT", row_limit)
    lake = Lake(tmp_path / "home")
    board = chess.Board()
    board.push_san("e4")
    key = chess.polyglot.zobrist_hash(board)
    other = "8/8/8/8/8/8/8/K6k w - -"
    lake.write("positions", [{"position_key": key, "fen": other, "source_id": "by-hand",
                               "first_seen": None, "in_check": False}])
    path = tmp_path / "one.pgn"
    path.write_text('[Event "x"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *\n')
    [summary] = run_step(INGEST, IngestJob((path,), IngestConfig.tiny()), lake)
    assert (len(lake.parts("moves")) > 1) == (row_limit == 4)
    assert summary.collisions == 1
    [source] = lake.read("sources").to_pylist()
    errors = [e for e in lake.read("ingest_errors").to_pylist() if e["kind"] == "collision"]
    assert [(e["source_id"], e["path"], e["game_index"], e["line"]) for e in errors] == [
        (source["source_id"], str(path), 0, 1)]
    assert f"{board.epd()!r} collides with {other!r}" in errors[0]["message"]
    assert connect(lake).execute("select fen from positions where position_key = ?",
                                 [key]).fetchall() == [(other,)]

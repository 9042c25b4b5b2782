"""Reading source files: text encodings, and the paths ingest must refuse (binary files,
folders it cannot list, FIFOs) with a one-line error naming them.
"""
from __future__ import annotations

import gzip
import io
import os
import threading
from pathlib import Path

import pytest
import zstandard

from flows.cli import main as cli_main
from flows.ingest import INGEST, IngestJob
from flows.step import run_step
from pipelines.ingest import IngestConfig, IngestError, discover_sources
from pipelines.ingest import sources as sources_module
from pipelines.ingest.sources import SourceFile, TextDecoder, TextLines
from warehouse import Lake, connect

PGN = Path(__file__).parent.parent / "fixtures" / "pgn"
CAPABLANCA = "Capablanca, José Raúl"


@pytest.fixture
def lake(home: Path) -> Lake:
    return Lake(home)


def lines_of(path: Path, block_bytes: int | None = None) -> tuple[list[str], str]:
    source = discover_sources([path])[0]
    lines = TextLines(source, block_bytes)
    return list(lines), lines.encoding


@pytest.mark.parametrize("name", ["capablanca_latin1.pgn", "capablanca_latin1.pgn.gz",
                                  "capablanca_latin1.pgn.zst"])
def test_latin1_pgn_keeps_its_accents(lake: Lake, name: str) -> None:
    """Latin-1 files (what the PGN standard specifies) used to lose their accents for good
    (`Jos\ufffd Ra\ufffdl`): plain, gzip and zstd, names are stored right and the encoding is
    recorded in sources."""
    [summary] = run_step(INGEST, IngestJob((PGN / name,), IngestConfig.tiny()), lake)
    assert (summary.games, summary.plies, summary.errors, summary.encoding) == (
        2, 68, 0, "latin-1")
    con = connect(lake)
    assert con.execute("select white, black, opening from games order by game_index").fetchall() \
        == [(CAPABLANCA, "Fonaroff", "Ruy López: Berlin Defense, Improved Steinitz Defense"),
            ("Réti, Richard", "Tartakower, Savielly", "Caro-Kann Defense: Tartakower Variation")]
    assert con.execute("select encoding from sources").fetchall() == [("latin-1",)]


def test_cp1252_pgn_reads_its_typographic_characters(lake: Lake) -> None:
    """A file with bytes 0x80-0x9F that cp1252 prints (an en dash in a tag, curly quotes and an
    ellipsis in a comment) is read as cp1252, not as Latin-1's invisible C1 controls."""
    [summary] = run_step(INGEST, IngestJob((PGN / "lasker_cp1252.pgn",), IngestConfig.tiny()), lake)
    assert (summary.games, summary.plies, summary.encoding) == (3, 21 + 35 + 47, "cp1252")
    con = connect(lake)
    assert con.execute("select event, white from games order by game_index").fetchall() == [
        ("Partie", "Réti, Richard"),
        ("Casual game – City of London Chess Club", "Lasker, Edward"),
        ("New York", CAPABLANCA)]


@pytest.mark.parametrize("block_bytes", [7, 64, 1 << 20])
def test_first_non_utf8_byte_late_in_the_stream_switches_there(block_bytes: int) -> None:
    """Streaming decides per block: bytes read as UTF-8 before the first byte that is not UTF-8
    (an ASCII prefix, several blocks long with small blocks) read the same as Latin-1, so the
    lines equal the whole file decoded as Latin-1, however the blocks fall (a .zst too)."""
    expected = (PGN / "capablanca_latin1.pgn").read_bytes().decode("latin-1")
    assert expected.index("é") > 7 * 10
    for name in ("capablanca_latin1.pgn", "capablanca_latin1.pgn.zst"):
        lines, encoding = lines_of(PGN / name, block_bytes)
        assert ("".join(lines), encoding) == (expected, "latin-1")
        assert lines[4] == f'[White "{CAPABLANCA}"]\n'


def test_utf8_with_and_without_bom_and_crlf() -> None:
    """UTF-8 stays UTF-8 (a BOM is dropped and recorded as utf-8-sig); CRLF and CR line ends
    split lines even when a block ends between CR and LF."""
    text = "[White \"Réti\"]\r\n\r\n1. e4 *\r\n"
    for raw, encoding in ((text.encode(), "utf-8"), (b"\xef\xbb\xbf" + text.encode(), "utf-8-sig")):
        for block_bytes in (1, 2, 3, 5, 100):
            binary = io.BytesIO(raw)
            lines = TextLines(SourceFile(Path("x.pgn"), "pgn", "none"), block_bytes)
            assert list(lines.lines_from(binary)) == ['[White "Réti"]\n', "\n", "1. e4 *\n"]
            assert lines.encoding == encoding
    lines = TextLines(SourceFile(Path("x.pgn"), "pgn", "none"), 4)
    assert list(lines.lines_from(io.BytesIO(b"a\rb\r\rc"))) == ["a\n", "b\n", "\n", "c"]


def test_mixed_file_reads_each_part_in_its_encoding() -> None:
    """A file whose UTF-8 part comes before a Latin-1 part (two files concatenated) keeps both
    parts right and says so: utf-8+latin-1."""
    decoder = TextDecoder()
    utf8, latin1 = "Réti ".encode(), "Maróczy".encode("latin-1")
    text = decoder.decode(utf8[:2]) + decoder.decode(utf8[2:] + latin1, final=True)
    assert (text, decoder.encoding) == ("Réti Maróczy", "utf-8+latin-1")


def test_binary_files_named_pgn_are_refused(lake: Lake, tmp_path: Path) -> None:
    """A binary file named .pgn used to become junk games: a gzip archive without its .gz
    suffix (NUL bytes), and text drowned in control characters, are refused before anything
    is written, with one line naming the file."""
    archive = tmp_path / "archive.pgn"
    archive.write_bytes(gzip.compress((PGN / "quirks.pgn").read_bytes()))
    noise = tmp_path / "noise.pgn"
    noise.write_bytes(b"[Event \x01\x02\x03\x1b\x1b\x1b\x7f\x7f\x7f\x7f\x7f]\n1. e4 *\n")
    zipped = tmp_path / "zipped.pgn.zst"
    zipped.write_bytes(zstandard.ZstdCompressor().compress(archive.read_bytes()))
    for path, reason in ((archive, "NUL bytes"), (noise, "11 control characters"),
                         (zipped, "NUL bytes")):
        with pytest.raises(IngestError, match=f"{path.name}.*binary data \\({reason}"):
            run_step(INGEST, IngestJob((path,), IngestConfig.tiny()), lake)
    assert not lake.parts("sources") and not lake.parts("games")


def test_binary_file_in_a_folder_fails_the_cli(home: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI turns the refusal into one line and exit status 2, before ingesting the good
    file next to it."""
    (tmp_path / "a_good.pgn").write_bytes((PGN / "quirks.pgn").read_bytes())
    (tmp_path / "b_bad.pgn").write_bytes(bytes(range(256)) * 4)
    assert cli_main(["ingest", "--no-prefect", "--workers", "1", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "b_bad.pgn" in err and "binary data" in err
    assert not Lake(home).parts("sources")


def test_unreadable_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sub-folder that cannot be listed used to be skipped with exit 0 and no message.
    As root, chmod 000 does not stop reading, so there the kernel's refusal (EACCES from
    scandir on that folder) is simulated; otherwise the folder is really made unreadable."""
    (tmp_path / "a.pgn").write_bytes((PGN / "quirks.pgn").read_bytes())
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.pgn").write_bytes((PGN / "quirks.pgn").read_bytes())
    if os.geteuid() == 0:
        real_scandir = os.scandir

        def scandir(path: str | os.PathLike[str] = ".") -> object:
            if Path(path) == locked:
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    else:
        locked.chmod(0)
    try:
        with pytest.raises(IngestError, match=f"cannot read folder '{locked}': Permission denied"):
            discover_sources([tmp_path])
    finally:
        locked.chmod(0o755)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO named .pgn used to hang ingest forever (open blocks until a writer comes): named
    or inside a folder, it is refused at once, naming it."""
    fifo = tmp_path / "games.pgn"
    os.mkfifo(fifo)
    result: list[BaseException | None] = []

    def discover(paths: list[Path]) -> None:
        try:
            discover_sources(paths)
            result.append(None)
        except IngestError as exc:
            result.append(exc)

    for paths in ([fifo], [tmp_path]):
        worker = threading.Thread(target=discover, args=(paths,), daemon=True)
        worker.start()
        worker.join(timeout=30)
        if worker.is_alive():  # unblock the reader so the thread ends
            with open(fifo, "wb"):
                pass
            pytest.fail("discover_sources blocked on a FIFO")
    assert [str(e) for e in result] == [
        f"cannot ingest '{fifo}': not a regular file (a FIFO)"] * 2


def test_refusals_keep_the_module_constants_sane() -> None:
    """The binary sniff reads one small block; the decoder's 8-bit table is Latin-1 outside
    0x80-0x9F and cp1252 inside it where cp1252 defines a character."""
    table = sources_module.EIGHT_BIT_TABLE
    assert table[0xE9] == "é" and table[0x93] == "“" and table[0x81] == "\x81"
    assert len(table) == 256 and sources_module.SNIFF_BYTES <= sources_module.READ_BYTES

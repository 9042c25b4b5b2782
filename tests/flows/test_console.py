"""Issue 32 §5: "a full disk prints three Rust panics before its one-line error". deltalake's
Rust writer panics (``thread 'tokio-rt-worker' panicked at ... Already shut down``) after it
reports ENOSPC, Rust's hook prints that on file descriptor 2, and the step retried the unit
twice, so three reports came before chesslab's line. The command line now relays stderr
without Rust panic reports and does not retry a full disk."""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flows.console import PanicStripper
from flows.step import is_disk_full

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "games.pgn.zst"
# What deltalake 1.6.6 printed for each attempt on a full disk (RUST_BACKTRACE=0 and =1).
REPORT = (b"\nthread 'tokio-rt-worker' (2673) panicked at /home/runner/.cargo/registry/src/"
          b"index.crates.io-1949cf8c6b5b557f/object_store-0.13.2/src/buffered.rs:369:41:\n"
          b"Already shut down\n"
          b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
# The same with a backtrace (a panic before chesslab set RUST_BACKTRACE=0 for itself).
TRACED = (b"\nthread 'tokio-rt-worker' panicked at src/buffered.rs:369:41:\nAlready shut down\n"
          b"stack backtrace:\n   0: std::panicking::begin_panic\n             at std/src/x.rs:1\n"
          b"note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose "
          b"backtrace.\n")


def strip(text: bytes, seed: int) -> bytes:
    """``text`` through a PanicStripper in random pieces (as a pipe delivers it)."""
    rng = random.Random(seed)
    out: list[bytes] = []
    stripper = PanicStripper(out.append)
    at = 0
    while at < len(text):
        size = rng.randint(1, 9)
        stripper.feed(text[at:at + size])
        at += size
    stripper.close()
    return b"".join(out)


@pytest.mark.parametrize("seed", range(40))
def test_panic_reports_are_dropped_and_the_rest_kept(seed: int) -> None:
    kept = (b"ingest: 1 files into /x\n", b"thread pool started\n", b"\n", b"\n",
            b"epoch 1: 50%\repoch 1: 100%\n", b"thread '", b"partial line at the end: thr")
    text = kept[0] + REPORT + kept[1] + kept[2] + REPORT + TRACED + kept[3] + kept[4] + \
        kept[5] + b"not a panic\n" + kept[6]
    assert strip(text, seed) == (b"".join(kept[:5]) + b"thread 'not a panic\n" + kept[6])


def test_a_full_disk_is_recognised_in_deltalake_s_message() -> None:
    assert is_disk_full(OSError(28, "No space left on device"))
    assert is_disk_full(ValueError(
        "table 'positions': commit failed: Failed to parse parquet: External: Generic "
        "LocalFileSystem error: Unable to copy data to file: No space left on device "
        "(os error 28)"))
    assert not is_disk_full(ValueError("table 'positions': unknown column 'x'"))


def small_filesystem_command(folder: Path) -> list[str] | None:
    """A command prefix that runs its argument with a 1 MiB tmpfs mounted on ``folder`` (in
    a private mount namespace), or None when this machine does not allow it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    flags = ["--mount"] if os.geteuid() == 0 else ["--mount", "--map-root-user"]
    probe = subprocess.run([unshare, *flags, "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs "
                            f"'{folder}'"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return None
    return [unshare, *flags, "sh", "-c", f"mount -t tmpfs -o size=1m tmpfs '{folder}' && "
            f"exec \"$@\"", "sh"]


@pytest.mark.parametrize("runner", [
    "--no-prefect", pytest.param("prefect", marks=pytest.mark.slow)])   # 37 s: its server
def test_a_full_disk_is_one_line(tmp_path: Path, runner: str) -> None:
    """Ingesting the sample corpus into a home on a 1 MiB filesystem: exit 2 and one line
    naming the full disk, after the progress lines and the new warehouse it made (part of
    the games are in it); no panic report, no retry."""
    folder = tmp_path / "small"
    folder.mkdir()
    prefix = small_filesystem_command(folder)
    if prefix is None:
        pytest.skip("cannot mount a small tmpfs here (no unshare or no mount namespaces)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUST_BACKTRACE": "1",
           "PREFECT_HOME": str(tmp_path / "prefect")}
    flags = ["--no-prefect"] if runner == "--no-prefect" else ["--prefect"]
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "flows.cli", "--home", str(folder / "home"), "ingest",
         *flags, "--workers", "1", str(SAMPLE)],
        capture_output=True, env=env, timeout=300, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    lines = err.splitlines()
    if runner == "prefect":
        # the temporary server keeps its database in the home (one server per home), so the
        # full disk stops it before any game: one line with the reason its log gives
        assert len(lines) == 1, err
        assert re.match(r"chesslab ingest: error: the temporary Prefect server did not "
                        r"start: it exited with status \d+: sqlite3.OperationalError: "
                        r"database or disk is full \(log: ", lines[0]), err
        assert lines[0].endswith("; run the command without --prefect (in this process), or "
                                 "set PREFECT_API_URL to a running Prefect server ('prefect "
                                 "server start')"), err
    else:
        assert lines[-2] == f"chesslab: created a new warehouse at {folder / 'home'}"
        assert lines[-1].startswith("chesslab ingest: error: ") and \
            lines[-1].endswith("No space left on device (os error 28)"), err
    assert "panicked" not in err and "RUST_BACKTRACE" not in err and "retrying" not in err
    assert all(line.startswith(("chesslab", "ingest: ")) for line in lines), err


LINES = """\
import sys
from flows.cli import run_command
from flows.console import PanicFilter
from flows.step import print_progress
run_command(["--home", sys.argv[1], "sql", "select 1"])  # the command line's own setup
print(f"flags {sys.stdout.line_buffering} {sys.stdout.write_through}")
with PanicFilter():
    for i in range(300):
        print_progress(f"stderr line {i} " + "e" * 60)
        print(f"stdout line {i} " + "o" * 60)
"""


def test_stdout_and_relayed_stderr_lines_stay_whole_in_one_file(tmp_path: Path) -> None:
    """Issue 49 §3 ("no glued lines"): with PYTHONUNBUFFERED=1, ``print`` wrote its text and
    its newline apart, and a progress line relayed through the PanicFilter landed between them
    in a log of both streams (``... sha256 36b7...train: nnue@1 exported ...``). After the
    command line's setup every line of both streams is whole."""
    log = tmp_path / "both.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        subprocess.run([sys.executable, "-c", LINES, str(tmp_path / "home")], cwd=ROOT,
                       env=env, stdout=out, stderr=subprocess.STDOUT, check=True, timeout=300)
    lines = log.read_text().splitlines()
    assert "flags True False" in lines     # a line at a time, each in one write
    ours = [line for line in lines if " line " in line]
    assert len(ours) == 600, lines[-5:]
    glued = [line for line in ours if not re.fullmatch(r"(stderr line \d+ e+|stdout line \d+ o+)",
                                                          line)]
    assert not glued, glued[:3]

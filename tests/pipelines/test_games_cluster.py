"""Games on a Dask cluster (issue 36): a scheduler and worker processes started here with
Dask's own command line (``dask scheduler``, ``dask worker``), as a user starts them on other
machines; games between Stockfish at a few hundred nodes and the own alpha-beta engine, both
deterministic at fixed nodes, so a game played on any worker is the same game."""
from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pipelines.games import GamesOptions
from pipelines.games.batch import BatchResult, GameBatch, WorkerRefused, check_worker
from pipelines.processes import orphan_safe
from pipelines.sprt import pentanomial
from pipelines.tournament import TournamentConfig, TournamentError, run_tournament
from pipelines.tournament.openings import Opening
from pipelines.tournament.runner import Tournament, TournamentSummary
from pipelines.tournament.store import finished_games
from warehouse import Lake, connect

FIXTURES = Path(__file__).parents[1] / "fixtures"
SF = "stockfish?Threads=1&Hash=16#sf"
AB = "alphabeta:eval=hce-simple,hash=1#ab"
DASK = str(Path(sys.executable).parent / "dask")
ROOT = str(Path(__file__).parents[2])


@dataclass
class DaskCluster:
    """A scheduler and workers as processes of their own (``--no-nanny``: a killed worker
    stays dead)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def add_worker(self, name: str, **env: str) -> subprocess.Popen[bytes]:
        """A worker of one thread named ``name``, with ``env`` added to its environment."""
        worker = dask_process("worker", self.address, "--nthreads", "1", "--no-nanny",
                              "--name", name, "--no-dashboard",
                              "--local-directory", os.environ.get("TMPDIR", "/tmp"), **env)
        self.workers.append(worker)
        return worker

    def wait_for(self, count: int, timeout_s: float = 120) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=timeout_s)

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                process.kill()
            process.wait()


def dask_env() -> dict[str, str]:
    """Workers import this checkout's chesslab."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": ROOT + (os.pathsep + path if path else "")}


def dask_process(*args: str, **env: str) -> subprocess.Popen[bytes]:
    """``dask <args>``, Dask's own command line, quiet; it gets SIGKILL when the thread that
    started it ends, so a test run killed (SIGKILL, or a hung run's SIGTERM) leaves none
    behind to spend the cores."""
    return subprocess.Popen(orphan_safe([DASK, *args]), env={**dask_env(), **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_cluster(workers: int) -> DaskCluster:
    port = free_port()
    scheduler = dask_process("scheduler", "--host", "127.0.0.1", "--port", str(port),
                             "--no-dashboard")
    cluster = DaskCluster(f"tcp://127.0.0.1:{port}", scheduler)
    try:
        for number in range(workers):
            cluster.add_worker(f"w{number}")
        cluster.wait_for(workers)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[DaskCluster]:
    """Two workers of one game each, shared by the tests that kill nothing."""
    started = start_cluster(2)
    try:
        yield started
    finally:
        started.stop()


def match(address: str | None, **overrides: object) -> TournamentConfig:
    values: dict[str, object] = dict(engines=(SF, AB), nodes=300, rounds=3, concurrency=1,
                                     openings=str(FIXTURES / "openings" / "two_games.pgn"),
                                     runner=GamesOptions(cluster=address))
    values.update(overrides)
    return TournamentConfig.tiny(**values)  # type: ignore[arg-type]


def stored(home: Path, tournament_id: str) -> list[tuple[str, str]]:
    """Every stored row of the tournament (the table itself, not the view): (key, result)."""
    table = Lake(home).read("tournament_games", columns=["tournament_id", "game_key", "result"])
    return sorted((key, result) for tid, key, result in zip(
        *(table.column(c).to_pylist() for c in table.column_names), strict=True)
        if tid == tournament_id)


def test_tournament_on_a_cluster_stores_the_schedule(home: Path, tmp_path: Path,
                                                     stockfish_path: str,
                                                     cluster: DaskCluster) -> None:
    """Every slot of the schedule once, the same games as on this machine, each played by
    one of the cluster's workers (recorded with it)."""
    config = match(cluster.address)
    summary = run_tournament(config, Lake(home))
    schedule = sorted(slot.key for slot in Tournament(config, Lake(home)).slots)
    rows = stored(home, summary.tournament_id)
    assert [key for key, _ in rows] == schedule
    assert (summary.played, summary.planned) == (6, 6)
    workers = {row["worker"] for row in finished_games(Lake(home), summary.tournament_id)}
    assert workers and all(w.rsplit(":", 1)[1].isdigit() for w in workers)
    assert os.getpid() not in {int(w.rsplit(":", 1)[1]) for w in workers}

    local = run_tournament(match(None), Lake(tmp_path / "local"))
    assert local.tournament_id == summary.tournament_id      # where it ran is not identity
    assert stored(tmp_path / "local", local.tournament_id) == rows


def pair_scores(home: Path, tournament_id: str, first: str) -> dict[str, float]:
    """Each complete pair's points for ``first`` (from the stored games)."""
    scores: dict[str, list[float]] = {}
    for row in finished_games(Lake(home), tournament_id):
        score = row["white_score"] if row["white"] == first else 1 - row["white_score"]
        scores.setdefault(f"{row['pairing']}:{row['round']}", []).append(score)
    return {key: sum(s) for key, s in scores.items() if len(s) == 2}


def test_sprt_on_a_cluster_stops_early_with_the_local_counts(home: Path, tmp_path: Path,
                                                             stockfish_path: str,
                                                             cluster: DaskCluster) -> None:
    """Stockfish against the alpha-beta engine at the same nodes (a large, known difference)
    stops after a few of the 20 planned pairs (logistic elo1 = 300, alpha = beta = 0.2: three
    won pairs, LLR 1.59 > log 4); the cluster's pentanomial counts are those of its stored
    games, each pair as it was played here, and it stops within one batch per worker of
    where the games played here cross."""
    sprt = dict(rounds=20, sprt_elo0=0, sprt_elo1=300, sprt_alpha=0.2, sprt_beta=0.2,
                sprt_model="logistic")
    summary = run_tournament(match(cluster.address, **sprt), Lake(home))
    local = run_tournament(match(None, **sprt), Lake(tmp_path / "local"))
    assert summary.status == local.status == "sprt_stopped"
    assert summary.sprt is not None and local.sprt is not None
    assert summary.sprt.decision == local.sprt.decision == "H1"
    on_cluster = pair_scores(home, summary.tournament_id, "sf")
    here = pair_scores(tmp_path / "local", local.tournament_id, "sf")
    assert list(summary.sprt.counts) == pentanomial(list(on_cluster.values()))
    assert summary.played == 2 * len(on_cluster) < summary.planned
    assert all(here[key] == score for key, score in on_cluster.items() if key in here)
    assert len(here) <= len(on_cluster) <= len(here) + 2      # two workers, a pair a batch
    assert len(stored(home, summary.tournament_id)) == summary.played


def kill_a_playing_worker(cluster: DaskCluster) -> tuple[str, int]:
    """Kill (SIGKILL) a worker of the cluster while it plays a batch: its name as the games
    runner gives it (``host:pid``) and the index of that batch."""
    from distributed import Client

    with Client(cluster.address, timeout=30, set_as_default=False) as client:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            playing = {address: keys for address, keys in client.processing().items()
                       if any(str(k).startswith("games-") for k in keys)}
            if playing:
                break
            time.sleep(0.05)
        address, keys = next(iter(playing.items()))
        number = int(client.scheduler_info()["workers"][address]["name"][1:])     # wN
    victim = cluster.workers[number]
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    batch = next(int(str(k).split("-")[1]) for k in keys if str(k).startswith("games-"))
    return f"{socket.gethostname()}:{victim.pid}", batch


def events(home: Path, tournament_id: str, *kinds: str) -> list[tuple[str, str]]:
    """(event, detail) of the tournament's events of these kinds, in the order recorded."""
    rows = Lake(home).read("tournament_events").to_pylist()
    return [(r["event"], r["detail"]) for r in sorted(rows, key=lambda r: r["recorded_at"])
            if r["tournament_id"] == tournament_id and r["event"] in kinds]


def test_killed_worker_loses_only_its_batch(home: Path, stockfish_path: str) -> None:
    """A worker killed (SIGKILL) while it plays a batch: that batch is played again by the
    other worker; the stored games are the schedule's, none twice. And the run says so
    (issue 48: it said nothing, and its "workers:" line still listed the dead worker): a
    ``worker_lost`` event naming the killed worker and the games it was playing, a
    ``batch_replayed`` event naming those games and the worker that played them again, the
    same lines on the console, the summary's lost worker, and "(lost)" in the workers line."""
    local_cluster = start_cluster(2)
    killed: list[tuple[str, int]] = []
    lines: list[str] = []

    def kill_one(line: str) -> None:
        lines.append(line)
        if not killed and " ab " in line:
            killed.append(kill_a_playing_worker(local_cluster))

    try:
        config = match(local_cluster.address, rounds=6, progress=True, rating_interval=4)
        summary = run_tournament(config, Lake(home), progress=kill_one)
    finally:
        local_cluster.stop()
    assert killed
    victim, batch = killed[0]
    rows = stored(home, summary.tournament_id)
    keys = [key for key, _ in rows]
    assert sorted(Counter(keys).values()) == [1] * 12
    assert keys == sorted(slot.key for slot in Tournament(config, Lake(home)).slots)
    assert summary.played == 12
    games = f"batch {batch} (games 0:{batch}:0, 0:{batch}:1)"
    again = {row["worker"] for row in finished_games(Lake(home), summary.tournament_id)
             if row["round"] == batch}
    assert len(again) == 1 and victim not in again
    lost = f"worker {victim} (tcp://127.0.0.1:"
    replayed = f"{games} lost with worker {victim}, played again by worker {again.pop()}"
    found = events(home, summary.tournament_id, "worker_lost", "batch_replayed")
    assert [event for event, _ in found] == ["worker_lost", "batch_replayed"]
    assert found[0][1].startswith(lost) and found[0][1].endswith(
        f") lost; {games} to be played again")
    assert found[1][1] == replayed
    assert [line.split("] ", 1)[1] for line in lines if " lost" in line
            and "workers:" not in line] == [found[0][1], replayed]
    assert (summary.lost_workers, summary.replayed_batches) == ([victim], 1)
    workers = [line for line in lines if "; workers: " in line][-1]
    assert f"{victim} " in workers and workers.count("(lost)") == 1
    assert workers.split(f"{victim} ")[1].split(",")[0].endswith("(lost)")
    status = connect(Lake(home)).execute(
        "select status from tournament_status where tournament_id = ?",
        [summary.tournament_id]).fetchone()
    assert status == ("finished",)        # incidents are no progress events


def stub_players(tmp_path: Path) -> str:
    """An engines file of two players, ``a`` and ``b``, both the stub engine (it answers
    ``stub-none``, or ``$STUB_ENGINE_ID``)."""
    path = tmp_path / "stubs.toml"
    stub = FIXTURES / "engines" / "stub_engine.py"
    path.write_text("".join(f'[players.{name}]\ncommand = ["{sys.executable}", "{stub}"]\n'
                            for name in "ab"))
    return str(path)


def test_worker_joining_late_with_another_build_refuses_and_its_batch_goes_elsewhere(
        home: Path, tmp_path: Path) -> None:
    """``run_batches``' own refusal (issue 48: removing its resubmission failed no test): a
    worker that joins after the start-up checks, where the engine answers with another
    name (another build), refuses the batch it is handed; the batch is sent again to the
    checked worker, and every game of the schedule is stored once, all played there."""
    local_cluster = start_cluster(1)
    lines: list[str] = []

    def join_late(line: str) -> None:
        lines.append(line)
        if len(local_cluster.workers) == 1:         # the first game: a worker joins
            local_cluster.add_worker("w1", STUB_ENGINE_ID="stub-other")
            local_cluster.wait_for(2)

    config = match(local_cluster.address, engines=("a", "b"), engines_file=stub_players(
        tmp_path), nodes=1, rounds=4, max_plies=12, progress=True, rating_interval=0)
    try:
        summary = run_tournament(config, Lake(home), progress=join_late)
    finally:
        local_cluster.stop()
    refusals = [line for line in lines if "refuses" in line]
    assert len(refusals) == 1 and refusals[0].endswith(
        "is 'stub-other' here, the client runs 'stub-none'")
    assert refusals[0].startswith(f"worker {socket.gethostname()}:"
                                  f"{local_cluster.workers[1].pid} refuses: ")
    rows = stored(home, summary.tournament_id)
    assert [key for key, _ in rows] == sorted(
        slot.key for slot in Tournament(config, Lake(home)).slots)
    assert summary.played == summary.planned == 8
    workers = {row["worker"] for row in finished_games(Lake(home), summary.tournament_id)}
    assert workers == {f"{socket.gethostname()}:{local_cluster.workers[0].pid}"}


def test_mismatched_build_is_refused_with_its_reason(home: Path, stockfish_path: str,
                                                     cluster: DaskCluster,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The client runs another own-engine build than the workers: every worker refuses with
    a line naming itself, the player and both builds; nothing is written."""
    import pipelines.games.batch as batch

    monkeypatch.setattr(batch, "own_version", lambda: "0.0.0+rev.elsewhere")
    with pytest.raises(TournamentError, match=r"refuses: ab is '.*\+rev\.[0-9a-f]+' here, "
                                              r"the client runs '0.0.0\+rev.elsewhere'"):
        run_tournament(match(cluster.address), Lake(home))
    assert not Lake(home).parts("tournament_games")
    assert not Lake(home).parts("tournaments")


#: A process that starts a cluster as the tests do, prints its processes' ids and waits.
STARTS_A_CLUSTER = """
import threading
import time
from tests.pipelines.test_games_cluster import start_cluster
cluster = start_cluster(1)
print(*(process.pid for process in [cluster.scheduler, *cluster.workers]), flush=True)
time.sleep(600)
"""


def test_cluster_processes_die_with_the_process_that_started_them() -> None:
    """A test run killed (SIGKILL) leaves no scheduler or worker running: they get the
    kernel's parent-death signal (``pipelines.processes.orphan_safe``)."""
    starter = subprocess.Popen([sys.executable, "-c", STARTS_A_CLUSTER], cwd=ROOT,
                               env=dask_env(), stdout=subprocess.PIPE, text=True)
    assert starter.stdout is not None
    pids: list[int] = []
    try:
        line = starter.stdout.readline()
        assert line.strip(), f"no cluster started (exit status {starter.wait()})"
        pids = [int(pid) for pid in line.split()]
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 60
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in pids if alive(pid)] == []
    finally:
        starter.kill()
        starter.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_worker_without_the_program_refuses(tmp_path: Path) -> None:
    """A worker where an external engine's program is missing refuses the batch, one line."""
    from engines.registry import EngineSpec

    spec = EngineSpec(name="gone", command=(str(tmp_path / "no-such-engine"),))
    config = TournamentConfig.tiny()
    batch = GameBatch("t", 0, config.limits, config.adjudication, (spec,), (), {0: Opening()},
                      {"gone": "x"})
    with pytest.raises(WorkerRefused, match=r"refuses: gone: no program .*no-such-engine$"):
        check_worker(batch)


def test_no_scheduler_is_one_line(home: Path, stockfish_path: str) -> None:
    """--cluster at an address where nothing listens: one line, nothing written."""
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(TournamentError, match=f"no Dask scheduler at {address}"):
        run_tournament(match(address), Lake(home))
    assert not Lake(home).parts("tournaments")


@pytest.mark.slow
def test_lost_scheduler_ends_the_run_and_the_next_run_resumes(home: Path,
                                                              stockfish_path: str) -> None:
    """The scheduler killed after the first batch: the run ends with one line, the finished
    games stay stored, and the same tournament on a new cluster plays only the others."""
    first = start_cluster(1)
    done: list[str] = []

    def kill_scheduler(line: str) -> None:
        if not done:
            first.scheduler.kill()
            done.append(line)

    config = match(first.address, rounds=4, progress=True, rating_interval=0)
    try:
        with pytest.raises(TournamentError, match="lost the Dask scheduler"):
            run_tournament(config, Lake(home), progress=kill_scheduler)
    finally:
        first.stop()
    tournament_id = Tournament(config, Lake(home)).id
    kept = stored(home, tournament_id)
    assert 2 <= len(kept) < 8
    second = start_cluster(1)
    try:
        summary = run_tournament(match(second.address, rounds=4), Lake(home))
    finally:
        second.stop()
    assert (summary.already_done, summary.already_done + summary.played) == (len(kept), 8)
    assert len(stored(home, tournament_id)) == 8


@pytest.mark.timeout(60)
def test_stopped_batch_stops_its_engines(stockfish_path: str) -> None:
    """A batch told to stop mid-game (an SPRT's verdict, Ctrl-C on the client: the run's stop
    event) returns unfinished within seconds, its engine processes gone (killed, their exits
    given five seconds)."""
    from pipelines.games.batch import client_builds, play_batch
    from pipelines.tournament.runner import resolve_players

    config = TournamentConfig.tiny(nodes=5_000_000, move_timeout_s=60.0, rounds=1)
    players = tuple(resolve_players(config))
    tournament = Tournament(config, Lake(Path("/nonexistent")))
    batch = GameBatch("t", 0, config.limits, config.adjudication, players,
                      tuple(tournament.slots), {0: Opening()}, client_builds(players))
    asked_at: list[float] = []
    children: set[int] = set()
    before = descendants(os.getpid())      # a cluster's processes a test started, say

    def stop() -> bool:
        children.update(descendants(os.getpid()) - before)
        asked_at.append(time.monotonic())
        return asked_at[-1] - asked_at[0] > 2.0

    result = play_batch(batch, stop)
    assert result.stopped and not result.records
    assert time.monotonic() - asked_at[0] < 10
    assert children
    for _ in range(50):                  # killed engines finish exiting within seconds
        if not [pid for pid in children if alive(pid)]:
            break
        time.sleep(0.1)
    assert not [pid for pid in children if alive(pid)]


def test_engines_start_once_per_thread_and_go_when_released(stockfish_path: str) -> None:
    """A thread's engines outlive its batch: its next batch plays on the same engine
    processes (started once per worker thread, as a lane of the old one-machine runner), the
    games the same as fresh engines play; releasing them (the end of a run) stops them."""
    from pipelines.games.batch import play_batch, release_engines
    from pipelines.tournament.runner import resolve_players

    config = TournamentConfig.tiny(nodes=500, rounds=2, max_plies=30, openings=str(
        FIXTURES / "openings" / "two_games.pgn"))
    tournament = Tournament(config, Lake(Path("/nonexistent")))
    first, second = tournament.batches(tournament.slots)
    before = descendants(os.getpid())
    one = play_batch(first)
    engines = descendants(os.getpid()) - before
    assert len(engines) == 2 and all(alive(pid) for pid in engines)
    two = play_batch(second)
    assert descendants(os.getpid()) - before == engines          # the same two processes
    assert release_engines() == 2
    for _ in range(50):
        if not [pid for pid in engines if alive(pid)]:
            break
        time.sleep(0.1)
    assert not [pid for pid in engines if alive(pid)]
    fresh = play_batch(second)                                   # new engines: same games
    release_engines()
    moves = [[m.move for m in r.records[i].moves] for r in (two, fresh) for i in (0, 1)]
    assert moves[:2] == moves[2:] and len(one.records) == len(two.records) == 2
    assert tuple(resolve_players(config)) == first.players


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_datagen_on_a_cluster_writes_pgn_batches_and_resumes(home: Path, stockfish_path: str,
                                                            cluster: DaskCluster) -> None:
    """``chesslab datagen --format pgn``'s step on the cluster: a gzip PGN file per batch
    holding its game numbers, each game annotated and the same game the standalone script's
    function plays here; a rerun plays nothing; the files are ingested."""
    import gzip

    import chess.pgn

    from flows.datagen import datagen
    from flows.step import LocalRunner
    from pipelines.datagen.games import UciSearcher, play_game, to_pgn
    from pipelines.datagen.run import DatagenConfig

    config = DatagenConfig(engine=stockfish_path, depth=3, games=5, batch_games=2,
                           max_plies=60, format="pgn",
                           runner=GamesOptions(cluster=cluster.address))
    result = datagen(LocalRunner(show_progress=False), config, Lake(home))
    assert (result.games.played_games, result.games.planned) == (5, 3)
    games = []
    for path in result.games.files:
        with gzip.open(path, "rt") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                games.append(game)
    assert [int(g.headers["Round"]) for g in games] == [0, 1, 2, 3, 4]
    assert all(sum("[%eval" in node.comment for node in g.mainline()) >= 2 for g in games)
    searcher = UciSearcher(stockfish_path)
    try:
        here = to_pgn(play_game(searcher, 3, config.settings), games[3].headers["White"],
                      config.settings)
    finally:
        searcher.close()
    assert [m.uci() for m in here.mainline_moves()] == \
        [m.uci() for m in games[3].mainline_moves()]
    assert result.ingested is not None and sum(s.games for s in result.ingested) == 5
    again = datagen(LocalRunner(show_progress=False), config, Lake(home))
    assert (again.games.played_games, again.games.already_done) == (0, 3)


def test_clock_scaled_by_the_workers_bench_speed(home: Path, stockfish_path: str) -> None:
    """``--clock-reference-nps``: a worker twice as slow as the reference plays with twice the
    time (10+0.1 becomes 20+0.2; a move time doubles), and each game records its factor:
    the reference over the worker's ``chesslab bench`` nodes/s."""
    from pipelines.games.batch import measured_nps
    from pipelines.games.limits import TimeControl

    tc = TournamentConfig.tiny(nodes=None, tc="40/10+0.1").limits.scaled(2.0).tc
    assert tc == TimeControl.parse("40/20+0.2")
    assert TournamentConfig.tiny(nodes=None, movetime_ms=50).limits.scaled(2.0).movetime_ms \
        == 100
    assert TournamentConfig.tiny().limits.scaled(None) == TournamentConfig.tiny().limits
    config = TournamentConfig.tiny(nodes=None, tc="2+0.02", max_plies=30, concurrency=1,
                                   runner=GamesOptions(clock_reference_nps=1_000_000))
    summary = run_tournament(config, Lake(home))
    scales = {row["clock_scale"] for row in finished_games(Lake(home), summary.tournament_id)}
    assert scales == {1_000_000 / measured_nps()}   # one worker in this process: its bench


def test_selfplay_on_a_cluster_is_the_same_run(home: Path, tmp_path: Path,
                                               cluster: DaskCluster) -> None:
    """``selfplay --cluster``: the cluster's workers play the batches, the client writes and
    ingests them; the same run id, games and batch files as the run in this process."""
    import dataclasses

    from flows.selfplay import SELFPLAY
    from flows.step import LocalRunner
    from pipelines.selfplay import SelfplayConfig

    tiny = SelfplayConfig.tiny()
    remote = dataclasses.replace(tiny, runner=GamesOptions(cluster=cluster.address))
    summary = LocalRunner(show_progress=False).run(SELFPLAY, remote, Lake(home))
    local = LocalRunner(show_progress=False).run(SELFPLAY, tiny, Lake(tmp_path / "local"))
    assert summary.run_id == local.run_id
    assert (summary.games, summary.plies, summary.batches_ingested) == \
        (local.games, local.plies, local.batches_ingested) == (4, 577, 2)
    files = sorted(Path(summary.folder).glob("batch-*.pgn"))
    assert [f.read_text() for f in files] == \
        [f.read_text() for f in sorted(Path(local.folder).glob("batch-*.pgn"))]


def test_lmr_data_games_on_a_cluster_log_the_same_decisions(home: Path, tmp_path: Path,
                                                            cluster: DaskCluster) -> None:
    """``lmr-data --cluster``: its logged games played by the cluster's workers, stored here:
    the same data run and decisions as the run in this process."""
    from flows.lmr_data import lmr_data
    from flows.step import LocalRunner
    from pipelines.lmr.config import LmrDataConfig

    config = LmrDataConfig(games=2, nodes=2000, log_rate=0.02, max_plies=14, random_plies=4,
                           hash_mb=1, label_chunk=16, paper_range=False)   # test_lmr's tiny
    remote = lmr_data(LocalRunner(show_progress=False), config, Lake(home),
                      GamesOptions(cluster=cluster.address))
    local = lmr_data(LocalRunner(show_progress=False), config, Lake(tmp_path / "local"))
    assert remote.data_run == local.data_run
    assert (remote.games_played, remote.logged, remote.labelled) == \
        (local.games_played, local.logged, local.labelled)
    assert remote.games_played == 2 and remote.logged > 0


def test_tournament_command_on_a_cluster(home: Path, stockfish_path: str,
                                         cluster: DaskCluster,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``chesslab tournament ... --cluster ADDRESS --no-prefect``: ``--cluster`` is the games
    runner's (the command's own step runs here), the games are the cluster workers'."""
    from flows.cli import main

    code = main(["--home", str(home), "tournament", SF, AB, "--nodes", "300", "--rounds", "1",
                 "--max-plies", "200", "--cluster", cluster.address, "--no-prefect",
                 "--no-rate", "--no-progress"])
    assert code == 0
    assert "2/2 games (2 played now)" in capsys.readouterr().out
    rows = Lake(home).read("tournament_games", columns=["worker"]).column("worker").to_pylist()
    assert len(rows) == 2 and os.getpid() not in {int(w.rsplit(":", 1)[1]) for w in rows}


def played_nets(address: str) -> int:
    """Nets the cluster's workers loaded to play selfplay-train games (the PUCT self-play
    module's per-process cache: only a game played in that process fills it)."""
    from distributed import Client

    def loaded() -> int:
        module = sys.modules.get("pipelines.puct.selfplay")
        return len(getattr(module, "_NETS", {}))

    with Client(address, timeout=30, set_as_default=False) as client:
        return sum(client.run(loaded).values())


def selfplay_rows(lake: Lake) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    from warehouse import connect

    con = connect(lake)
    try:
        games = con.sql("select game, start_fen, result, termination, plies, samples "
                        "from selfplay_games order by game").fetchall()
        samples = con.sql("select game, ply, fen, played, visits, outcome from "
                          "selfplay_samples order by game, ply").fetchall()
    finally:
        con.close()
    return games, samples


def test_selfplay_train_games_on_a_cluster_are_the_same_games(home: Path, tmp_path: Path,
                                                              cluster: DaskCluster) -> None:
    """``selfplay-train --cluster``: a round's games played by the cluster's workers (as
    ``selfplay``'s batches are), their records stored here: the same run id, games and samples
    as the round played in this process."""
    import dataclasses

    from flows.selfplay_train import GAMES, RoundWork
    from flows.step import LocalRunner
    from pipelines.puct.config import preset_config
    from pipelines.puct.loop import playing_model

    tiny = preset_config("tiny", rounds=1, games=2, max_plies=20)
    remote = dataclasses.replace(tiny, runner=GamesOptions(cluster=cluster.address))
    assert remote.run_id == tiny.run_id
    before = played_nets(cluster.address)
    lakes = {"remote": Lake(home), "local": Lake(tmp_path / "local")}
    for config, lake in ((remote, lakes["remote"]), (tiny, lakes["local"])):
        work = RoundWork(config, 1, playing_model(lake, config.run_id, 1))
        assert LocalRunner(show_progress=False).run(GAMES, work, lake) == 2
    assert played_nets(cluster.address) > before       # the workers played them
    games, samples = selfplay_rows(lakes["remote"])
    assert [g[0] for g in games] == [0, 1] and len(samples) == sum(g[5] for g in games) > 0
    assert (games, samples) == selfplay_rows(lakes["local"])


def test_selfplay_train_worker_without_the_net_or_build_refuses(tmp_path: Path) -> None:
    """A worker missing the round's net file, or running another chesslab build, refuses the
    game with the reason instead of playing it with another net or engine."""
    import dataclasses

    from engines.registry import own_version
    from pipelines.puct.config import preset_config
    from pipelines.puct.loop import RoundModel, check_game_worker, game_work

    config = preset_config("tiny")
    net = tmp_path / "policy_value-1.pt"
    work = game_work(config, 2, 0, RoundModel("policy_value@1", str(net)))
    assert work.build == own_version()
    with pytest.raises(WorkerRefused, match=r"refuses: policy_value@1: no model file .*"
                                            r"policy_value-1\.pt"):
        check_game_worker(work)
    net.write_bytes(b"net")
    assert check_game_worker(work)           # the worker's name
    with pytest.raises(WorkerRefused, match=r"is '.*' here, the client runs '0\.0\.0\+rev\.x'"):
        check_game_worker(dataclasses.replace(work, build="0.0.0+rev.x"))


def test_selfplay_train_command_takes_the_games_runner_options() -> None:
    """``chesslab selfplay-train --cluster ADDRESS`` (or ``--workers N``) reaches the games
    runner; neither changes the run id."""
    from flows.cli import build_parser
    from flows.commands.selfplay_train import config_from

    parser = build_parser("selfplay-train")
    remote = config_from(parser.parse_args(["selfplay-train", "--cluster", "tcp://h:8786"]))
    local = config_from(parser.parse_args(["selfplay-train", "--workers", "3"]))
    plain = config_from(parser.parse_args(["selfplay-train"]))
    assert remote.games_options() == GamesOptions(cluster="tcp://h:8786")
    assert local.games_options() == GamesOptions(workers=3, games_per_worker=1)
    assert plain.games_options() == GamesOptions(workers=0, games_per_worker=1)
    assert remote.run_id == local.run_id == plain.run_id


def test_mcc_round_robin_on_a_cluster(home: Path, cluster: DaskCluster) -> None:
    """``chesslab mcc roundrobin --cluster ADDRESS``: the Monte-Carlo players' games are the
    cluster workers', stored and rated here against MCC = 0; the option reaches the tournament
    without changing its id."""
    import dataclasses

    from flows.cli import build_parser
    from flows.commands.mcc import round_robin_of
    from pipelines.mcc import MccConfig, player_spec, rate_against_mcc

    parser = build_parser("mcc")
    remote, _ = round_robin_of(parser.parse_args(
        ["mcc", "roundrobin", "--cluster", cluster.address, "--movetime-ms", "20",
         "--rounds", "1", "--max-plies", "20"]))
    local, _ = round_robin_of(parser.parse_args(
        ["mcc", "roundrobin", "--movetime-ms", "20", "--rounds", "1", "--max-plies", "20"]))
    assert remote.runner == GamesOptions(cluster=cluster.address)
    assert Tournament(remote, Lake(home)).id == Tournament(local, Lake(home)).id
    assert round_robin_of(parser.parse_args(["mcc", "epsilon", "--workers", "2"]))[0].runner \
        == GamesOptions(workers=2)
    players = (player_spec("MCC_DecisiveMoves", "decisive"), player_spec("MCC", "mcc"))
    summary = run_tournament(dataclasses.replace(remote, engines=players, progress=False),
                             Lake(home))
    assert summary.played == 2 and summary.planned == 2
    rows = Lake(home).read("tournament_games", columns=["worker"]).column("worker").to_pylist()
    assert len(rows) == 2 and os.getpid() not in {int(w.rsplit(":", 1)[1]) for w in rows}
    table = rate_against_mcc(Lake(home), summary.tournament_id)
    assert table.by_name()["MCC"].elo == 0.0 and table.by_name()["MCC"].games == 2
    assert MccConfig().runner == GamesOptions()


def test_local_workers_run_without_dasks_profiler_and_fast_ticks() -> None:
    """A local cluster's worker processes get the quiet settings (no statistical profiler,
    slow tick and monitors: CPU the engines would otherwise share); Dask's defaults are on."""
    import dask

    from pipelines.games.cluster import QUIET_CLUSTER, open_cluster

    def settings() -> dict[str, object]:
        import dask

        return {name: dask.config.get(name) for name in QUIET_CLUSTER}

    assert dask.config.get("distributed.worker.profile.enabled") is True      # the default
    with open_cluster(GamesOptions(workers=1, games_per_worker=1), 1) as client:
        on_workers = list(client.run(settings).values())
    assert on_workers == [{"distributed.worker.profile.enabled": False,
                           "distributed.admin.tick.interval": "1s",
                           "distributed.worker.memory.monitor-interval": "1s",
                           "distributed.admin.system-monitor.interval": "5s"}]


def test_next_batch_goes_out_before_the_last_one_is_stored(home: Path, stockfish_path: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The freed worker thread gets batch k+1 before the client stores batch k (workers do
    not idle while the client writes to the warehouse): in the order of events on the client,
    batch k+1's submission comes before the end of batch k's store."""
    from distributed import Client

    events: list[tuple[str, int]] = []
    submit = Client.submit

    def recording_submit(self: Client, *args: object, **kwargs: object) -> object:
        key = str(kwargs.get("key", ""))
        if key.startswith("games-"):
            events.append(("submitted", int(key.split("-")[1])))
        return submit(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Client, "submit", recording_submit)
    config = match(None, engines=(SF, SF + "2"), rounds=3, max_plies=20)   # 3 batches, 1 thread
    tournament = Tournament(config, Lake(home))
    finish = tournament.finish

    def recording_finish(result: BatchResult, summary: TournamentSummary) -> bool:
        index = result.index
        going_on = finish(result, summary)
        events.append(("stored", index))
        return going_on

    monkeypatch.setattr(tournament, "finish", recording_finish)
    summary = tournament.run()
    assert (summary.played, summary.planned) == (6, 6)
    assert len(Lake(home).read("tournament_games", columns=["game_key"])) == 6
    assert [e for e in events if e[0] == "submitted"] == [("submitted", i) for i in range(3)]
    for index in range(2):
        assert events.index(("submitted", index + 1)) < events.index(("stored", index)), events


def test_the_shutdown_filter_drops_only_dasks_closed_connections() -> None:
    """ShutdownNoise, record by record (the decisions worked out by hand): a record from
    outside Dask passes whatever it says; a Dask record passes unless it carries a
    CommClosedError or names one in its message (Dask logs some without the exception)."""
    import logging

    from distributed.comm.core import CommClosedError

    from pipelines.games.cluster import ShutdownNoise

    def record(name: str, message: str, error: BaseException | None = None) -> logging.LogRecord:
        info = (type(error), error, None) if error is not None else None
        return logging.LogRecord(name, logging.ERROR, __file__, 1, message, None, info)

    noise = ShutdownNoise()
    cases = [(record("chesslab.games", "CommClosedError"), True),
             (record("chesslab.games", "x", CommClosedError("closed")), True),
             (record("distributed.core", "a heartbeat"), True),
             (record("distributed.worker", "boom", ValueError("bad")), True),
             (record("distributed.comm", "Connection closed: CommClosedError: in <TCP>"), False),
             (record("distributed.worker", "heartbeat failed", CommClosedError("in <TCP>")),
              False)]
    assert [noise.filter(r) for r, _ in cases] == [want for _, want in cases]


def test_a_lost_scheduler_is_one_line_and_other_failures_pass_unchanged() -> None:
    """lost_or_failed: a client no longer running, or an OSError or a cancelled future while
    it runs, becomes one GamesError naming the scheduler's address and what to do; any other
    failure of a running client is given back as it is."""
    from types import SimpleNamespace

    from distributed.client import FutureCancelledError

    from pipelines.games.cluster import lost_or_failed
    from pipelines.games.config import GamesError

    def client(status: str) -> SimpleNamespace:
        return SimpleNamespace(status=status, scheduler=SimpleNamespace(address="tcp://h:8786"))

    bug = ValueError("a bug")
    assert lost_or_failed(client("running"), bug) is bug
    for status, error in (("closed", bug), ("running", OSError("reset")),
                          ("running", FutureCancelledError("k", "cancelled"))):
        lost = lost_or_failed(client(status), error)
        assert isinstance(lost, GamesError) and "\n" not in str(lost)
        assert str(lost).startswith("lost the Dask scheduler tcp://h:8786: ")
        assert f"{type(error).__name__}: {error}" in str(lost)
        assert str(lost).endswith("run the same command again to resume")
    nameless = SimpleNamespace(status="closed", scheduler=None)
    assert str(lost_or_failed(nameless, bug)).startswith("lost the Dask scheduler the scheduler")


def test_shutdown_noise_is_dropped_only_while_closing() -> None:
    """A connection Dask finds closed while the cluster goes (its ``CommClosedError`` with
    the traceback) is dropped during the close only; any other error during the close, and
    the same error during the run, is still printed."""
    import io
    import logging

    from distributed.comm.core import CommClosedError

    from pipelines.games.cluster import shutdown_noise_silenced

    text = io.StringIO()
    handler = logging.StreamHandler(text)
    logger = logging.getLogger("distributed")
    logger.addHandler(handler)

    def heartbeat_fails(error: Exception) -> None:
        try:
            raise error
        except Exception:
            logging.getLogger("distributed.worker").exception(
                "Failed to communicate with scheduler during heartbeat.")

    try:
        with shutdown_noise_silenced():
            heartbeat_fails(CommClosedError("in <TCP (closed) ConnectionPool.heartbeat_worker>"))
            closing = text.getvalue()
            heartbeat_fails(ValueError("a bad message"))
            other = text.getvalue()[len(closing):]
        heartbeat_fails(CommClosedError("during the run"))
        running = text.getvalue()[len(closing) + len(other):]
    finally:
        logger.removeHandler(handler)
    assert closing == ""
    assert "Traceback" in other and "ValueError: a bad message" in other
    assert "Traceback" in running and "CommClosedError: during the run" in running
    assert not handler.filters


def test_local_cluster_closes_client_first_under_the_quiet_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--workers N``: the client is closed before the cluster, both under the runner's quiet
    settings; the worker processes drop the shutdown noise, this process only while closing."""
    import dask
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import ShutdownNoise, silence_shutdown_noise

    closed: list[tuple[str, object]] = []
    for kind, name in ((Client, "client"), (LocalCluster, "cluster")):
        def recording_close(self: object, *args: object, _name: str = name,
                            _close: object = kind.close, **kwargs: object) -> object:
            closed.append((_name, dask.config.get("distributed.worker.profile.enabled")))
            return _close(self, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(kind, "close", recording_close)

    def filtered() -> bool:
        import logging

        return any(isinstance(f, ShutdownNoise) for h in logging.getLogger("distributed").handlers
                   for f in h.filters)

    from pipelines.games.cluster import open_cluster

    with open_cluster(GamesOptions(workers=1, games_per_worker=1), 1) as client:
        assert list(client.run(filtered).values()) == [False]
        client.run(silence_shutdown_noise, os.getpid())
        assert list(client.run(filtered).values()) == [True]
        silence_shutdown_noise(os.getpid())          # the client's own process: left alone
        assert not filtered()
    names = [name for name, _ in closed]      # Client.close may be called more than once
    assert "cluster" in names and names.index("client") < names.index("cluster")
    assert {quiet for _, quiet in closed} == {False}          # the profiler still off
    assert not filtered()


def test_local_workers_run_prints_no_traceback(home: Path, stockfish_path: str) -> None:
    """``chesslab tournament --workers 2``: the games stored, and nothing on its output or
    its errors but chesslab's own lines (no Dask traceback while the local cluster closes)."""
    run = subprocess.run(
        [sys.executable, "-m", "flows.cli", "--home", str(home), "tournament", SF, SF + "2",
         "--nodes", "300", "--rounds", "2", "--max-plies", "20", "--workers", "2",
         "--games-per-worker", "1", "--no-prefect", "--no-rate", "--openings",
         str(FIXTURES / "openings" / "two_games.pgn")],
        env=dask_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    output = run.stdout + run.stderr
    assert "Traceback" not in output and "Error" not in output, output
    assert "4/4 games (4 played now)" in run.stdout
    assert len(Lake(home).read("tournament_games", columns=["game_key"])) == 4


# --------------------------------------------------------------------------------------------
# Issue 48: what mutation testing of the runner found unchecked
# --------------------------------------------------------------------------------------------

def test_a_lost_worker_is_described_in_one_line() -> None:
    """Wording by hand: the name and the address when they differ, the address alone when the
    worker never said its name, each batch to be played again, or that it played none."""
    from pipelines.games.cluster import LostWorker

    assert LostWorker("tcp://10.0.0.7:1", "box:42", (3, 5)).describe() == \
        "worker box:42 (tcp://10.0.0.7:1) lost; batch 3, batch 5 to be played again"
    assert LostWorker("tcp://10.0.0.7:1", "tcp://10.0.0.7:1", ()).describe() == \
        "worker tcp://10.0.0.7:1 lost; it was playing no batch"
    assert LostWorker("a", "b", (2,)).describe("games {}".format) == \
        "worker b (a) lost; games 2 to be played again"


def stop_seen(batch: object, stop: object) -> bool:
    """A batch that plays until the run's stop event is seen (10 s at most)."""
    deadline = time.monotonic() + 10
    while not stop() and time.monotonic() < deadline:     # type: ignore[operator]
        time.sleep(0.02)
    return bool(stop())                                   # type: ignore[operator]


def stop_now(batch: object, stop: object) -> bool:
    return bool(stop())                                   # type: ignore[operator]


def refuse(batch: object, stop: object) -> None:
    raise WorkerRefused(f"no engine for {batch}")


def test_a_batch_on_a_worker_sees_the_runs_stop_event_and_a_refusal_names_the_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``on_worker`` on an in-process Dask worker: the stop event of the name given is what
    the batch's ``stop`` reads (set: seen; another name, unset: not seen), and a refusal
    carries the address of the worker that refused; ``remote_play`` passes its stop name."""
    from distributed import Client, Event, LocalCluster

    from pipelines.games import cluster as runner

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        Event("stop-set", client=client).set()
        assert client.submit(runner.on_worker, stop_seen, 1, "stop-set", pure=False
                             ).result(timeout=30) is True
        assert client.submit(runner.on_worker, stop_now, 1, "stop-unset", pure=False
                             ).result(timeout=30) is False
        with pytest.raises(WorkerRefused, match="no engine for 7") as refused:
            client.submit(runner.on_worker, refuse, 7, "stop-unset", pure=False
                          ).result(timeout=30)
        assert refused.value.address == next(iter(client.scheduler_info()["workers"]))
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(runner, "on_worker", lambda *args: calls.append(args))
    runner.remote_play("the batch", "stop-7")                     # type: ignore[arg-type]
    assert calls == [(runner.play_batch, "the batch", "stop-7")]


def test_a_local_cluster_has_the_workers_and_threads_asked_and_a_private_dashboard() -> None:
    """``--workers 0``: one worker in this process with a thread a game (at least one);
    ``--workers 2``: two processes with ``--games-per-worker`` threads each. The dashboard
    listens on the loopback interface at a free port (not Dask's 0.0.0.0:8787, taken by the
    first run on a machine and open to the network), and Dask's handler shows errors only."""
    import logging

    from pipelines.games.cluster import local_cluster

    handler = logging.StreamHandler()        # Dask's own, as its logging config makes it
    dask_logger = logging.getLogger("distributed")

    def threads(options: GamesOptions, concurrency: int) -> list[int]:
        with local_cluster(options, concurrency) as local:
            hosts = {socket_.getsockname()[0] for socket_ in
                     local.scheduler.services["dashboard"]._sockets.values()}
            assert hosts == {"127.0.0.1"}
            assert handler.level == logging.ERROR
            return sorted(w["nthreads"] for w in local.scheduler_info["workers"].values())

    dask_logger.addHandler(handler)
    try:
        assert threads(GamesOptions(workers=0), 3) == [3]
        assert threads(GamesOptions(workers=0), 0) == [1]
        assert threads(GamesOptions(workers=2, games_per_worker=1), 5) == [1, 1]
    finally:
        dask_logger.removeHandler(handler)


def unsubscribed_watch(client: object) -> Any:
    """A ``WorkerWatch`` of a stand-in client, made without subscribing to its scheduler."""
    from pipelines.games.cluster import WorkerWatch

    watch = WorkerWatch.__new__(WorkerWatch)
    watch.client, watch.names, watch.events = client, {}, queue.SimpleQueue()
    return watch


def test_the_worker_watch_names_a_worker_that_joined_when_it_is_lost() -> None:
    """A worker that joins during the run is named (``host:pid``) from its ``add-worker``
    event, so its loss says which machine went; a worker that does not answer the name
    question keeps its address (no error)."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import LostWorker, WorkerWatch

    name = f"{socket.gethostname()}:{os.getpid()}"        # an in-process worker's name
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        first = set(client.scheduler_info()["workers"])
        watch = WorkerWatch(client)
        try:
            watch.names.clear()                  # only the add-worker event can name it now
            deadline = time.monotonic() + 30
            (existing,) = first
            while watch.events.empty():          # until the subscription reaches the scheduler
                assert time.monotonic() < deadline
                client.log_event("all", {"action": "add-worker", "worker": existing})
                time.sleep(0.05)
            assert watch.lost(lambda key: None) == []
            assert watch.names == {existing: name}
            local.scale(2)
            client.wait_for_workers(2, timeout=30)
            (joined,) = set(client.scheduler_info()["workers"]) - first
            while joined not in watch.names and time.monotonic() < deadline:
                watch.wait()
                assert watch.lost(lambda key: None) == []
            assert watch.names == {existing: name, joined: name}
            client.retire_workers([joined])
            found: list[LostWorker] = []
            while not found and time.monotonic() < deadline:
                watch.wait()
                found = watch.lost(lambda key: None)
            assert found == [LostWorker(joined, name, ())]
        finally:
            watch.close()

    class Gone:
        def run(self, *args: object, **kwargs: object) -> dict[str, str]:
            raise OSError("the worker went")

    unanswered = unsubscribed_watch(Gone())
    unanswered.learn_names(["tcp://127.0.0.1:9"])
    assert unanswered.names == {}


def test_the_worker_watch_reads_every_event_queued_in_one_call() -> None:
    """The scheduler's events as its ``all`` topic words them, queued before one ``lost``
    call: two joins (their names asked of them alone, in one call), then the loss of one of
    them with the batches it was playing and had computed, and the loss of a worker that
    never gave its name, in an event without the task lists (Dask 2026.8 always sends both;
    without them, no batches). A worker that joins and is lost again before the call is not
    asked (a worker that is gone holds the client for Dask's 30 s connect timeout): its loss
    names its address."""
    from pipelines.games.cluster import LostWorker

    asked: list[object] = []

    class Client:
        def run(self, function: object, workers: list[str] | None = None) -> dict[str, str]:
            asked.append(workers)
            return {"tcp://a:1": "box:1", "tcp://b:1": "box:2"}

    watch = unsubscribed_watch(Client())

    def batch_of(key: str) -> int | None:
        return int(key.split("-")[1]) if key.startswith("games-") else None

    for message in ({"action": "add-worker", "worker": "tcp://a:1"},
                    {"action": "add-worker", "worker": "tcp://b:1"}):
        watch.events.put(message)
    assert watch.lost(batch_of) == []
    assert asked == [["tcp://a:1", "tcp://b:1"]]
    for message in ({"action": "remove-worker", "worker": "tcp://b:1",
                     "processing-tasks": ["games-5-x", "preflight-y"],
                     "lost-computed-tasks": ["games-3-z"]},
                    {"action": "add-worker", "worker": "tcp://d:4"},
                    {"action": "remove-worker", "worker": "tcp://d:4"},
                    {"action": "remove-worker", "worker": "tcp://c:2"}):
        watch.events.put(message)
    assert watch.lost(batch_of) == [LostWorker("tcp://b:1", "box:2", (3, 5)),
                                    LostWorker("tcp://d:4", "tcp://d:4", ()),
                                    LostWorker("tcp://c:2", "tcp://c:2", ())]
    assert asked == [["tcp://a:1", "tcp://b:1"]]
    assert watch.lost(batch_of) == []


def test_closing_the_worker_watch_of_a_lost_scheduler_is_quiet() -> None:
    """The run's ``finally`` closes the watch; with the scheduler gone, unsubscribing fails,
    and that must not replace the error that ended the run."""

    class Gone:
        def unsubscribe_topic(self, topic: str) -> None:
            raise OSError("the scheduler went")

    unsubscribed_watch(Gone()).close()


@dataclass(frozen=True)
class Numbered:
    """A batch as ``run_batches`` sees one: its rank."""

    index: int


STOPS_SEEN: list[tuple[int, bool, float]] = []


def first_returns_the_rest_wait_for_the_stop(batch: Numbered, stop_name: str) -> str:
    """Batch 0 comes back at once; the others play until the run's stop event (20 s at
    most) and note whether they saw it and when (an in-process worker: this process's
    list). Each says which worker played it."""
    from distributed import get_worker

    from pipelines.games import cluster as runner

    if batch.index > 0:
        runner.on_worker(lambda _, stop: STOPS_SEEN.append(
            (batch.index, stop_seen_within(stop, 20), time.monotonic())), batch, stop_name)
    return get_worker().address


def stop_seen_within(stop: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not stop() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(stop())


def test_a_run_that_stops_sets_its_stop_event_for_the_batches_still_playing() -> None:
    """``on_result`` stops the run at the first result (an SPRT's verdict) while the second
    batch plays: ``run_batches`` sets the run's stop event as it returns, and the batch on
    the worker sees it within seconds (cancelling its future cannot end a running thread:
    only the event stops its engines)."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches

    STOPS_SEEN.clear()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:     # as open_cluster makes it
        workers = list(client.scheduler_info()["workers"])
        results: list[str] = []
        run_batches(client, workers, [Numbered(0), Numbered(1)],
                    lambda result: results.append(result) and False, print,
                    play=first_returns_the_rest_wait_for_the_stop)
        returned = time.monotonic()
        deadline = returned + 15
        while not STOPS_SEEN and time.monotonic() < deadline:
            time.sleep(0.05)
    assert results == workers
    [(index, seen, when)] = STOPS_SEEN
    assert (index, seen) == (1, True) and when - returned < 10


def worker_address(batch: Numbered, stop_name: str) -> str:
    from distributed import get_worker

    return str(get_worker().address)


def test_batches_go_only_to_the_workers_that_passed_the_checks() -> None:
    """Of two workers, one refused the start-up checks (``workers`` names the other): every
    batch is played by the checked worker, none handed to the refusing one."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        checked = sorted(client.scheduler_info()["workers"])[:1]
        played: list[str] = []
        run_batches(client, checked, [Numbered(0)] * 6,
                    lambda result: played.append(result) or True, print, play=worker_address)
    assert played == checked * 6


@dataclass(frozen=True)
class MarkedBatch:
    """A batch that plays for a minute the first time (``marker`` missing), at once after."""

    index: int
    marker: str


def slow_the_first_time(batch: MarkedBatch, stop_name: str) -> int:
    marker = Path(batch.marker)
    if batch.index == 0 and not marker.exists():
        marker.touch()
        time.sleep(60)
    return batch.index


@pytest.mark.timeout(180)
def test_a_lost_worker_is_a_report_line_by_default_and_its_batch_played_again(
        tmp_path: Path) -> None:
    """``run_batches`` without ``on_lost`` (datagen's runs): a worker killed while it plays
    batch 0 is one line given to ``report`` naming the worker and the batch, and batch 0
    comes back once, played by the other worker."""
    from distributed import Client

    from pipelines.games.cluster import run_batches

    local_cluster = start_cluster(2)
    lines: list[str] = []
    results: list[int] = []
    try:
        with Client(local_cluster.address, timeout=30, set_as_default=False) as client:
            workers = list(client.scheduler_info()["workers"])
            batches = [MarkedBatch(i, str(tmp_path / "played")) for i in range(3)]
            killed: list[tuple[str, int]] = []

            def result(index: int) -> bool:
                results.append(index)
                if not killed:
                    killed.append(kill_a_playing_worker(local_cluster))
                return True

            run_batches(client, workers, batches, result, lines.append,
                        play=slow_the_first_time)
    finally:
        local_cluster.stop()
    victim, batch = killed[0]
    assert batch == 0 and sorted(results) == [0, 1, 2]
    [line] = [line for line in lines if "lost" in line]
    assert line.startswith(f"worker {victim} (tcp://127.0.0.1:") and \
        line.endswith(") lost; batch 0 to be played again")


REFUSING_WORKER: list[str] = []


def refuse_on_one_worker(batch: object) -> str:
    """A start-up check that refuses on the worker named in REFUSING_WORKER only."""
    from distributed import get_worker

    address = str(get_worker().address)
    if address in REFUSING_WORKER:
        raise WorkerRefused(f"worker {address} refuses: no engine")
    return address


def test_each_worker_is_checked_on_itself_even_when_busy(
        caplog: pytest.LogCaptureFixture) -> None:
    """The check of a worker whose one thread is busy waits for it (run elsewhere, it would
    pass there and the refusing worker would be handed batches); a ready worker is logged
    with what its check said; when every worker refuses, the run ends with their reasons
    (one reason once); a cluster without workers is one line."""
    import logging

    from distributed import Client, LocalCluster

    from pipelines.games.cluster import check_workers
    from pipelines.games.config import GamesError

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        busy, idle = sorted(client.scheduler_info()["workers"])
        REFUSING_WORKER[:] = [busy]
        hold = client.submit(time.sleep, 1.5, workers=[busy], pure=False)
        while not client.processing().get(busy):
            time.sleep(0.01)
        lines: list[str] = []
        with caplog.at_level(logging.DEBUG, logger="pipelines.games.cluster"):
            assert check_workers(client, "batch", lines.append,
                                 check=refuse_on_one_worker) == [idle]
        assert lines == [f"worker {busy} refuses: no engine"]
        assert f"worker {idle} ({idle}) ready" in caplog.messages
        hold.result()
        REFUSING_WORKER[:] = [busy, idle]
        with pytest.raises(GamesError) as every:
            check_workers(client, "batch", lines.append, check=refuse_on_one_worker)
        assert str(every.value) == (f"every worker refused: worker {busy} refuses: no engine; "
                                    f"worker {idle} refuses: no engine")
        with pytest.raises(GamesError) as alike:
            check_workers(client, "batch", lines.append,
                          check=lambda batch: refuse(batch, None))
        assert str(alike.value) == "no engine for batch"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, Client(local) as client:
        with pytest.raises(GamesError) as alone:       # one worker, refusing: its reason
            check_workers(client, "batch", print, check=lambda batch: refuse(batch, None))
        assert str(alone.value) == "no engine for batch"
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty, \
            Client(empty) as client:
        with pytest.raises(GamesError) as raised:
            check_workers(client, "batch", print)
        assert str(raised.value) == "the Dask cluster has no worker"


def test_release_stops_the_engines_a_worker_thread_kept_and_a_failing_worker_is_quiet(
        stockfish_path: str) -> None:
    """The end of a run: ``release`` asks every worker to stop the engines its threads kept
    between batches (here an in-process worker: its engines are this process's children);
    a worker that cannot be asked (the scheduler gone) does not turn the run's end into an
    error."""
    from distributed import Client, LocalCluster

    from pipelines.games.batch import play_batch
    from pipelines.games.cluster import release

    config = TournamentConfig.tiny(nodes=500, rounds=1, max_plies=10, openings=str(
        FIXTURES / "openings" / "two_games.pgn"))
    [batch] = Tournament(config, Lake(Path("/nonexistent"))).batches(
        Tournament(config, Lake(Path("/nonexistent"))).slots)
    before = descendants(os.getpid())
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        client.submit(play_batch, batch, pure=False).result(timeout=60)
        engines = descendants(os.getpid()) - before
        assert len(engines) == 2 and all(alive(pid) for pid in engines)
        release(client)
        for _ in range(50):
            if not [pid for pid in engines if alive(pid)]:
                break
            time.sleep(0.1)
        assert not [pid for pid in engines if alive(pid)]

    class Gone:
        def run(self, function: object) -> None:
            raise OSError("Timed out trying to connect to tcp://127.0.0.1:1")

    release(Gone())


def test_the_worker_watch_keeps_only_the_scheduler_s_worker_events() -> None:
    """The ``all`` topic carries every event anyone logs there: a message that is no dict
    (a user's string) or another action is not kept and wakes nobody."""
    watch = unsubscribed_watch(object())
    watch.woken = threading.Event()
    for message in ("a string", {"action": "missing-data"}, None):
        watch.heard((0.0, message))
    assert watch.events.empty() and not watch.woken.is_set()
    watch.heard((0.0, {"action": "remove-worker", "worker": "tcp://a:1"}))
    assert watch.events.get() == {"action": "remove-worker", "worker": "tcp://a:1"}
    assert watch.woken.is_set()


def refuse_on_worker(batch: Numbered, stop_name: str) -> None:
    from pipelines.games import cluster as runner

    runner.on_worker(refuse, batch, stop_name)


def fail(batch: Numbered, stop_name: str) -> None:
    raise ValueError(f"batch {batch.index} broke")


def test_a_batch_every_worker_refuses_or_that_fails_ends_the_run_with_its_error() -> None:
    """A batch refused during the run by the only worker left ends the run with the refusal
    (reported once); a batch that fails otherwise ends it with its own exception; the watch's
    subscription to the scheduler's events ends with the run."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches
    from pipelines.games.config import GamesError

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        workers = list(client.scheduler_info()["workers"])
        lines: list[str] = []
        with pytest.raises(GamesError) as refused:
            run_batches(client, workers, [Numbered(0)], lambda result: True, lines.append,
                        play=refuse_on_worker)
        assert str(refused.value) == "no engine for Numbered(index=0)"
        assert lines == ["no engine for Numbered(index=0)"]
        with pytest.raises(ValueError, match="^batch 0 broke$"):
            run_batches(client, workers, [Numbered(0)], lambda result: True, lines.append,
                        play=fail)


def test_closing_the_worker_watch_unsubscribes_its_topic() -> None:
    unsubscribed: list[str] = []

    class Client:
        def unsubscribe_topic(self, topic: str) -> None:
            unsubscribed.append(topic)

    unsubscribed_watch(Client()).close()
    assert unsubscribed == ["all"]


RELEASE_BATCH = threading.Event()


def first_returns_the_rest_wait(batch: Numbered, stop_name: str) -> int:
    """Batch 0 comes back at once; the others play on, heedless of any stop, until the test
    lets them go (an engine that does not answer its stop, say)."""
    if batch.index > 0:
        RELEASE_BATCH.wait(60)
    return batch.index


def run_tasks(dask_scheduler: Any) -> list[str]:
    """The scheduler's tasks of games runs (their keys start ``games-``)."""
    return sorted(str(key) for key in dask_scheduler.tasks if str(key).startswith("games-"))


def test_a_run_that_stops_cancels_the_batches_still_playing() -> None:
    """A verdict at the first result while batch 1 plays on: when ``run_batches`` returns,
    it has cancelled batch 1's task (within seconds the scheduler holds no task of the run),
    though the batch itself still plays; without the cancel the task stays until the batch
    ends."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches

    RELEASE_BATCH.clear()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        try:
            workers = list(client.scheduler_info()["workers"])
            results: list[int] = []
            run_batches(client, workers, [Numbered(0), Numbered(1)],
                        lambda result: results.append(result) and False, print,
                        play=first_returns_the_rest_wait)
            deadline = time.monotonic() + 10
            while client.run_on_scheduler(run_tasks) and time.monotonic() < deadline:
                time.sleep(0.05)
            left = client.run_on_scheduler(run_tasks)
            still_playing = not RELEASE_BATCH.is_set()
        finally:
            RELEASE_BATCH.set()
    assert results == [0] and left == [] and still_playing


def test_the_end_of_a_run_stops_the_engines_its_worker_threads_kept(
        stockfish_path: str) -> None:
    """A run that ends normally releases the engines its batches kept on each worker thread
    (kept between batches of one run; a finished run must not leave them running)."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches

    config = TournamentConfig.tiny(nodes=500, rounds=1, max_plies=10, openings=str(
        FIXTURES / "openings" / "two_games.pgn"))
    tournament = Tournament(config, Lake(Path("/nonexistent")))
    [batch] = tournament.batches(tournament.slots)
    before = descendants(os.getpid())
    started: set[int] = set()

    def result(played: BatchResult) -> bool:
        started.update(descendants(os.getpid()) - before)
        return True

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        workers = list(client.scheduler_info()["workers"])
        run_batches(client, workers, [batch], result, print)
        for _ in range(50):
            if not [pid for pid in started if alive(pid)]:
                break
            time.sleep(0.1)
        left = [pid for pid in started if alive(pid)]
    assert len(started) == 2 and left == []


HEARD = threading.Event()


def test_a_worker_lost_as_the_verdict_comes_back_is_told_and_a_task_of_another_run_is_no_batch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's last result (a verdict) comes back and the scheduler then loses a worker
    (one the run did not use, holding another client's result): the run still tells of the
    loss as it ends, with no batch of its own (the other task's key is not one of its
    batches)."""
    from distributed import Client, LocalCluster

    from pipelines.games import cluster as runner

    heard = runner.WorkerWatch.heard

    def heard_and_noted(self: Any, event: tuple[float, Any]) -> None:
        heard(self, event)
        if not self.events.empty():
            HEARD.set()

    monkeypatch.setattr(runner.WorkerWatch, "heard", heard_and_noted)
    HEARD.clear()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        used, other = sorted(client.scheduler_info()["workers"])
        foreign = client.submit(sum, [1, 2], workers=[other], pure=False)
        assert foreign.result() == 3

        async def remove_other(dask_scheduler: Any) -> None:
            await dask_scheduler.remove_worker(other, stimulus_id="test-lost")

        def verdict(result: str) -> bool:
            client.run_on_scheduler(remove_other)
            assert HEARD.wait(30)
            return False

        lost: list[runner.LostWorker] = []
        runner.run_batches(client, [used], [Numbered(0)], verdict, print,
                           play=worker_address, on_lost=lost.append)
        name = f"{socket.gethostname()}:{os.getpid()}"
    assert lost == [runner.LostWorker(other, name, ())]


REFUSER: list[str] = []
PLAYED: list[tuple[int, float, float]] = []


def refuse_on_the_refuser_or_play(batch: Numbered, stop_name: str) -> str:
    """Refused on the worker in REFUSER; elsewhere the batch plays 0.3 s, noted in PLAYED."""
    from distributed import get_worker

    from pipelines.games import cluster as runner

    address = str(get_worker().address)
    if address in REFUSER:
        runner.on_worker(refuse, batch, stop_name)
    start = time.monotonic()
    time.sleep(0.3)
    PLAYED.append((batch.index, start, time.monotonic()))
    return address


def test_after_a_refusal_the_other_workers_threads_each_keep_a_batch() -> None:
    """Three workers of one thread; one refuses the batch it is given during the run: the
    run goes on with one batch in flight per thread of the two others (two at once, to the
    end), not as many as the refusing worker has threads."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches

    PLAYED.clear()
    with LocalCluster(n_workers=3, threads_per_worker=1, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        workers = sorted(client.scheduler_info()["workers"])
        REFUSER[:] = workers[2:]
        lines: list[str] = []
        played: list[str] = []
        run_batches(client, workers, [Numbered(i) for i in range(12)],
                    lambda result: played.append(result) or True, lines.append,
                    play=refuse_on_the_refuser_or_play)
    [line] = lines
    assert line.startswith("no engine for Numbered(index=")
    assert sorted(set(played)) == workers[:2] and len(PLAYED) == 12
    last = sorted(PLAYED, key=lambda row: row[1])[-6:]
    overlapping = [(a, b) for a, b in zip(last, last[1:], strict=False) if b[1] < a[2]]
    assert len(overlapping) >= 2


class SchedulerGoneAfterFirstResult:
    """A client whose connection to the scheduler closes after the run's first result: every
    call it makes then raises Dask's ``CommClosedError`` (an ``OSError``), as asking a
    scheduler that went away does. The first result reaches ``on_result`` while the
    connection still stands."""

    CLOSING = ("nthreads", "cancel", "sync", "run", "unsubscribe_topic")

    def __init__(self, client: Any) -> None:
        self.client = client
        self.gone = False

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.client, name)
        if name not in self.CLOSING:
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.gone:
                from distributed.comm.core import CommClosedError

                raise CommClosedError(f"in {name}: Stream is closed")
            return value(*args, **kwargs)
        return call


def test_a_scheduler_gone_mid_run_ends_it_in_one_line_whatever_fails_after() -> None:
    """The scheduler's connection closes as the first result comes back: asking it for the
    next batch's threads fails, and the run ends with one line naming the scheduler, not
    with the failures of setting its stop event or cancelling its batches, which fail too."""
    from distributed import Client, LocalCluster

    from pipelines.games.cluster import run_batches
    from pipelines.games.config import GamesError

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=None) as local, \
            Client(local, set_as_default=False) as client:
        closing = SchedulerGoneAfterFirstResult(client)

        def result(address: str) -> bool:
            closing.gone = True
            return True

        with pytest.raises(GamesError) as lost:
            run_batches(closing, list(client.scheduler_info()["workers"]),
                        [Numbered(i) for i in range(4)], result, print, play=worker_address)
        address = client.scheduler.address
    assert str(lost.value) == (
        f"lost the Dask scheduler {address}: CommClosedError: in nthreads: Stream is closed; "
        "finished games are stored, run the same command again to resume")


def test_shutting_a_local_cluster_down_silences_its_workers_first_and_goes_on_if_that_fails(
        ) -> None:
    """``shut_down`` of a cluster chesslab started: the workers are told to drop the shutdown
    noise (this process's id, which they leave alone), then the client closes, then the
    cluster; a worker that cannot be told does not stop the close. A user's cluster (no
    cluster object) is not told anything: its workers' logging is theirs."""
    from pipelines.games.cluster import shut_down, silence_shutdown_noise

    calls: list[tuple[object, ...]] = []

    class Client:
        def __init__(self, fails: bool) -> None:
            self.fails = fails

        def run(self, function: object, *args: object) -> None:
            calls.append(("run", function, *args))
            if self.fails:
                raise OSError("a worker went")

        def close(self) -> None:
            calls.append(("client.close",))

    class Cluster:
        def close(self) -> None:
            calls.append(("cluster.close",))

    told = ("run", silence_shutdown_noise, os.getpid())
    for fails in (False, True):
        calls.clear()
        shut_down(Client(fails), Cluster())
        assert calls == [told, ("client.close",), ("cluster.close",)]
    calls.clear()
    shut_down(Client(False), None)
    assert calls == [("client.close",)]
    calls.clear()
    shut_down(None, Cluster())
    assert calls == [("cluster.close",)]


def test_dask_loggers_are_quiet_unless_chesslab_is_verbose() -> None:
    """Without ``--verbose`` (the root logger above DEBUG) a Dask logger is raised to ERROR
    (a level already higher is kept); with it, the logger is left as it is."""
    import logging

    from pipelines.games.cluster import quiet

    root = logging.getLogger()
    level = root.level
    dask_logger = logging.getLogger("distributed.test-quiet")
    try:
        for root_level, before, after in ((logging.WARNING, logging.INFO, logging.ERROR),
                                          (logging.WARNING, logging.CRITICAL, logging.CRITICAL),
                                          (logging.DEBUG, logging.INFO, logging.INFO)):
            root.setLevel(root_level)
            dask_logger.setLevel(before)
            quiet(dask_logger)
            assert dask_logger.level == after
    finally:
        root.setLevel(level)
        dask_logger.setLevel(logging.NOTSET)

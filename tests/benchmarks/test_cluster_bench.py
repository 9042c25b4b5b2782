"""benchmarks/cluster.py: the order paths take turns in, the ratios it prints, its CPU count."""
from __future__ import annotations

import subprocess
import sys
from typing import Any

from tests.benchmarks.scripts import load_script

bench = load_script("cluster.py", "cluster_bench")


class Summary:
    """What ``measure`` reads of a tournament's summary."""

    def __init__(self, games: int) -> None:
        self.played = games
        self.terminations: dict[str, int] = {}
        self.worker_seconds = self.engine_seconds = 1.0


def test_paths_take_turns_in_reverse_every_other_repeat(monkeypatch: Any) -> None:
    ran: list[str] = []
    monkeypatch.setattr(bench, "measure", lambda name, run: (ran.append(name), (1.0, 1.0))[1])
    paths = {name: lambda: None for name in ("a", "b", "c")}
    rounds = bench.interleaved(paths, 3)
    assert ran == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert [sorted(r) for r in rounds] == [["a", "b", "c"]] * 3


def test_ratio_is_the_median_of_each_repeats_own() -> None:
    rounds = [{"x": (30.0, 2.0), "y": (20.0, 1.0)},     # 1.5, CPU 2.0
              {"x": (10.0, 3.0), "y": (20.0, 2.0)},     # 0.5, CPU 1.5
              {"x": (22.0, 1.0), "y": (20.0, 1.0)}]     # 1.1, CPU 1.0
    assert bench.ratio(rounds, "x", "y").startswith("1.100 (repeats: 0.500, 1.100, 1.500)")
    assert bench.ratio(rounds, "x", "y", 1).startswith("1.500 (repeats: 1.000, 1.500, 2.000)")


def test_a_runs_cpu_counts_the_processes_it_started_and_reaped(monkeypatch: Any) -> None:
    """A child that spins for about a second of CPU shows in the run's CPU a game."""
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass"

    def run() -> tuple[Summary, float, int]:
        subprocess.run([sys.executable, "-c", spin], check=True)
        return Summary(4), 1.0, 1

    rate, per_game = bench.measure("spin", run)
    assert rate == 4 * 60
    assert 0.25 <= per_game < 0.5           # at least the child's second over 4 games

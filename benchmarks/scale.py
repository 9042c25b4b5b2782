"""The warehouse at scale (issue 35 §3): a home of N positions and 3N labels, measured.

Builds a home from generated data (``benchmarks/scale_data.py``: random legal games played by
the compiled core, cached under ``$CHESSLAB_SCALE_DATA``, default /tmp/chesslab_scale_data):

1. imports ``labels.txt`` (bullet text, one label per position under ``sf-text`` depth 9: the
   positions are new) and ``evals.jsonl`` (Lichess evaluation JSONL, two labels per position
   under ``lichess-eval`` at depths 20 and 12: the positions are already stored), then the
   games as PGN; reports positions/s and, per commit, the time of each table's write against
   the rows the table held (how the key checks grow with the warehouse);
2. ``compact`` (Delta optimize + vacuum of every table): time, files before and after;
3. five typical queries (named queries in ``warehouse/sql/queries``), each run twice on a
   fresh connection (the first includes reading the Parquet footers): labels per engine and
   depth, labels joined with positions, best-move disagreement between two depths, games per
   player, the ``nnue_examples`` view at one depth; and ``connect`` itself;
4. the NNUE training snapshot of one engine and depth (``nnue_snapshot``: N rows), written in
   a child process: seconds and the child's peak RSS;
5. training throughput on that snapshot (or ``--snapshot``): the loader alone (its encoding
   pass, then ``NnueStream``'s batches; in a child process: its first batch, rate and peak
   RSS) reading the snapshot key range by key range, beside the baseline, one whole-split
   query (``range_rows`` unlimited), in the same run; the trainer alone (Lightning steps on
   batches already in memory), and the trainer consuming the loader; the ratio of the
   loader's rate to the trainer's;
6. planning a ``label --limit 500`` run (a child process: seconds and peak RSS);

then extrapolates each figure to 100M and 1B positions. Not a test: the numbers depend on the
machine and on its load, which is printed (and CPU seconds where the machine is shared).

    python benchmarks/scale.py --positions 1000000 --home /work/scale_tmp/home1m
    python benchmarks/scale.py --positions 10000000 --home /work/scale_tmp/home10m --keep
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import DataSet, generate  # noqa: E402

from warehouse import Lake, connect  # noqa: E402
from warehouse.catalog import named_query, query  # noqa: E402

OUT = Path(__file__).parent / "out" / "scale"
BASELINE = Path(__file__).parent / "scale_baseline"
TEXT_ENGINE, TEXT_DEPTH = "sf-text", 9
JSONL_ENGINE, DEEP, SHALLOW = "lichess-eval", 20, 12
TARGET_IMPORT = 200_000        # positions/s at 10M (issue 35)
TARGET_QUERY_S = 5.0
TARGET_SNAPSHOT_BYTES = 4 << 30
SCALES = (100_000_000, 1_000_000_000)
STEPS = ("compact", "queries", "snapshot", "training", "planning")


@dataclass
class Commit:
    """One ``Lake.write``: the table, the rows given and stored, the rows the table held
    before it, and its seconds (key checks and the Delta commit)."""

    table: str
    given: int
    stored: int
    held: int
    seconds: float


class TimedLake(Lake):
    """A Lake that records each write (for the growth of the key checks with the table)."""

    def __init__(self, home: str | os.PathLike[str], key_index: bool = True) -> None:
        super().__init__(home, key_index=key_index)
        self.commits: list[Commit] = []
        self.rows: dict[str, int] = {}

    def write(self, name: str, rows: Any, unique: bool = False,
              absent_from: DeltaTable | None = None) -> int:
        given = rows.num_rows if isinstance(rows, pa.Table) else len(rows)
        began = time.perf_counter()
        stored = super().write(name, rows, unique=unique, absent_from=absent_from)
        held = self.rows.get(name, 0)
        self.commits.append(Commit(name, given, stored, held, time.perf_counter() - began))
        self.rows[name] = held + stored
        return stored


@dataclass
class Report:
    """Every figure of a run, printed as it is measured and saved as JSON."""

    positions: int
    figures: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, value: Any, line: str) -> None:
        self.figures[name] = value
        print(line, flush=True)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds() -> float:
    """CPU seconds of this process's threads so far (the machine may be shared)."""
    return time.process_time()


def import_file(lake: TimedLake, path: Path, fmt: str, engine_id: str | None,
                depth: int) -> dict[str, Any]:
    from flows.ingest import INGEST, IngestJob
    from flows.step import run_step
    from pipelines.ingest import IngestConfig

    config = IngestConfig(workers=1, format=fmt, engine_id=engine_id, depth=depth)
    first = len(lake.commits)
    began, cpu = time.perf_counter(), cpu_seconds()
    [summary] = run_step(INGEST, IngestJob((path,), config), lake)
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    commits = lake.commits[first:]
    return {"records": summary.records, "new_positions": summary.new_positions,
            "labels": summary.labels, "games": summary.games, "errors": summary.errors,
            "seconds": seconds, "cpu_seconds": cpu,
            "write_seconds": {t: sum(c.seconds for c in commits if c.table == t)
                              for t in ("positions", "labels", "games", "moves")},
            "growth": growth(commits)}


def growth(commits: Sequence[Commit]) -> dict[str, dict[str, float]]:
    """Per table, a least-squares line of a write's seconds per 1M rows given against the
    rows the table held: ``base`` (s per 1M rows on an empty table) and ``per_held`` (more
    s per 1M rows given, per 1M rows held): the key checks' growth."""
    fits = {}
    for name in ("positions", "labels", "moves"):
        points = [(c.held / 1e6, c.seconds / (c.given / 1e6)) for c in commits
                  if c.table == name and c.given >= 50_000]
        if len(points) < 3:
            continue
        n = len(points)
        mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
        sxx = sum((x - mx) ** 2 for x, _ in points)
        slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
        fits[name] = {"base": my - slope * mx, "per_held": slope, "commits": n,
                      "last": points[-1][1], "held_last": points[-1][0]}
    return fits


def build(data: DataSet, home: Path, report: Report, key_index: bool = True) -> TimedLake:
    """Import the text labels, the JSONL evaluations and the games into a fresh home
    (``key_index``: False for the keyed writes' scan of every stored part, the baseline)."""
    shutil.rmtree(home, ignore_errors=True)
    lake = TimedLake(home, key_index=key_index)
    steps = (("text", data.path("labels.txt"), "text", TEXT_ENGINE, TEXT_DEPTH),
             ("jsonl", data.path("evals.jsonl"), "lichess-eval", None, 0),
             ("pgn", data.path("games.pgn"), "pgn", None, 0))
    for name, path, fmt, engine_id, depth in steps:
        print(f"importing {path.name} ({load()})", flush=True)
        got = import_file(lake, path, fmt, engine_id, depth)
        records = got["records"] or got["games"]
        rate = (got["records"] / got["seconds"]) if got["records"] else 0.0
        what = (f"{got['records']:,} records ({got['new_positions']:,} new positions, "
                f"{got['labels']:,} labels)" if got["records"] else
                f"{got['games']:,} games ({got['new_positions']:,} new positions)")
        target = ""
        if name in ("text", "jsonl"):
            target = f"; target {TARGET_IMPORT:,}/s: {rate / TARGET_IMPORT:.2f}x"
        report.add(f"import_{name}", got,
                   f"  {name}: {what} in {got['seconds']:.1f} s ({got['cpu_seconds']:.1f} s CPU)"
                   + (f": {rate:,.0f} positions/s ({records / got['cpu_seconds']:,.0f} per CPU "
                      f"second){target}" if got["records"] else
                      f": {got['games'] / got['seconds']:,.0f} games/s"))
        for table, fit in got["growth"].items():
            print(f"    {table} writes: {fit['base']:.2f} s per 1M rows into an empty table, "
                  f"+{fit['per_held']:.3f} s per 1M rows per 1M rows held "
                  f"({fit['commits']} commits; the last {fit['last']:.2f} s/1M at "
                  f"{fit['held_last']:.1f}M held)")
    text, jsonl = report.figures.get("import_text"), report.figures.get("import_jsonl")
    if text and jsonl and text["cpu_seconds"] and jsonl["cpu_seconds"]:
        ratio = (jsonl["records"] / jsonl["cpu_seconds"]) / (text["records"] / text["cpu_seconds"])
        print(f"  JSONL / text import of the same positions, per CPU second: {ratio:.2f}x "
              f"(JSONL stores two labels a position, text one) ({load()})", flush=True)
    return lake


def measure_compact(lake: Lake, report: Report) -> None:
    from warehouse.derived import derived_tables
    from warehouse.refresh import refresh
    from warehouse.tables import REGISTRY

    # the tables a derived table is kept in are compacted after it is refreshed (as
    # warehouse.refresh.compact_lake does): the refresh rewrites them
    kept = {str(spec.kept_in) for spec in derived_tables() if getattr(spec, "kept_in", None)}
    began, files = time.perf_counter(), {}
    for name in sorted(set(REGISTRY) - kept):
        files[name] = lake.compact(name)
    seconds = time.perf_counter() - began
    big = {n: f for n, f in files.items() if f[0] > 1}
    report.add("compact", {"seconds": seconds, "files": files},
               f"compact: {seconds:.1f} s; files before -> after: "
               + ", ".join(f"{n} {a} -> {b}" for n, (a, b) in big.items()))
    began, cpu = time.perf_counter(), cpu_seconds()
    rows = refresh(lake)
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    for name in sorted(kept):   # vacuumed only while they hold a current derived table
        from warehouse.refresh import holds_current

        files[name] = lake.compact(name, merge=not holds_current(lake, name))
    report.add("derived", {"seconds": seconds, "cpu_seconds": cpu, "rows": rows},
               f"derived tables kept by compact ({load()}): {seconds:.1f} s ({cpu:.1f} s CPU); "
               + ", ".join(f"{n} {r:,} rows" for n, r in rows.items()))


QUERIES: tuple[tuple[str, str, Mapping[str, Any]], ...] = (
    ("labels per engine and depth", "label_coverage", {}),
    ("labels joined with positions", "label_scores_by_side",
     {"engine_id": JSONL_ENGINE, "depth": DEEP}),
    ("best-move disagreement between depths", "best_move_disagreement",
     {"engine_id": JSONL_ENGINE, "shallow": SHALLOW, "deep": DEEP}),
    ("games per player", "games_per_player", {"limit": 20}),
    ("nnue_examples at one depth", "nnue_examples_depth",
     {"engine_id": JSONL_ENGINE, "depth": DEEP}),
)


def baseline_sql(name: str) -> str | None:
    """The query as it was before the summaries compact keeps (``scale_baseline/<name>.sql``:
    the join of every label of the depth, the old view inlined), for the queries that
    changed; None for the others."""
    path = BASELINE / f"{name}.sql"
    return path.read_text() if path.is_file() else None


def timed_query(lake: Lake, sql: str, params: Mapping[str, Any]) -> tuple[float, float, Any]:
    """Seconds and CPU seconds (this process's threads: DuckDB's) of a query on a fresh
    connection, and its rows."""
    con = connect(lake)
    began, cpu = time.perf_counter(), cpu_seconds()
    rows = query(con, sql, dict(params)).to_pylist()
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    con.close()
    return seconds, cpu, rows


def measure_queries(lake: Lake, report: Report, baseline: bool = True) -> None:
    """Each typical query twice on fresh connections, and (``baseline``) the SQL before the
    summaries once, which must give the same rows."""
    began = time.perf_counter()
    connect(lake).close()
    report.add("connect_seconds", time.perf_counter() - began,
               f"connect (views over every table): {time.perf_counter() - began:.2f} s")
    for title, name, params in QUERIES:
        runs = [timed_query(lake, named_query(name), params) for _ in range(2)]
        times = [t for t, _, _ in runs]
        verdict = "under" if max(times) < TARGET_QUERY_S else "OVER"
        figure: dict[str, Any] = {"seconds": times, "cpu_seconds": [c for _, c, _ in runs],
                                  "rows": len(runs[0][2]), "load": load()}
        line = (f"query {title} ({name}): {times[0]:.2f} s, again {times[1]:.2f} s "
                f"({runs[1][1]:.1f} s CPU), {len(runs[0][2])} rows ({verdict} the "
                f"{TARGET_QUERY_S:.0f} s target; {load()})")
        old = baseline_sql(name) if baseline else None
        if old is not None:
            base = timed_query(lake, old, params)
            if base[2] != runs[0][2]:
                raise SystemExit(f"{name}: the baseline gives {base[2]}, the query {runs[0][2]}")
            figure["baseline"] = {"seconds": base[0], "cpu_seconds": base[1]}
            line += (f"\n    baseline (before the summaries), same rows: {base[0]:.2f} s "
                     f"({base[1]:.1f} s CPU): {base[0] / times[1]:.1f}x wall, "
                     f"{base[1] / max(runs[1][1], 1e-9):.1f}x CPU")
        report.add(f"query_{name}", figure, line)


def child(mode: str, home: str, out: str, *extra: str) -> dict[str, Any]:
    """Run a measured step in a child process: its seconds and peak RSS (getrusage)."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", mode, "--home", home,
                           "--out", out, *extra], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"child {mode} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = time.perf_counter() - began
    return result


def run_child(mode: str, home: str, out: str, batches: int) -> None:
    """The child side of :func:`child`: prints one JSON line."""
    from pipelines.kinds.nnue.module import keep_examples, snapshot_ranges
    from pipelines.label.config import LabelConfig
    from pipelines.label.pending import pending_positions
    from pipelines.train.dataset import WHOLE, write_snapshot

    lake = Lake(home)
    connect(lake).close()
    Path("/proc/self/clear_refs").write_text("5")     # the peak (VmHWM) starts again here
    result: dict[str, Any] = {"rss_before_bytes": proc_status("VmRSS")}
    anon = AnonPeak()
    began = time.perf_counter()
    if mode in ("snapshot", "snapshot-whole"):
        ranges = snapshot_ranges(lake, (JSONL_ENGINE,), DEEP) if mode == "snapshot" else WHOLE
        path = write_snapshot(lake, "nnue_snapshot",
                              {"engine_ids": [JSONL_ENGINE], "depth": DEEP,
                               "validation_permille": 100, "train_permille": 1000},
                              Path(out), keep_examples(True), 65536, ranges)
        result["ranges"] = len(ranges)
        import pyarrow.parquet as pq

        result["rows"] = pq.ParquetFile(path).metadata.num_rows
        result["bytes"] = path.stat().st_size
    elif mode in ("loader-ranges", "loader-whole"):
        result.update(read_epoch(home, out, batches, mode == "loader-ranges", began))
    elif mode == "plan-label":
        pending = pending_positions(lake, LabelConfig(depths=(7,), limit=500), "scale-engine")
        result["rows"] = len(pending)
    result["seconds"] = time.perf_counter() - began
    result["peak_rss_bytes"] = proc_status("VmHWM")
    result["peak_anon_bytes"] = anon.stop()
    print(json.dumps(result))


class AnonPeak(threading.Thread):
    """The largest anonymous resident memory (RssAnon) seen while it runs, sampled every
    0.1 s. VmHWM also counts file pages mapped into the process: the loader's encoded
    arrays are memory-mapped files, whose pages the kernel can drop (written back) at any
    time, so at 100M its VmHWM is the arrays' size however little memory the loader holds."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = proc_status("RssAnon")
        self.done = threading.Event()
        self.start()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.peak = max(self.peak, proc_status("RssAnon"))

    def stop(self) -> int:
        self.done.set()
        self.join()
        return max(self.peak, proc_status("RssAnon"))


def read_epoch(home: str, snapshot: str, batches: int, ranges: bool,
               began: float) -> dict[str, Any]:
    """The loader alone on the training split of ``snapshot``: its encoding pass (the split
    read range by range (``ranges``), else as one whole-split query: the code before key
    ranges) into a scratch folder, then ``batches`` batches of its first epoch."""
    import tempfile

    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.kinds.nnue.data import dataset_summary, encode_split
    from pipelines.kinds.nnue.module import NnueStream
    from pipelines.train.dataset import NO_LIMIT, RANGE_ROWS, SplitQuery
    from warehouse.catalog import connect_files

    config = NnueConfig()
    split = SplitQuery(home, "nnue_dataset", {"snapshot": snapshot, "max_positions": NO_LIMIT},
                       False, RANGE_ROWS if ranges else NO_LIMIT)
    counted = dataset_summary(connect_files([snapshot]), Path(snapshot))[False][0]
    first, rows = None, 0
    with tempfile.TemporaryDirectory() as folder:
        encoded = encode_split(split, config.arch, Path(folder), counted, config.read_batch,
                               config.encode_threads)
        encoded_s = time.perf_counter() - began
        for batch in NnueStream(encoded, config.batch_size, seed=config.seed):
            first = first or time.perf_counter() - began
            rows += len(batch)
            if rows >= batches * config.batch_size:
                break
    return {"rows": rows, "encode_s": encoded_s, "first_batch_s": first,
            "rate": rows / (time.perf_counter() - began)}


def proc_status(field: str) -> int:
    """A size of this process from /proc/self/status, bytes: VmRSS (resident now), VmHWM
    (peak since the process started or clear_refs; ``getrusage``'s ru_maxrss would carry the
    parent's peak over exec)."""
    line = next(row for row in Path("/proc/self/status").read_text().splitlines()
                if row.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def measure_snapshot(lake: Lake, folder: Path, report: Report) -> Path:
    """The snapshot written key range by key range, and the baseline (one query over the
    whole depth) in the same run; the two files must hold the same rows in the same order."""
    import pyarrow.parquet as pq

    path, whole_path = folder / "dataset.parquet", folder / "dataset-whole.parquet"
    whole = child("snapshot-whole", str(lake.home), str(whole_path))
    got = child("snapshot", str(lake.home), str(path))
    if not pq.read_table(path).equals(pq.read_table(whole_path)):
        raise SystemExit("the snapshot written by key range differs from the whole query's")
    whole_path.unlink()
    verdict = "under" if got["peak_rss_bytes"] < TARGET_SNAPSHOT_BYTES else "OVER"
    report.add("snapshot", {**got, "baseline": whole},
               f"snapshot of {got['rows']:,} rows ({got['bytes'] / 1e6:.0f} MB) in "
               f"{got['ranges']} key ranges: {got['seconds']:.1f} s, peak RSS "
               f"{got['peak_rss_bytes'] / 2**30:.2f} GiB ({got['rss_before_bytes'] / 2**30:.2f} "
               f"GiB after imports; {verdict} the 4 GiB target); one whole-depth query (the "
               f"baseline), same rows: {whole['seconds']:.1f} s, peak RSS "
               f"{whole['peak_rss_bytes'] / 2**30:.2f} GiB: time {got['seconds'] / whole['seconds']:.2f}x, "
               f"peak RSS {got['peak_rss_bytes'] / whole['peak_rss_bytes']:.2f}x ({load()})")
    return path


def measure_training(lake: Lake, snapshot: Path, report: Report, batches: int,
                     accelerator: str = "cpu") -> None:
    """Positions/s of the loader alone, the trainer alone and the trainer with the loader
    (the trainer on ``accelerator``: ``cpu`` or ``cuda``)."""
    import tempfile

    import lightning as L
    import torch

    from pipelines.kinds.nnue.config import NnueConfig
    from pipelines.kinds.nnue.data import dataset_summary, encode_split
    from pipelines.kinds.nnue.module import NnueModule, NnueStream
    from pipelines.train.dataset import NO_LIMIT, SplitQuery
    from warehouse.catalog import connect_files

    config = NnueConfig()
    split = SplitQuery(str(lake.home), "nnue_dataset",
                       {"snapshot": str(snapshot), "max_positions": NO_LIMIT}, False)
    scratch = Path(tempfile.mkdtemp(prefix="scale-encoded-"))
    encoded = encode_split(split, config.arch, scratch,
                           dataset_summary(connect_files([str(snapshot)]), snapshot)[False][0],
                           config.read_batch, config.encode_threads)

    def stream() -> NnueStream:
        return NnueStream(encoded, config.batch_size, seed=config.seed)

    loaders = {mode: child(mode, str(lake.home), str(snapshot), "--train-batches", str(batches))
               for mode in ("loader-whole", "loader-ranges")}
    whole, ranged = loaders["loader-whole"], loaders["loader-ranges"]
    loader, first = ranged["rate"], ranged["first_batch_s"]
    report.add("loader", loaders,
               f"loader alone, {ranged['rows']:,} rows of {snapshot}: key ranges: first batch "
               f"after {first:.2f} s, {loader:,.0f} positions/s, peak RSS "
               f"{ranged['peak_rss_bytes'] / 2**20:,.0f} MiB (anonymous "
               f"{ranged['peak_anon_bytes'] / 2**20:,.0f} MiB; the rest is file pages of the "
               f"memory-mapped encoded arrays); one whole-split query (the "
               f"baseline): {whole['first_batch_s']:.2f} s, {whole['rate']:,.0f}/s, "
               f"{whole['peak_rss_bytes'] / 2**20:,.0f} MiB (anonymous "
               f"{whole['peak_anon_bytes'] / 2**20:,.0f} MiB); first batch "
               f"{whole['first_batch_s'] / first:.1f}x sooner, rate "
               f"{loader / whole['rate']:.2f}x, peak RSS "
               f"{ranged['peak_rss_bytes'] / whole['peak_rss_bytes']:.2f}x ({load()})")
    kept = []
    for batch in stream():
        kept.append(batch)
        if len(kept) == 8:
            break
    torch.manual_seed(0)

    def fit(data: Any, steps: int) -> float:
        trainer = L.Trainer(max_steps=steps, logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False,
                            num_sanity_val_steps=0, limit_val_batches=0,
                            accelerator="gpu" if accelerator == "cuda" else "cpu")
        began = time.perf_counter()
        trainer.fit(NnueModule(config), train_dataloaders=data)
        return steps * config.batch_size / (time.perf_counter() - began)

    class Cycle(torch.utils.data.IterableDataset):
        """The same few batches, ``steps`` times: the trainer without a loader."""

        def __iter__(self) -> Any:
            return (kept[i % len(kept)] for i in range(steps))

    steps = min(batches, 40)
    alone = fit(torch.utils.data.DataLoader(Cycle(), batch_size=None), steps)
    both = fit(torch.utils.data.DataLoader(stream(), batch_size=None), steps)
    report.add("training", {"loader": loader, "first_batch_s": first, "trainer": alone,
                            "trainer_with_loader": both, "batch_size": config.batch_size},
               f"training (batch {config.batch_size}): loader alone {loader:,.0f} positions/s "
               f"(first batch after {first:.1f} s: the epoch's first range), trainer alone "
               f"{alone:,.0f}/s, trainer with the loader {both:,.0f}/s; loader / trainer = "
               f"{loader / alone:.2f}x ({'keeps up' if loader >= alone else 'too SLOW'})")


def measure_planning(lake: Lake, report: Report) -> None:
    got = child("plan-label", str(lake.home), "")
    report.add("plan_label", got,
               f"planning label --limit 500: {got['seconds']:.1f} s, peak RSS "
               f"{got['peak_rss_bytes'] / 2**20:.0f} MiB ({got['rss_before_bytes'] / 2**20:.0f} MiB "
               f"after imports; {got['rows']} positions)")


def extrapolate(report: Report) -> None:
    """Each figure at 100M and 1B positions, from how it grows (printed with its model)."""
    f, n = report.figures, report.positions
    rows = []

    def line(name: str, at: Callable[[int], float], unit: str, limit: float | None,
             model: str) -> None:
        values = [at(scale) for scale in SCALES]
        rows.append({"figure": name, "model": model, "values": values, "unit": unit,
                     "limit": limit})
    for step in ("text", "jsonl"):
        got = f[f"import_{step}"]
        fits = got["growth"]
        base_s = got["seconds"] / got["records"] * 1e6      # s per 1M records at this size

        def import_rate(scale: int, got: Any = got, fits: Any = fits,
                        base_s: float = base_s, step: str = step) -> float:
            # the key checks' extra seconds per 1M rows grow with the rows held: integrate
            # the fitted line over the import from 0 to ``scale`` rows held
            extra = 0.0
            for table, fit in fits.items():
                share = 1 if table == "positions" else 2 if step == "jsonl" else 1
                mean_held = {"positions": scale / 2e6, "labels": share * scale / 2e6}[table] \
                    if table in ("positions", "labels") else 0
                extra += share * fit["per_held"] * (mean_held - n / 2e6)
            return 1e6 / (base_s + max(extra, 0.0))
        line(f"import {step} (positions/s)", import_rate, "/s", TARGET_IMPORT,
             "fitted write seconds per row, growing with the rows held")
    def linear(cpu: float) -> Callable[[int], float]:
        return lambda scale: cpu * scale / n
    for name, got in f.items():     # the joins read every label of a depth: linear in N
        if name.startswith("query_") and "cpu_seconds" in got:
            line(f"{name} (CPU seconds)", linear(got["cpu_seconds"][-1]), " s CPU",
                 TARGET_QUERY_S, "linear in N: a hash join or scan of every label of a depth")
    if "derived" in f:
        line("derived tables at compact (CPU seconds)", linear(f["derived"]["cpu_seconds"]),
             " s CPU", None, "linear in N: an aggregate of every move, a join of every position")
    report.add("extrapolation", rows, "extrapolated:")
    for row in rows:
        print(f"  {row['figure']}: " + ", ".join(
            f"{scale / 1e6:,.0f}M: {value:,.0f}{row['unit']}"
            for scale, value in zip(SCALES, row["values"], strict=True)) + f"  ({row['model']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--home", default="/work/scale_tmp/scale_home")
    parser.add_argument("--keep", action="store_true", help="keep the home afterwards")
    parser.add_argument("--reuse", action="store_true",
                        help="measure an existing home (built by an earlier run) again")
    parser.add_argument("--train-batches", type=int, default=60)
    parser.add_argument("--accelerator", choices=("cpu", "cuda"), default="cpu",
                        help="where the training step's trainer runs")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help=f"the measurements after the build (default: all of {STEPS})")
    parser.add_argument("--no-baseline", action="store_true",
                        help="queries: skip the SQL before the summaries (a minute at 100M)")
    parser.add_argument("--no-key-index", action="store_true",
                        help="import with the scan of every stored part (the baseline)")
    parser.add_argument("--snapshot", help="train on this snapshot (default: the one the "
                        "snapshot step writes in the home)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.home, args.out, args.train_batches)
        return
    report = Report(args.positions)
    print(f"chesslab scale benchmark: {args.positions:,} positions, {os.cpu_count()} cores, "
          f"{load()}", flush=True)
    began = time.perf_counter()
    data = generate(args.positions, args.seed)
    report.add("data", {"folder": str(data.folder), "games": data.games},
               f"data: {data.folder} ({data.games:,} games; {time.perf_counter() - began:.0f} s)")
    home = Path(args.home)
    lake = TimedLake(home) if args.reuse else build(data, home, report,
                                                    key_index=not args.no_key_index)
    steps = args.steps.split(",")
    if "compact" in steps:
        measure_compact(lake, report)
    if "queries" in steps:
        measure_queries(lake, report, baseline=not args.no_baseline)
    work = home / "bench"
    work.mkdir(parents=True, exist_ok=True)
    if "snapshot" in steps:
        measure_snapshot(lake, work, report)
    if "training" in steps:
        measure_training(lake, Path(args.snapshot or work / "dataset.parquet"), report,
                         args.train_batches, args.accelerator)
    if "planning" in steps:
        measure_planning(lake, report)
    if not args.reuse:
        extrapolate(report)
    report.figures["load_after"] = load()
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"{args.positions}.json"
    out.write_text(json.dumps(report.figures, indent=1, default=str))
    print(f"{load()}; figures in {out}")
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()

"""``chesslab export DATASET --format text|binpack|epd|parquet --out PATH``: a model version's
training snapshot, or an ``nnue_examples`` selection, in the formats other trainers read."""
from __future__ import annotations

import argparse
from typing import Any

from flows.options import add_config_arguments, config_from_args
from flows.runtime import add_runner_arguments, make_runner
from pipelines.export import ExportConfig, ExportSummary


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", help="write a data set as text, binpack, EPD or Parquet for other trainers",
        description="DATASET is nnue_examples (narrowed by --engine-id, --depth, --where) or "
                    "a model version (nnue@3, nnue@latest): the snapshot it was trained on. "
                    "`chesslab ingest` reads every format back.")
    parser.add_argument("dataset", metavar="DATASET",
                        help="nnue_examples, or a model version such as nnue@3")
    add_config_arguments(parser, ExportConfig, skip=("dataset",))
    add_runner_arguments(parser, cluster=False)
    parser.set_defaults(run=run_export)


def run_export(args: argparse.Namespace) -> int:
    config = config_from_args(ExportConfig, args, dataset=args.dataset)
    from flows.export import EXPORT

    with make_runner(args) as runner:
        summary = runner.run(EXPORT, config, args.lake)
    print(summary_line(summary))
    return 0


def summary_line(s: ExportSummary) -> str:
    """What was written, and what was not.

    >>> print(summary_line(ExportSummary("nnue_examples", "text", "a.txt", rows=5, written=3,
    ...                                  no_result=2, bytes=120, seconds=0.5)))
    a.txt: 3 positions of nnue_examples as text (120 bytes, 0.5 s); 2 had no game result (left out, or written as draws with --missing-result draw)
    """
    line = (f"{s.out}: {s.written} positions of {s.dataset} as {s.format} ({s.bytes} bytes, "
            f"{s.seconds:.1f} s)")
    if s.no_result and s.format in ("text", "binpack"):
        line += (f"; {s.no_result} had no game result (left out, or written as draws with "
                 f"--missing-result draw)")
    if s.refused:
        line += f"; {s.refused} left out: their move is not legal in their position"
    return line

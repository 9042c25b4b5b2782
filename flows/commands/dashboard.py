"""``chesslab dashboard``: serve the dashboard on 127.0.0.1 (``--port``; ``--host`` only when
asked), or write it as one static HTML file with ``-o FILE``."""
from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dashboard", help="serve the dashboard on 127.0.0.1, or write it with -o FILE",
        description="Pages: an overview (data coverage, models, matches, errors), one per "
                    "model version, run comparison, one per match or SPRT (live while it "
                    "runs) and ratings per pool; each chart a Vega-Lite spec over named "
                    "queries, rendered offline. Read-only.")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write a static HTML report to FILE instead of serving")
    parser.add_argument("--port", type=int, default=8050, help="port (default 8050; 0: any)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; 0.0.0.0 exposes the "
                             "warehouse to the network)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="another Host header to answer (the machine's name when "
                             "serving on 0.0.0.0); requests naming other hosts are refused")
    parser.set_defaults(run=run_dashboard)


def run_dashboard(args: argparse.Namespace) -> int:
    if args.output:
        from dashboards.report import write

        print(f"wrote {write(args.output, args.lake)}")
        return 0
    from dashboards.server import make_server

    server = make_server(args.lake, args.host, args.port, tuple(args.allowed_host))
    print(f"chesslab dashboard: {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.shutdown()
    return 0

"""``chesslab trigger refresh|retrain KIND|evaluate [MODEL]|make-net [--param k=v] [--watch]``: start a
run of a served deployment now; ``--watch`` follows it to its final state, prints the run's
own result ("retrain nnue: not due: ...") and exits 0 when it completed, 1 with the state
and its reason otherwise.

The deployment is this home's; a home other than the served one is refused.
``--param`` names and types are checked against the deployment's parameters before a run
starts."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "trigger", help="start a run of a served job (refresh, retrain KIND, evaluate MODEL, "
                        "make-net)",
        description=__doc__)
    parser.add_argument("job", choices=("refresh", "retrain", "evaluate", "make-net"))
    parser.add_argument("target", nargs="?", metavar="KIND|MODEL",
                        help="retrain: the model kind (nnue); evaluate: a model (nnue@3), "
                             "else every version not evaluated yet")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="override a deployment parameter (V as JSON, else as text), or "
                             "for make-net and evaluate one of its options (--param hours=8); "
                             "repeatable")
    parser.add_argument("--watch", action="store_true",
                        help="follow the run to its end; exit non-zero unless it completed")
    parser.add_argument("--poll", type=float, default=2.0, metavar="S",
                        help="seconds between two looks at a watched run (default 2)")
    parser.set_defaults(run=run_trigger)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``["k=v", ...]`` -> parameters; a value is JSON when it parses, else text.

    >>> parse_params(["min_new_labels=10", "folders=[\\"in\\"]", "model=nnue@2"])
    {'min_new_labels': 10, 'folders': ['in'], 'model': 'nnue@2'}
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param wants K=V, got {pair!r}")
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value
    return params


def run_trigger(args: argparse.Namespace) -> int:

    home = args.lake.home
    params = parse_params(args.param)
    if args.job == "evaluate" and args.target:
        params["model"] = args.target
    with trigger_api(home):
        from flows.schedules import deployment_name, failure_reason, start_run

        name = deployment_name(args.job, args.target, home)
        run = start_run(name, params, home, watch=args.watch, poll_s=args.poll)
        state = run.state
        print(f"{name}: flow run {run.name} ({run.id}): {state.name if state else 'unknown'}",
              flush=True)
        if not args.watch:
            return 0
        if state is not None and state.is_completed():
            if state.message:
                print(state.message, flush=True)
            return 0
        reason = failure_reason(run)
    print(f"chesslab trigger: {name} ended {state.name if state else 'without a state'}: "
          f"{reason}", file=sys.stderr)
    return 1


def trigger_api(home: Path) -> Any:
    """Settings pointing at ``PREFECT_API_URL``, else at the temporary server of the
    ``chesslab serve`` running on ``home``; an error saying how to start one when neither
    exists."""
    from flows.prefect_settings import configure_prefect

    configure_prefect()
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if PREFECT_API_URL.value():
        return temporary_settings(updates={})
    from flows.commands.serve import serve_record_url

    url = serve_record_url(home)
    if url is None:
        raise RuntimeError(f"no chesslab serve runs on {home} and PREFECT_API_URL is not set: "
                           f"start chesslab serve on this home (or set PREFECT_API_URL to "
                           f"the Prefect server it serves on)")
    return temporary_settings(updates={PREFECT_API_URL: url})

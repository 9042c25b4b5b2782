"""``chesslab trigger refresh|retrain KIND|evaluate [MODEL] [--param k=v] [--watch]``: start a
run of a served deployment now; ``--watch`` follows it to its final state and exits 0 when it
completed, 1 with the state and its reason otherwise."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "trigger", help="start a run of a served job (refresh, retrain KIND, evaluate MODEL)",
        description=__doc__)
    parser.add_argument("job", choices=("refresh", "retrain", "evaluate"))
    parser.add_argument("target", nargs="?", metavar="KIND|MODEL",
                        help="retrain: the model kind (nnue); evaluate: a model (nnue@3), "
                             "else every version not evaluated yet")
    parser.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="override a deployment parameter (V as JSON, else as text); "
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
    from flows.schedules import deployment_name

    name = deployment_name(args.job, args.target)
    params = parse_params(args.param)
    if args.job == "evaluate" and args.target:
        params["model"] = args.target
    with trigger_api():
        from flows.schedules import start_run

        run = start_run(name, params, watch=args.watch, poll_s=args.poll)
    state = run.state
    print(f"{name}: flow run {run.name} ({run.id}): {state.name if state else 'unknown'}",
          flush=True)
    if not args.watch:
        return 0
    if state is not None and state.is_completed():
        return 0
    reason = (state.message or "no reason given") if state else "no state"
    print(f"chesslab trigger: {name} ended {state.name if state else 'without a state'}: "
          f"{reason}", file=sys.stderr)
    return 1


def trigger_api() -> Any:
    """Settings pointing at ``PREFECT_API_URL``, else at a running ``chesslab serve``'s
    temporary server; an error saying how to start one when neither exists."""
    from flows.runtime import configure_prefect

    configure_prefect()
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if PREFECT_API_URL.value():
        return temporary_settings(updates={})
    from flows.commands.serve import serve_record_url
    from warehouse import Lake

    url = serve_record_url(Lake().home)
    if url is None:
        raise RuntimeError("no Prefect server: start one (prefect server start) and set "
                           "PREFECT_API_URL, then run chesslab serve")
    return temporary_settings(updates={PREFECT_API_URL: url})

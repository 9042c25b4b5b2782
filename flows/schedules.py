"""The scheduled jobs as Prefect deployments (``chesslab serve``) and how to start one of them
(``chesslab trigger``).

Three flows, each a few lines around the existing steps (no second execution path):

- ``chesslab-refresh/refresh-HOME``: the ``refresh`` composition (ingest step, label step) on
  each watched folder, on a cron;
- ``chesslab-retrain/retrain-KIND-HOME``: the ``train`` step with the latest KIND model's
  recorded config, when ``pipelines.ops.retrain_decision`` says enough new labels exist; a new
  version then asks for its evaluation at once;
- ``chesslab-evaluate/evaluate-HOME``: the ``evaluate-model`` composition for every version
  without an ``evaluated`` event (or the one named), against ``KIND@best``; the registry is
  polled on an interval, so models trained by hand are evaluated too.

HOME (:func:`home_tag`) names the warehouse: two homes served on one machine, or on one
Prefect server, have their own deployments, each run by its own ``serve`` on its own home,
and a served run refuses a home other than its ``serve``'s.

Each run holds its job's lock (``pipelines.ops.job_lock``): a second run of the same job waits
and then finds nothing left to do. A run that fails is tried again ``runs.retries`` times,
``runs.retry_delay_s`` apart, in its process (:func:`with_retries`), unless its input is what
failed (a folder that does not exist, a bad setting, an unknown model: a retry would find the
same); then it is recorded Failed with its reason; the schedules stay active. A run ends in a state whose
message is its result ("retrain nnue: not due: ..."), carries chesslab's lines in its logs and
leaves its summary as a markdown artifact (``flows.run_logs``). A served run dies with its
``serve`` (``PR_SET_PDEATHSIG``); a ``serve`` starting marks the runs its killed predecessor
left Running as Crashed (:func:`crash_stale_runs`).
"""
from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engines.stamps import content_id  # noqa: E402
from flows.prefect_settings import configure_prefect
from flows.server import alive
from pipelines.processes import set_death_signal

SERVE_PID_ENV, SERVE_HOME_ENV = "CHESSLAB_SERVE_PID", "CHESSLAB_SERVE_HOME"


def die_with_serve() -> None:
    """In a process ``chesslab serve`` started: die with that ``serve`` (its parent); exit
    now if it is already gone. Nothing in any other process.

    Called as this module is imported, which a served run's process (``python -m
    prefect.engine``) does as it loads its flow, before the engine marks the run Running and
    calls the flow: a ``serve`` killed in that moment takes the run along too, rather than
    leaving it to retry the server that died with its ``serve``."""
    serve = int(os.environ.get(SERVE_PID_ENV) or 0)
    if not serve or serve == os.getpid():
        return
    if os.getppid() == serve:
        set_death_signal()
    if os.getppid() != serve and not alive(serve):   # serve died before the signal was set
        os._exit(1)


die_with_serve()

configure_prefect()  # before Prefect's first import

from prefect import flow  # noqa: E402
from prefect.client.schemas.objects import FlowRun, StateType  # noqa: E402
from prefect.deployments.runner import EntrypointType, RunnerDeployment  # noqa: E402
from prefect.schedules import Cron, Interval  # noqa: E402
from prefect.states import Completed, State  # noqa: E402

from flows import run_logs  # noqa: E402
from flows.evaluate_model import evaluate_model  # noqa: E402
from flows.makenet import make_net  # noqa: E402
from flows.prefect_runner import PrefectRunner  # noqa: E402
from flows.refresh import refresh  # noqa: E402
from flows.train import TRAIN, TrainJob  # noqa: E402
from pipelines.evaluate.config import EvaluateConfig  # noqa: E402
from pipelines.ingest import discover_sources  # noqa: E402
from pipelines.label.config import LabelConfig  # noqa: E402
from pipelines.models.kinds import load_kind  # noqa: E402
from pipelines.models.registry import resolve_model  # noqa: E402
from pipelines.ops import (  # noqa: E402
    Schedules,
    baseline_for,
    job_lock,
    retrain_decision,
    unevaluated_models,
)
from pipelines.ops.config import MakeNetSchedule, kind_options, step_config  # noqa: E402
from warehouse import Lake  # noqa: E402

log = logging.getLogger(__name__)

# A served run's process loads its flow from this module, so the retry policy of the
# schedules file and its serve's pid and home reach it through the environment
# ``chesslab serve`` passes on (:func:`serve_environment`).
RETRIES_ENV, RETRY_DELAY_ENV = "CHESSLAB_RUN_RETRIES", "CHESSLAB_RUN_RETRY_DELAY_S"


def seconds(value: float) -> int | float:
    """Whole seconds as an int (Prefect's retry delay is an int field).

    >>> seconds(60.0), seconds(1.5)
    (60, 1.5)
    """
    return int(value) if float(value).is_integer() else value


RETRIES = int(os.environ.get(RETRIES_ENV, "2"))
RETRY_DELAY_S = seconds(float(os.environ.get(RETRY_DELAY_ENV, "60")))
JOBS = ("refresh", "retrain", "evaluate", "make-net")
#: A run in one of these states when its serve starts was left behind by a killed serve.
STALE_STATES = (StateType.RUNNING, StateType.PENDING, StateType.CANCELLING)


def home_tag(home: Path | str) -> str:
    """The warehouse in its deployments' names: the folder's name and a hash of its path.

    >>> home_tag("/data/Chess Lab")
    'chess-lab-daef9cf6'
    """
    path = os.path.abspath(home)
    name = re.sub(r"[^a-z0-9]+", "-", os.path.basename(path).lower()).strip("-")[:24]
    return f"{name or 'home'}-{content_id(path, n=8)}"


def deployment_name(job: str, target: str | None, home: Path | str) -> str:
    """``refresh``, ``retrain KIND``, ``evaluate`` of ``home`` -> the deployment's full name.

    >>> deployment_name("retrain", "nnue", "/data/Chess Lab")
    'chesslab-retrain/retrain-nnue-chess-lab-daef9cf6'
    """
    tag = home_tag(home)
    if job == "refresh":
        return f"chesslab-refresh/refresh-{tag}"
    if job == "retrain":
        if not target:
            raise ValueError("trigger retrain: name the model kind (chesslab trigger retrain nnue)")
        return f"chesslab-retrain/retrain-{target}-{tag}"
    if job == "evaluate":
        return f"chesslab-evaluate/evaluate-{tag}"
    if job == "make-net":
        return f"chesslab-make-net/make-net-{tag}"
    raise ValueError(f"trigger: unknown job {job!r} ({', '.join(JOBS)})")


def served_run(home: str) -> None:
    """At the start of a served run: die with the ``serve`` that started it (it is its
    parent), and refuse a home other than that ``serve``'s. Nothing for a run in-process."""
    die_with_serve()
    served = os.environ.get(SERVE_HOME_ENV)
    if served and os.path.abspath(served) != os.path.abspath(home):
        raise ValueError(f"this run is for home {home}, but its chesslab serve serves "
                         f"{served}: refused (trigger it from that home)")


#: Failures of a run's input: a retry finds them again (an IngestError naming a folder that
#: does not exist, a bad setting, an unknown model), so the run fails at once.
INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, LookupError, FileNotFoundError,
                                                 NotADirectoryError, PermissionError)


def with_retries(job: str, body: Callable[[], State[str]]) -> State[str]:
    """``body()``, tried again up to ``RETRIES`` times ``RETRY_DELAY_S`` apart after a failure
    that may pass (an engine or a server that died, a busy disk); a failure of the run's
    input (:data:`INPUT_ERRORS`) is raised at once. (Prefect's own flow retries cannot tell
    the two apart: a served run given a folder that does not exist failed three times, a
    minute apart.)"""
    for attempt in range(1, RETRIES + 2):
        try:
            return body()
        except INPUT_ERRORS:
            raise
        except Exception as exc:
            if attempt > RETRIES:
                raise
            log.warning("%s failed (attempt %d of %d), trying again in %g s: %s", job,
                        attempt, RETRIES + 1, RETRY_DELAY_S, exc)
            time.sleep(RETRY_DELAY_S)
    raise AssertionError("unreachable")


def finished(job: str, result: str, summary: Any) -> State[str]:
    """A run's end: its result as the Completed state's message (what ``trigger --watch``
    prints and the UI shows), ``summary`` as the run's markdown artifact."""
    log.info("%s", result)
    run_logs.publish_summary(f"scheduled-{job}", summary, result.splitlines()[0])
    return Completed(message=result, data=result)


@flow(name="chesslab-refresh")
def scheduled_refresh(home: str, folders: list[str], label: dict[str, Any]) -> State[str]:
    """Ingest the new files of ``folders``, then label what is new at the configured depths."""
    return with_retries("refresh", lambda: refresh_job(home, folders, label))


def refresh_job(home: str, folders: list[str], label: dict[str, Any]) -> State[str]:
    served_run(home)
    run_logs.install()
    config = step_config(LabelConfig, label, "refresh")
    discover_sources(folders)  # a missing folder fails the run here, with its name
    lines, rows, lake = [], [], Lake(home)
    with job_lock(lake.home, "refresh"), PrefectRunner(lake.home) as runner:
        for folder in folders:
            ingested, labelled = refresh(runner, folder, config, lake)
            rows.append({"folder": folder, "new files": sum(not s.skipped for s in ingested),
                         "games": sum(s.games for s in ingested),
                         "new positions": sum(s.new_positions for s in ingested),
                         "ingest errors": sum(s.errors for s in ingested),
                         "positions labelled": labelled.positions,
                         "labels written": labelled.labels, "label errors": labelled.errors})
            lines.append(f"{folder}: {rows[-1]['games']} games, "
                         f"{rows[-1]['new positions']} new positions; {labelled}")
    return finished("refresh", "\n".join(lines), rows)


@flow(name="chesslab-retrain")
def scheduled_retrain(home: str, kind: str, min_new_labels: int) -> State[str]:
    """A new ``kind`` version from the latest one's config once enough new labels exist."""
    return with_retries(f"retrain {kind}", lambda: retrain_job(home, kind, min_new_labels))


def retrain_job(home: str, kind: str, min_new_labels: int) -> State[str]:
    served_run(home)
    run_logs.install()
    lake = Lake(home)
    with job_lock(lake.home, f"retrain-{kind}"):
        decision = retrain_decision(lake, kind, min_new_labels)
        summary = {"kind": kind, "latest model": decision.model_id,
                   "new labels": decision.new_positions, "needed": min_new_labels,
                   "due": decision.due, "reason": decision.reason}
        if not decision.due or decision.config is None:
            return finished(f"retrain-{kind}", f"retrain {kind}: not due: {decision.reason}",
                            {**summary, "trained": None})
        log.info("retrain %s: due: %s", kind, decision.reason)
        config = step_config(load_kind(kind).config, {**decision.config, "progress": False},
                             "retrain")
        with PrefectRunner(lake.home) as runner:
            model = runner.run(TRAIN, TrainJob(kind, config), lake)
    request_evaluation(model.model_id, home)
    return finished(f"retrain-{kind}", f"retrain {kind}: trained {model.model_id} from "
                                       f"{decision.model_id}'s config ({decision.reason})",
                    {**summary, "trained": model.model_id, "artifact": model.artifact_path})


@flow(name="chesslab-evaluate")
def scheduled_evaluate(home: str, options: dict[str, Any],
                       model: str | None = None) -> State[str]:
    """Evaluate ``model``, or every version without an ``evaluated`` event, against
    ``KIND@best`` (the configured baseline for a kind's first model) and the ladder."""
    return with_retries("evaluate", lambda: evaluate_job(home, options, model))


def evaluate_job(home: str, options: dict[str, Any], model: str | None) -> State[str]:
    served_run(home)
    run_logs.install()
    lake = Lake(home)
    lines: list[str] = []
    failed: list[tuple[str, bool]] = []
    done = []
    with job_lock(lake.home, "evaluate"):
        names = [resolve_model(lake, model).model_id] if model else unevaluated_models(lake)
        with PrefectRunner(lake.home) as runner:
            for model_id in names:
                own = kind_options(options, model_id.split("@", 1)[0])
                default = own.get("against")
                try:  # one broken version must not keep the versions after it waiting
                    config = step_config(EvaluateConfig, {
                        **own, "model": model_id,
                        "against": baseline_for(lake, model_id, default)}, "evaluate")
                    done.append(evaluate_model(runner, config, lake))
                    lines.append(f"{model_id}: {done[-1]}")
                except Exception as exc:
                    log.warning("evaluate %s failed: %s", model_id, exc)
                    failed.append((f"{model_id}: {exc}", isinstance(exc, INPUT_ERRORS)))
    if failed:      # a ValueError when every failure was the input's: no retry finds better
        error = ValueError if all(given for _, given in failed) else RuntimeError
        raise error(f"evaluate: {len(failed)} of {len(names)} versions failed: "
                    + "; ".join(reason for reason, _ in failed))
    result = "\n".join(lines) or "evaluate: no model version waits for an evaluation"
    return finished("evaluate", result, done or result)


@flow(name="chesslab-make-net")
def scheduled_make_net(home: str, options: dict[str, Any]) -> State[str]:
    """Make an NNUE within a time budget: data, training, evaluation and promotion (a retry,
    or the next run with the same options, resumes the run)."""
    return with_retries("make-net", lambda: make_net_job(home, options))


def make_net_job(home: str, options: dict[str, Any]) -> State[str]:
    served_run(home)
    run_logs.install()
    lake = Lake(home)
    config = MakeNetSchedule(options=options).make_net_config()
    with job_lock(lake.home, "make-net"), PrefectRunner(lake.home) as runner:
        result = make_net(runner, config, lake, log.info)
    summary = {"run": result.run, "positions": result.positions, "model": result.model,
               "hours": round(result.spent_s / 3600, 2),
               "evaluation": str(result.evaluation) if result.evaluation else None}
    line = (f"make-net {result.run}: {result.positions:,} positions, model {result.model}, "
            f"made in {result.spent_s / 3600:.2f} h")
    if result.evaluation is not None:
        line += f"\n{result.evaluation}"
    return finished("make-net", line, summary)


def request_evaluation(model_id: str, home: str) -> None:
    """Start the evaluate deployment of ``home`` for a new version (when served; the
    registry poll catches it otherwise)."""
    from prefect.context import FlowRunContext
    from prefect.deployments import run_deployment

    context = FlowRunContext.get()
    if context is None or context.flow_run is None or context.flow_run.deployment_id is None:
        return
    try:
        run_deployment(deployment_name("evaluate", None, home), parameters={"model": model_id},
                       timeout=0, as_subflow=False)
    except Exception as exc:  # no evaluate deployment served: the poll will find it
        log.warning("could not start the evaluation of %s: %s", model_id, exc)


def serve_environment(schedules: Schedules, home: Path) -> dict[str, str]:
    """The environment of served runs: the schedules file's retry policy, and the pid and
    home of this ``serve`` (:func:`served_run`)."""
    return {RETRIES_ENV: str(schedules.runs.retries),
            RETRY_DELAY_ENV: str(schedules.runs.retry_delay_s),
            SERVE_PID_ENV: str(os.getpid()), SERVE_HOME_ENV: str(home)}


def deployments(schedules: Schedules, home: Path) -> list[RunnerDeployment]:
    """The deployments of ``schedules`` for the warehouse at ``home`` (served runs take the
    retry policy from :func:`serve_environment`, exported by ``chesslab serve``)."""
    runs = schedules.runs
    tag = home_tag(home)

    def deploy(function: Any, name: str, schedule: Any, **parameters: Any) -> RunnerDeployment:
        # retries are the run's own (with_retries, from serve_environment), not Prefect's
        return function.to_deployment(
            name=f"{name}-{tag}", schedules=[schedule] if schedule is not None else [],
            parameters={"home": str(home), **parameters}, concurrency_limit=1,
            entrypoint_type=EntrypointType.MODULE_PATH, tags=[f"chesslab-home:{tag}"],
            description=f"{(function.__doc__ or '').splitlines()[0]} (home {home})")

    found = []
    if schedules.refresh.enabled:
        r = schedules.refresh
        found.append(deploy(scheduled_refresh, "refresh", Cron(r.cron, timezone=runs.timezone),
                            folders=list(r.folders), label=r.label))
    if schedules.retrain.enabled:
        t = schedules.retrain
        found += [deploy(scheduled_retrain, f"retrain-{kind}",
                         Cron(t.cron, timezone=runs.timezone), kind=kind,
                         min_new_labels=t.min_new_labels) for kind in t.kinds]
    if schedules.evaluate.enabled:
        e = schedules.evaluate
        found.append(deploy(scheduled_evaluate, "evaluate", Interval(e.interval_s),
                            options=e.options, model=None))
    if schedules.make_net.enabled:
        m = schedules.make_net
        found.append(deploy(scheduled_make_net, "make-net",
                            Cron(m.cron, timezone=runs.timezone) if m.cron else None,
                            options=m.options))
    return found


def crash_stale_runs(names: list[str], reason: str) -> list[FlowRun]:
    """Mark the runs of the deployments ``names`` that are still Running, Pending or
    Cancelling Crashed with ``reason`` (which frees their concurrency slots): called by a
    ``serve`` as it starts, when no run of its deployments can be going. The runs marked."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.exceptions import ObjectNotFound
    from prefect.states import Crashed

    with get_client(sync_client=True) as client:
        ids = []
        for name in names:
            try:
                ids.append(client.read_deployment_by_name(name).id)
            except ObjectNotFound:   # first served here
                continue
        if not ids:
            return []
        stale = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=ids)),
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                type=FlowRunFilterStateType(any_=list(STALE_STATES)))))
        for run in stale:
            client.set_flow_run_state(run.id, Crashed(message=reason), force=True)
    return list(stale)


def served_homes(client: Any, flow_name: str) -> list[str]:
    """The homes of the deployments of ``flow_name`` on the server (each ``serve``'s)."""
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName

    found = client.read_deployments(flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])))
    return sorted({str(d.parameters.get("home")) for d in found if d.parameters.get("home")})


def folded_options(deployment: Any, params: dict[str, Any]) -> dict[str, Any]:
    """For a deployment that takes ``options`` (make-net, evaluate): a ``--param`` that is
    none of its parameters is one of its options, set over the served ones
    (``--param hours=8``).

    >>> class Deployment:
    ...     parameter_openapi_schema = {"properties": {"home": {}, "options": {}}}
    ...     parameters = {"home": "/h", "options": {"hours": 4, "epochs": 10}}
    >>> folded_options(Deployment(), {"hours": 8})
    {'options': {'hours': 8, 'epochs': 10}}
    """
    known = set((deployment.parameter_openapi_schema or {}).get("properties", {}))
    if "options" not in known:
        return params
    options = {k: v for k, v in params.items() if k not in known}
    if not options:
        return params
    served = dict(params.get("options") or deployment.parameters.get("options") or {})
    return {**{k: v for k, v in params.items() if k in known},
            "options": {**served, **options}}


def check_parameters(name: str, deployment: Any, params: dict[str, Any]) -> None:
    """Refuse ``--param`` values the deployment's flow does not take: an unknown name, the
    home (a home's runs work on that home), a value of the wrong type.

    >>> schema = {"type": "object", "properties": {"home": {"type": "string"},
    ...           "min_new_labels": {"type": "integer"}}}
    >>> class Deployment:
    ...     parameter_openapi_schema, parameters = schema, {"home": "/h"}
    >>> check_parameters("retrain-nnue", Deployment(), {"min_new_labels": 10})
    >>> check_parameters("retrain-nnue", Deployment(), {"min_new_label": 10})
    Traceback (most recent call last):
    ...
    ValueError: --param min_new_label: retrain-nnue has no such parameter (it takes min_new_labels)
    >>> check_parameters("retrain-nnue", Deployment(), {"min_new_labels": "many"})
    Traceback (most recent call last):
    ...
    ValueError: --param min_new_labels='many': want an integer
    """
    from prefect.utilities.schema_tools import validate

    schema = deployment.parameter_openapi_schema or {}
    known = list(schema.get("properties", {}))
    settable = [key for key in known if key != "home"]
    for key in params:
        if key == "home":
            raise ValueError(f"--param home: a run works on the home it was served for "
                             f"({deployment.parameters.get('home')}); run trigger from the "
                             f"home you mean (chesslab --home H trigger ...)")
        if key not in known:
            raise ValueError(f"--param {key}: {name} has no such parameter (it takes "
                             f"{', '.join(settable) or 'none'})")
    merged = {**deployment.parameters, **params}
    for error in validate(merged, schema, preprocess=False):
        where = [str(p) for p in error.absolute_path]
        shown = f"={error.instance!r}" if where else ""
        raise ValueError(f"--param {'.'.join(where) or 'parameters'}{shown}: want "
                         f"{wanted(error.schema)}")
    if "label" in params:   # what the refresh flow checks first, checked before it starts
        step_config(LabelConfig, merged["label"], "--param label")
    if name.startswith("chesslab-make-net/") and "options" in params:
        MakeNetSchedule(options=merged["options"])


def wanted(schema: dict[str, Any]) -> str:
    """What a JSON schema accepts, in words.

    >>> wanted({"anyOf": [{"type": "string"}, {"type": "null"}]})
    'a string or null'
    >>> wanted({"type": "object"})
    'a JSON object ({"key": value})'
    """
    words = {"string": "a string", "integer": "an integer", "number": "a number",
             "boolean": "true or false", "null": "null", "array": "a JSON list ([...])",
             "object": 'a JSON object ({"key": value})'}
    options = schema.get("anyOf") or [schema]
    kinds = [str(o.get("type")) for o in options if o.get("type")]
    return " or ".join(words.get(k, k) for k in kinds) or "a value of its schema"


def start_run(name: str, parameters: dict[str, Any], home: Path, watch: bool = False,
              poll_s: float = 2.0) -> Any:
    """Start a run of deployment ``name`` of ``home`` once its parameters check out; with
    ``watch`` wait for its final state. The flow run (its ``state`` says how it ended)."""
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound, PrefectHTTPStatusError

    try:
        with get_client(sync_client=True) as client:
            try:
                deployment = client.read_deployment_by_name(name)
            except ObjectNotFound:
                raise LookupError(not_served(client, name, home)) from None
        parameters = folded_options(deployment, parameters)
        check_parameters(name, deployment, parameters)
        return run_deployment(deployment.id, parameters=parameters,
                              timeout=None if watch else 0, poll_interval=poll_s,
                              as_subflow=False)
    except PrefectHTTPStatusError as exc:   # the server refused the run: say why
        detail = exc.response.json().get("detail", "") if exc.response.content else ""
        raise ValueError(f"the Prefect server refused a run of {name!r}: "
                         f"{detail or exc}") from None
    except httpx.HTTPError as exc:  # a server that is down, or a stale address
        raise RuntimeError(f"no Prefect server answers for {name!r}: {exc}") from None


def not_served(client: Any, name: str, home: Path) -> str:
    """Why ``name`` is not on the server: no serve of this job for ``home``, and the homes
    that are served there (a trigger from another home is refused)."""
    others = [h for h in served_homes(client, name.split("/", 1)[0])
              if os.path.abspath(h) != os.path.abspath(home)]
    where = f"; this server serves {', '.join(others)}: trigger from there" if others else ""
    return (f"no deployment {name!r} for home {home} on the Prefect server: is chesslab serve "
            f"running on this home (with this job enabled)?{where}")


def failure_reason(flow_run: Any) -> str:
    """Why a run ended as it did: its state's message, and for a crash (whose message is
    the process's exit code) the last error its logs hold (the exception, with its text)."""
    state = flow_run.state
    message = (state.message or "no reason given") if state else "no state"
    if state is None or state.type != StateType.CRASHED:
        return message
    error = last_error(flow_run.id)
    return f"{message}; the run's log: {error}" if error else message


def last_error(flow_run_id: Any) -> str | None:
    """The last line of the last ERROR record in a run's logs (an exception's own line)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId, LogFilterLevel
    from prefect.client.schemas.sorting import LogSort

    with get_client(sync_client=True) as client:
        logs = client.read_logs(
            log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]),
                                 level=LogFilterLevel(ge_=logging.ERROR)),
            sort=LogSort.TIMESTAMP_DESC, limit=1)
    lines = [line.strip() for line in logs[0].message.splitlines() if line.strip()] \
        if logs else []
    return lines[-1] if lines else None

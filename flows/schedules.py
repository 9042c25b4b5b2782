"""The scheduled jobs as Prefect deployments (``chesslab serve``) and how to start one of them
(``chesslab trigger``).

Three flows, each a few lines around the existing steps (no second execution path):

- ``chesslab-refresh/refresh``: the ``refresh`` composition (ingest step, label step) on each
  watched folder, on a cron;
- ``chesslab-retrain/retrain-KIND``: the ``train`` step with the latest KIND model's recorded
  config, when ``pipelines.ops.retrain_decision`` says enough new labels exist; a new version
  then asks for its evaluation at once;
- ``chesslab-evaluate/evaluate``: the ``evaluate-model`` composition for every version without
  an ``evaluated`` event (or the one named), against ``KIND@best``; the registry is polled on
  an interval, so models trained by hand are evaluated too.

Each run holds its job's lock (``pipelines.ops.job_lock``): a second run of the same job waits
and then finds nothing left to do. A failed run is retried ``runs.retries`` times by Prefect,
then recorded Failed with its reason; the schedules stay active.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from flows.runtime import configure_prefect

configure_prefect()  # before Prefect's first import

from prefect import flow  # noqa: E402
from prefect.deployments.runner import EntrypointType, RunnerDeployment  # noqa: E402
from prefect.schedules import Cron, Interval  # noqa: E402

from flows.evaluate_model import evaluate_model  # noqa: E402
from flows.prefect_runner import PrefectRunner  # noqa: E402
from flows.refresh import refresh  # noqa: E402
from flows.train import TRAIN, TrainJob  # noqa: E402
from pipelines.evaluate.config import EvaluateConfig  # noqa: E402
from pipelines.ingest import discover_sources  # noqa: E402
from pipelines.label.config import LabelConfig  # noqa: E402
from pipelines.ops import (  # noqa: E402
    Schedules,
    baseline_for,
    job_lock,
    retrain_decision,
    unevaluated_models,
)
from pipelines.ops.config import kind_options, step_config  # noqa: E402
from pipelines.train import CONFIGS, resolve_model  # noqa: E402
from warehouse import Lake  # noqa: E402

log = logging.getLogger(__name__)

# A served run's process loads its flow from this module, so the retry policy of the
# schedules file reaches it through the environment ``chesslab serve`` passes on.
RETRIES_ENV, RETRY_DELAY_ENV = "CHESSLAB_RUN_RETRIES", "CHESSLAB_RUN_RETRY_DELAY_S"
RETRIES = int(os.environ.get(RETRIES_ENV, "2"))
RETRY_DELAY_S = float(os.environ.get(RETRY_DELAY_ENV, "60"))
REFRESH = "chesslab-refresh/refresh"
EVALUATE = "chesslab-evaluate/evaluate"


def retrain_deployment(kind: str) -> str:
    return f"chesslab-retrain/retrain-{kind}"


def deployment_name(job: str, target: str | None = None) -> str:
    """``refresh``, ``retrain KIND``, ``evaluate`` -> the deployment's full name."""
    if job == "refresh":
        return REFRESH
    if job == "retrain":
        if not target:
            raise ValueError("trigger retrain: name the model kind (chesslab trigger retrain nnue)")
        return retrain_deployment(target)
    if job == "evaluate":
        return EVALUATE
    raise ValueError(f"trigger: unknown job {job!r} (refresh, retrain, evaluate)")


@flow(name="chesslab-refresh", retries=RETRIES, retry_delay_seconds=RETRY_DELAY_S)
def scheduled_refresh(home: str, folders: list[str], label: dict[str, Any]) -> str:
    """Ingest the new files of ``folders``, then label what is new at the configured depths."""
    config = step_config(LabelConfig, label, "refresh")
    discover_sources(folders)  # a missing folder fails the run here, with its name
    lines = []
    with job_lock(Path(home), "refresh"), PrefectRunner(Path(home)) as runner:
        for folder in folders:
            ingested, labelled = refresh(runner, folder, config, home)
            lines.append(f"{folder}: {sum(s.new_positions for s in ingested)} new positions; "
                         f"{labelled}")
    return "\n".join(lines)


@flow(name="chesslab-retrain", retries=RETRIES, retry_delay_seconds=RETRY_DELAY_S)
def scheduled_retrain(home: str, kind: str, min_new_labels: int) -> str:
    """A new ``kind`` version from the latest one's config once enough new labels exist."""
    with job_lock(Path(home), f"retrain-{kind}"):
        decision = retrain_decision(Lake(home), kind, min_new_labels)
        log.info("retrain %s: %s", kind, decision.reason)
        if not decision.due or decision.config is None:
            return f"retrain {kind}: not due: {decision.reason}"
        config = step_config(CONFIGS[kind], {**decision.config, "progress": False}, "retrain")
        with PrefectRunner(Path(home)) as runner:
            model = runner.run(TRAIN, TrainJob(kind, config), home)
    request_evaluation(model.model_id)
    return f"retrain {kind}: {model.model_id} from {decision.model_id}'s config ({decision.reason})"


@flow(name="chesslab-evaluate", retries=RETRIES, retry_delay_seconds=RETRY_DELAY_S)
def scheduled_evaluate(home: str, options: dict[str, Any], model: str | None = None) -> str:
    """Evaluate ``model``, or every version without an ``evaluated`` event, against
    ``KIND@best`` (the configured baseline for a kind's first model) and the ladder."""
    lake = Lake(home)
    lines, failed = [], []
    with job_lock(Path(home), "evaluate"):
        names = [resolve_model(lake, model).model_id] if model else unevaluated_models(lake)
        with PrefectRunner(Path(home)) as runner:
            for model_id in names:
                own = kind_options(options, model_id.split("@", 1)[0])
                default = own.get("against")
                try:  # one broken version must not keep the versions after it waiting
                    config = step_config(EvaluateConfig, {
                        **own, "model": model_id,
                        "against": baseline_for(lake, model_id, default)}, "evaluate")
                    lines.append(str(evaluate_model(runner, config, home)))
                except Exception as exc:
                    log.warning("evaluate %s failed: %s", model_id, exc)
                    failed.append(f"{model_id}: {exc}")
    if failed:
        raise RuntimeError(f"evaluate: {len(failed)} of {len(names)} versions failed: "
                           + "; ".join(failed))
    return "\n".join(lines) or "evaluate: no new model version"


def request_evaluation(model_id: str) -> None:
    """Start the evaluate deployment for a new version (when served; the registry poll
    catches it otherwise)."""
    from prefect.context import FlowRunContext
    from prefect.deployments import run_deployment

    context = FlowRunContext.get()
    if context is None or context.flow_run is None or context.flow_run.deployment_id is None:
        return
    try:
        run_deployment(EVALUATE, parameters={"model": model_id}, timeout=0, as_subflow=False)
    except Exception as exc:  # no evaluate deployment served: the poll will find it
        log.warning("could not start the evaluation of %s: %s", model_id, exc)


def retry_environment(schedules: Schedules) -> dict[str, str]:
    """The environment that gives served runs the schedules file's retry policy."""
    return {RETRIES_ENV: str(schedules.runs.retries),
            RETRY_DELAY_ENV: str(schedules.runs.retry_delay_s)}


def deployments(schedules: Schedules, home: Path) -> list[RunnerDeployment]:
    """The deployments of ``schedules`` for the warehouse at ``home`` (served runs take the
    retry policy from :func:`retry_environment`, exported by ``chesslab serve``)."""
    runs = schedules.runs

    def deploy(function: Any, name: str, schedule: Any, **parameters: Any) -> RunnerDeployment:
        retried = function.with_options(retries=runs.retries,
                                        retry_delay_seconds=runs.retry_delay_s)
        return retried.to_deployment(
            name=name, schedules=[schedule], parameters={"home": str(home), **parameters},
            concurrency_limit=1, entrypoint_type=EntrypointType.MODULE_PATH,
            description=(function.__doc__ or "").splitlines()[0])

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
    return found


def start_run(name: str, parameters: dict[str, Any], watch: bool = False,
              poll_s: float = 2.0) -> Any:
    """Start a run of deployment ``name``; with ``watch`` wait for its final state. The flow
    run (its ``state`` says how it ended)."""
    import httpx
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    try:
        return run_deployment(name, parameters=parameters, timeout=None if watch else 0,
                              poll_interval=poll_s, as_subflow=False)
    except ObjectNotFound:
        raise LookupError(f"no deployment {name!r} on the Prefect server: is chesslab serve "
                          f"running (with this job enabled)?") from None
    except httpx.HTTPError as exc:  # a server that is down, or a stale address
        raise RuntimeError(f"no Prefect server answers for {name!r}: {exc}") from None

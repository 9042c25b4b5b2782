"""Operations without Prefect: the schedules file, what is due (retraining, evaluation) and the
lock that keeps two runs of one scheduled job apart. ``flows/schedules.py`` serves them."""
from pipelines.ops.config import (
    EvaluateSchedule,
    OpsConfigError,
    RefreshSchedule,
    RetrainSchedule,
    RunPolicy,
    Schedules,
    load_schedules,
)
from pipelines.ops.due import RetrainDecision, baseline_for, retrain_decision, unevaluated_models
from pipelines.ops.lock import job_lock

__all__ = ["EvaluateSchedule", "OpsConfigError", "RefreshSchedule", "RetrainDecision",
           "RetrainSchedule", "RunPolicy", "Schedules", "baseline_for", "job_lock",
           "load_schedules", "retrain_decision", "unevaluated_models"]

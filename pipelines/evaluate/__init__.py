"""Evaluating a model: an SPRT match against a baseline and a gauntlet on the Stockfish ladder,
both recorded as tournaments, then ``evaluated`` (and ``promoted``) model events.

Run by ``flows/evaluate_model.py`` (the tournaments as ``tournament`` steps).

>>> from pipelines.evaluate import EvaluateConfig, plan_evaluation
"""
from pipelines.evaluate.config import EvaluateConfig, EvaluateError
from pipelines.evaluate.models import model_engine_spec
from pipelines.evaluate.run import (
    Evaluation,
    EvaluationPlan,
    plan_evaluation,
    record_evaluation,
    summarize,
)

__all__ = ["EvaluateConfig", "EvaluateError", "Evaluation", "EvaluationPlan",
           "model_engine_spec", "plan_evaluation", "record_evaluation", "summarize"]

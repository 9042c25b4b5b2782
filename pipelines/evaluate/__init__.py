"""Evaluating a model: an SPRT match against a baseline and a gauntlet on the Stockfish ladder,
both recorded as tournaments, then ``evaluated`` (and ``promoted``) model events.

>>> from pipelines.evaluate import EvaluateConfig, evaluate_model
"""
from pipelines.evaluate.config import EvaluateConfig, EvaluateError
from pipelines.evaluate.models import model_engine_spec
from pipelines.evaluate.run import (
    Evaluation, EvaluationPlan, evaluate_model, plan_evaluation, play, record_evaluation,
    summarize,
)

__all__ = ["EvaluateConfig", "EvaluateError", "Evaluation", "EvaluationPlan", "evaluate_model",
           "model_engine_spec", "plan_evaluation", "play", "record_evaluation", "summarize"]

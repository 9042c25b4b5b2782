"""Late-move-reduction data (paper 003 part II): self-play that logs LMR decisions, and their
largest-safe-reduction labels from re-searches. The regression is ``pipelines.kinds.lmr.fit``."""
from pipelines.lmr.config import LABEL_RULES, LmrDataConfig, LmrDataError
from pipelines.lmr.label import largest_safe_reduction
from pipelines.lmr.run import LmrDataSummary, plan_lmr_data

__all__ = ["LABEL_RULES", "LmrDataConfig", "LmrDataError", "LmrDataSummary",
           "largest_safe_reduction", "plan_lmr_data"]

"""Prefect's settings as chesslab sets them: applied before Prefect's first import.

Prefect reads its settings once, when first imported, so every module that imports Prefect
calls :func:`configure_prefect` first. This module does not import Prefect.
"""
from __future__ import annotations

import os

# Quiet, offline-friendly defaults; a user's own settings win.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
}


def configure_prefect() -> None:
    """Apply chesslab's Prefect defaults unless the environment already sets them."""
    for name, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(name, value)

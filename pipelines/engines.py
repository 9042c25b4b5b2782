"""The ``engines`` table: every step that records a player registers its identity here.

Labels (``pipelines.label``) and tournament players (``pipelines.tournament``) both call
:func:`register_engine`, so the same engine with the same settings gets one ``engine_id`` and
one row, whichever step met it first.
"""
from __future__ import annotations

import logging

from engines.identity import EngineIdentity
from warehouse import Lake

log = logging.getLogger(__name__)


def register_engine(lake: Lake, identity: EngineIdentity) -> str:
    """Write the identity's ``engines`` row unless its ``engine_id`` is there; the id.

    Idempotent: calling it again adds nothing, and two writers racing on a new engine write
    the same key, which the table's view (and ``compact``) keep once.
    """
    engine_id = identity.engine_id
    known = lake.read("engines", columns=["engine_id"]).column("engine_id").to_pylist()
    if engine_id not in known:
        lake.write("engines", [identity.row()])
        log.info("registered engine %s (%s %s)", engine_id, identity.name, identity.version)
    return engine_id

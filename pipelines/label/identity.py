"""The labelling engine's identity: the one identity of :mod:`engines.identity`, registered
in the ``engines`` table by :func:`pipelines.engines.register_engine` (kept importable from
here for ``pipelines.label.EngineIdentity``)."""
from engines.identity import EngineIdentity
from pipelines.engines import register_engine

__all__ = ["EngineIdentity", "register_engine"]

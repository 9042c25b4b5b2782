"""Models, the bottom floor of ``pipelines/``: the registry (:mod:`~pipelines.models.registry`:
names, versions, ``@latest`` and ``@best``, events, the artifact's hash check, version
numbers), the model kinds (:mod:`~pipelines.models.kinds`: each declared once in
``pipelines/kinds/<name>/kind.py`` and found on disk) and the one resolver of a model name to
the engine options that deploy it (:mod:`~pipelines.models.deploy`). Nothing here imports the
training code. This package's own import is cheap: the registry and the resolver (which read
the warehouse) are imported from their modules.
"""
from pipelines.models.names import (
    NAME,
    ModelArtifactError,
    ModelError,
    ModelNotFoundError,
    ModelVersion,
)

__all__ = ["NAME", "ModelArtifactError", "ModelError", "ModelNotFoundError", "ModelVersion"]

"""The model kinds, one folder each: ``pipelines/kinds/<name>/kind.py`` defines ``KIND``
(:class:`pipelines.models.kinds.ModelKind`). :func:`pipelines.models.kinds.kind_names` finds
them on disk; nothing else lists them. ``docs/adding.md`` says how to add one."""

"""Imported for its effect: the importing process, and every child it forks, dies with its
parent.

Named in a fork server's preload list (``pipelines.ingest.run.worker_pool``): the fork server
and the resource tracker waiting on it are started by ``multiprocessing`` with no hook to run
before the server's main loop, and a worker it forks reads its start-up data from chesslab
before any pool initializer runs; both would outlive a ``kill -9`` of chesslab otherwise.
"""
import os

from pipelines.processes import die_with_parent


def _child_dies_with_this_process(parent: int = os.getpid()) -> None:
    die_with_parent()
    if os.getppid() != parent:   # the parent died before the request took effect
        os._exit(1)


die_with_parent()
os.register_at_fork(after_in_child=_child_dies_with_this_process)

"""Games on a Dask cluster: batches of game pairs played by workers, added up by the client.

Everything in chesslab that plays games hands them to :mod:`pipelines.games.cluster`: a
tournament (and ``evaluate``, ``checkpoints``, the SPRT matches) plans its missing games as
:class:`~pipelines.games.batch.GameBatch` units (a few game pairs: same opening, colours
reversed), the cluster's workers play them (:func:`~pipelines.games.batch.play_batch`), and the
client writes each game to the warehouse as its batch comes back. The one-machine path is the
same code on a local Dask cluster (``--workers N`` processes, or ``--concurrency N`` games on
threads of this process).

A batch carries what its games are played with, not a tournament's config: the players, the
search :class:`~pipelines.games.limits.Limits`, the
:class:`~pipelines.games.adjudication.Adjudication` rules, the slots and their openings. One
game is :class:`~pipelines.games.game.GamePlayer`'s. Nothing here imports
``pipelines.tournament``, which stands on this package.
"""
from pipelines.games.config import GamesOptions

__all__ = ["GamesOptions"]

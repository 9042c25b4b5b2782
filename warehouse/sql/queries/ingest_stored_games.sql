-- The keys of `batch_games` (game_id) that `known_games` (game_id, source_id: the games parts
-- on disk) holds from a committed source, one listed in `committed_sources` (the sources parts
-- on disk, each written after all of its file's rows). Ingest counts those games as duplicates
-- and writes nothing of them again; games of a source killed mid-ingest do not count.
select distinct known.game_id
from known_games as known
semi join committed_sources on committed_sources.source_id = known.source_id
semi join batch_games on batch_games.game_id = known.game_id

-- depends: ratings
-- The most recent rating table of each source (tournament id or PGN path), best first.
with ratings as (select * from ratings),
latest as (
    select distinct on (source) source, rating_id
    from ratings
    order by source, computed_at desc
)
select r.source, r.tournament_id, r.rank, r.player, r.elo, r.plus, r.minus, r.games,
    r.score, r.oppo, r.draws, r.anchors, r.computed_at
from ratings r
join latest l using (source, rating_id)
order by r.source, r.rank

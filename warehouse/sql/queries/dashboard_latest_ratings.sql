-- The latest rating run of each source (tournament or PGN), one row per player.
with ratings as (select * from ratings),
latest as (
    select distinct on (source) source, rating_id
    from ratings
    order by source, computed_at desc
)
select r.source, r.rank, r.player, round(r.elo) as elo, round(r.plus) as plus,
       round(r.minus) as minus, r.games, r.score, r.draws
from ratings r
join latest l using (source, rating_id)
order by r.source, r.rank

-- The rating pools: each source's latest rating table (a tournament, named by its event, or a
-- PGN file), newest first, with its player and game counts.
with ratings as (select * from latest_ratings),
tournaments as (select * from tournaments)
select r.source, coalesce(any_value(t.event), r.source) as pool, count(*) as players,
    sum(r.games) // 2 as games, max(r.computed_at) as computed_at
from ratings r
left join tournaments t on t.tournament_id = r.tournament_id
group by r.source
order by computed_at desc, pool

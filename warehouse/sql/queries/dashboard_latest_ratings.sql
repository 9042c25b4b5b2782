-- One rating pool's latest table ($source: a tournament id or PGN path), best first: each
-- player by its name in the tournament (its engine spec or model name).
with ratings as (select * from latest_ratings)
select rank, player, round(elo, 1) as elo, round(plus, 1) as plus, round(minus, 1) as minus,
    games, score, draws, anchors
from ratings
where source = $source
order by rank

-- depends: ratings
-- The most recent rating table of each source (tournament id or PGN path), best first.
-- column source: where the games came from: the tournament id or the PGN path
-- column tournament_id: tournaments.tournament_id; null when rated from a PGN file
-- column rank: 1-based place in the table, best first
-- column player: the player's name in the games
-- column elo: the player's BayesElo rating
-- column plus: Elo above elo to the upper end of the confidence interval
-- column minus: Elo below elo to the lower end of the confidence interval
-- column games: games the player played in the rated set
-- column score: points the player scored
-- column oppo: games-weighted average rating of the player's opponents
-- column draws: drawn games of the player
-- column anchors: the anchored players' given ratings, JSON object name -> Elo
-- column computed_at: when the table was computed
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

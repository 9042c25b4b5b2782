-- One page of a tournament's finished games ($tournament; $page from 1, $page_size games a
-- page), in the order they finished, numbered, with the number of games in all.
with games as (select * from tournament_games),
numbered as (
    select row_number() over (order by finished_at nulls last, round, pairing, game_in_pair)
            as game_no,
        count(*) over () as games_total,
        game_key, pairing, round, game_in_pair, white, black, result, termination, reason,
        plies, eco, opening, array_to_string(opening_moves, ' ') as opening_moves,
        round(duration_s, 1) as duration_s, finished_at
    from games
    where tournament_id = $tournament
)
select *
from numbered
where game_no > (greatest(coalesce(try_cast($page as integer), 1), 1) - 1) * $page_size
order by game_no
limit $page_size

-- The macros every warehouse connection defines (warehouse/catalog.py): expressions that more
-- than one view or derived table needs, written once.
-- side_result: a game's result tag from the side to move's view: 1 win, 0.5 draw, 0 loss; null
-- when unknown ('*' or no game).
create or replace macro side_result(game_result, side_to_move) as (case
    when game_result = '1/2-1/2' then 0.5
    when game_result = '1-0' then (case when side_to_move = 'w' then 1.0 else 0.0 end)
    when game_result = '0-1' then (case when side_to_move = 'b' then 1.0 else 0.0 end)
end)::double

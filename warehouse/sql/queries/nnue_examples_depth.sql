-- The nnue_examples view at one engine ($engine_id) and depth ($depth): examples, those with
-- a game, with a result, in check, and their mean score (side to move's view, centipawns).
with nnue_examples as (select * from nnue_examples)
select
    count(*) as examples,
    count(game_id) as with_game,
    count(result) as with_result,
    count(*) filter (where in_check) as in_check,
    round(avg(score_cp), 1) as mean_score_cp
from nnue_examples
where engine_id = $engine_id and depth = $depth

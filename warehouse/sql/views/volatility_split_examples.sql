-- depends: volatility_examples, moves
-- Paper 003's volatility examples with the split unit of the NNUE data set: split_key is the
-- lowest game the position was played in ('position:<key>' for EPD/FEN-only positions), so
-- the same md5_number(split_key) % 1000 test sends the same games to validation in both data
-- sets and a game's positions never straddle the splits.
with first_game as (
    select position_key, min(game_id) as game_id
    from moves
    group by position_key
)
select
    e.*,
    coalesce(f.game_id, 'position:' || e.position_key::varchar) as split_key
from volatility_examples e
left join first_game f using (position_key)

-- Label engines and depths the NNUE data set can use, with their example counts: engines of
-- the labels table first, the one with the most examples first (its deepest depth is the
-- default), then games' [%eval] annotations ('pgn:...'), the default only where no engine
-- labelled anything.
with examples as (select * from nnue_examples),
counts as (
    select engine_id, depth, count(*) as positions
    from examples
    group by all
)
select engine_id, depth, positions
from counts
order by engine_id like 'pgn:%', sum(positions) over (partition by engine_id) desc, engine_id,
    depth desc

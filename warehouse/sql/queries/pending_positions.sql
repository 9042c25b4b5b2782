-- Candidate positions still missing a label for one of the requested depths, in key order.
-- label_candidates: (position_key, fen) registered by the caller, each key once.
-- $engine_id: the labelling engine; $depths: the requested depths (INTEGER[]);
-- $searched_limit: with --nodes N, 'nodes N' (a position searched so already has every depth
-- that search could give), else null; $limit: the most positions to return (null: all).
-- The first $limit positions are found by a top-N over the missing (position, depth) pairs,
-- never by grouping every candidate: a position has at most len($depths) such pairs, so the
-- first $limit * len($depths) pairs hold the first $limit positions, and the memory needed
-- depends on the limit, not on how many positions the warehouse holds.
with requested as (
    select unnest($depths::integer[]) as depth
),
done as (
    select position_key, depth, search_limit from labels where engine_id = $engine_id
),
searched as (
    select distinct position_key from done where search_limit = $searched_limit
),
missing as (
    select c.position_key, c.fen, r.depth
    from label_candidates c
    cross join requested r
    anti join done d on d.position_key = c.position_key and d.depth = r.depth
    anti join searched s on s.position_key = c.position_key
),
first_pairs as (
    select position_key, fen, depth
    from missing
    order by position_key
    limit $limit * len($depths::integer[])
)
select position_key, any_value(fen) as fen, list(depth order by depth) as depths
from first_pairs
group by position_key
order by position_key
limit $limit

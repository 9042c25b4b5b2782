-- Candidate positions still missing a label for one of the requested depths, in key order.
-- label_candidates: (position_key, fen) registered by the caller.
-- $engine_id: the labelling engine; $depths: the requested depths (INTEGER[]);
-- $searched_limit: with --nodes N, 'nodes N' (a position searched so already has every depth
-- that search could give), else null; $limit: the most positions to return (null: all).
with candidates as (
    select position_key, any_value(fen) as fen from label_candidates group by position_key
),
requested as (
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
    from candidates c
    cross join requested r
    anti join done d on d.position_key = c.position_key and d.depth = r.depth
    anti join searched s on s.position_key = c.position_key
)
select position_key, any_value(fen) as fen, list(depth order by depth) as depths
from missing
group by position_key
order by position_key
limit $limit

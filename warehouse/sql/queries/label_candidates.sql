-- Positions a label run may label: the positions view filtered by the user's --where predicate.
-- {where} is replaced by the predicate (or `true`) after warehouse.predicate has checked that
-- it is one expression over the positions columns; it is the only user text put into SQL.
-- It stands on lines of its own so that a trailing comment in it ends before the parenthesis.
select position_key, fen
from positions
where (
{where}
)

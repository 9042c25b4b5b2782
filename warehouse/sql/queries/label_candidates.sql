-- Positions a label run may label: the positions view filtered by the user's --where predicate.
-- {where} is replaced by the predicate (or `true`) after pipelines.label.pending has checked
-- that the whole statement is one read-only select; it is the only user text put into SQL.
select position_key, fen
from positions
where ({where})

-- depends: volatility_examples
-- Label engines with positions labelled at depths 5, 6 and 7, the most examples first (the
-- default engine of chesslab train volatility).
select engine_id, count(*) as positions
from volatility_examples
group by engine_id
order by positions desc, engine_id

-- Paper 003's Table 6.1 analogue: every formula fitted for each lmr model, best R^2 first
-- ($model: one model, or null for all).
with fits as (select * from lmr_fits)
select model_id, formula, coefficients, round(r2, 4) as r2, paper_coefficients, paper_r2,
    label, rows
from fits
where $model is null or model_id = $model
order by model_id, r2 desc

-- Finished model versions of one kind with their latest status, newest first (the resolver).
select m.model_id, m.kind, m.name, m.version, m.config, m.artifact_path, m.artifact_sha256,
    m.created_at, s.status
from models m
left join model_status s using (model_id)
where m.kind = $kind
order by m.version desc

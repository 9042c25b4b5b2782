"""Paper 004 and 002's self-play training of the policy-value net for the PUCT engine: random
endgame starts (:mod:`pipelines.puct.endgames`), self-play games with the PUCT search
(:mod:`pipelines.puct.selfplay`) stored as training samples, and the round loop
(:mod:`pipelines.puct.loop`). Nothing here imports Prefect; ``flows/selfplay_train.py``
orchestrates."""

"""Internal: the driver behind the facade: the pipeline that chains the stages
(:mod:`.api`), the ``Session`` and the one-shot entry points (:mod:`.session`), the one
options object they share (:mod:`.options`), ``check`` (:mod:`.checking`), the budget
feasibility report (:mod:`.feasibility`) and the check of a lowering's losses
(:mod:`.losses`)."""

"""Policies the pipeline stages call, one enforcing module each.

- :mod:`compiler.policy.tools`: tool visibility, approval, provider names, the run-time gate
- :mod:`compiler.policy.resources`: visible resources (include/exclude, workspace roots)
- :mod:`compiler.policy.creator`: what a preset or character card may not set
"""

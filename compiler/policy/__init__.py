"""Policies the pipeline stages call, one enforcing module each.

Internal: the public names are :class:`compiler.ToolGate` and :class:`compiler.PlatformPolicy`.

- :mod:`compiler.policy.tools`: the run-time tool gate (visibility itself is computed by
  :func:`compiler.policy.tool_catalogue.visible_tools`)
- :mod:`compiler.policy.resources`: visible resources (include/exclude, workspace roots)
- :mod:`compiler.policy.creator`: what a preset or character card may not set
"""

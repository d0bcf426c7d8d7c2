"""Whether a compile's set-up can fit: the floor (what cannot be cut, exact), the budget, the
window and the reserve (:func:`compiler.check_budget`, ``apc check --budget``).

Internal: the public name is :class:`compiler.Feasibility`.
"""

from __future__ import annotations

from dataclasses import field

from compiler._records import record
from compiler.errors import Diagnostic


@record
class Feasibility:
    """Whether what cannot be cut fits: the floor (exact tokens), the budget, the window."""

    floor_tokens: int
    budget: int | None
    window: int | None
    reserve: int
    model: str
    #: the compile's warnings (the inputs', the profile's, ...)
    warnings: list[Diagnostic] = field(default_factory=list)
    #: why a compile at the budget fails though the floor fits it (the estimating dialects
    #: hold back a margin of the budget), and its hint; None: it does not
    failure: str | None = None
    failure_hint: str | None = None

    @property
    def problem(self) -> str | None:
        """Why the set-up cannot fit (None: it can)."""
        if self.window is not None and self.floor_tokens + self.reserve > self.window:
            return (
                f"the parts that cannot be cut need {self.floor_tokens} tokens and "
                f"{self.reserve} are reserved for the response: "
                f"{self.floor_tokens + self.reserve} > the {self.window}-token window of "
                f"{self.model}"
            )
        if self.budget is not None and self.floor_tokens > self.budget:
            return (
                f"the parts that cannot be cut need {self.floor_tokens} tokens; "
                f"the budget is {self.budget}"
            )
        return self.failure

    def diagnostics(self, file: str) -> list[Diagnostic]:
        """The warnings, then ``context.budget_infeasible`` (an error) when :attr:`problem`
        says the set-up cannot fit (``apc check`` and ``/v1/check`` report these)."""
        problem = self.problem
        if problem is None:
            return list(self.warnings)
        hint = (
            "raise the budget or the model's window, lower the reserve, or let more "
            "components be cut (required=false, strategy=truncate|summarize)"
        )
        if problem == self.failure and self.failure_hint:
            hint = self.failure_hint  # the compile's own (with the margin held back)
        return [
            *self.warnings,
            Diagnostic(code="context.budget_infeasible", message=problem, file=file, hint=hint),
        ]

"""The fit stage: the only stage that counts tokens or changes content length."""

from compiler.fit.allocator import FitResult, fit
from compiler.fit.ledger import AppliedBudget, BudgetLedger, LedgerEntry

__all__ = ["AppliedBudget", "BudgetLedger", "FitResult", "LedgerEntry", "fit"]

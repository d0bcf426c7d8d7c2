"""The fit stage: the only stage that counts tokens or changes content length."""

from compiler.fit.allocator import FitResult, fit
from compiler.fit.budgets import CategoryBudgets, TotalBudget, total_budget
from compiler.fit.ledger import AppliedBudget, BudgetLedger, CategoryTotal, LedgerEntry
from compiler.fit.prices import PriceMemo
from compiler.fit.strategy import effective_strategy, floor_tokens
from compiler.fit.summarize import (
    ExtractiveSummarizer,
    FirstSentences,
    Summarizer,
    SummaryCache,
    SummaryRequest,
    TextSamples,
)
from compiler.fit.truncate import truncate_text
from compiler.fit.turns import without_inserted

__all__ = [
    "AppliedBudget",
    "BudgetLedger",
    "CategoryBudgets",
    "CategoryTotal",
    "ExtractiveSummarizer",
    "FirstSentences",
    "FitResult",
    "LedgerEntry",
    "PriceMemo",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "TextSamples",
    "TotalBudget",
    "effective_strategy",
    "fit",
    "floor_tokens",
    "total_budget",
    "truncate_text",
    "without_inserted",
]

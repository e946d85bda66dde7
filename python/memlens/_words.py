"""Counts in words for messages, as the page writes them: "1 rank", "3 ranks", "1,024 ranks"."""
from __future__ import annotations

from typing import Optional


def plural(n: int, one: str, many: Optional[str] = None) -> str:
    """`n` with thousands separators and the noun in the number it takes (`many` for irregular
    plurals; `one + "s"` otherwise)."""
    return f"{n:,} {one if n == 1 else (many if many is not None else one + 's')}"

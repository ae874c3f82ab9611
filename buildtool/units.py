"""How sizes and counts are printed: one place, so every summary line reads the same.

size(n): bytes for a person (`512 B`, `61.5 KiB`, `3.43 MiB`); exact(n): the byte count itself,
with thousands separators (`62,992 B`), where a plan's exact bytes matter; count(n): a large count
(`154.1 M`). Cheap to import: the thin daemon client prints plan summaries with it."""

from __future__ import annotations


def size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n / (1024 * 1024):,.2f} MiB"


def exact(n: int) -> str:
    return f"{n:,} B"


def size_exact(n: int, *notes: str) -> str:
    """size(n), then in brackets the exact bytes when size rounds them (from 1 KiB on) and any notes,
    `61.5 KiB (62,992 B; lower bound ...)`."""
    inside = ([exact(n)] if n >= 1024 else []) + list(notes)
    return f"{size(n)} ({'; '.join(inside)})" if inside else size(n)


def kib(n: int) -> str:
    """In KiB whatever the size (a line of several sizes against a board's, side by side)."""
    return f"{n / 1024:,.1f} KiB"


def count(n: int) -> str:
    if n < 10_000:
        return f"{n:,}"
    if n < 10_000_000:
        return f"{n / 1e3:,.1f} k"
    return f"{n / 1e6:,.1f} M"


__all__ = ["size", "exact", "size_exact", "kib", "count"]

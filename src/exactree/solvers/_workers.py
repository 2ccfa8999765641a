"""How many workers a search's ``n_jobs`` means (joblib's convention)."""

from __future__ import annotations


def n_workers(n_jobs: int | None) -> int:
    """joblib's reading of ``n_jobs``: None is 1 unless a ``joblib.parallel_config`` says
    otherwise, -1 every core."""
    if n_jobs == 1:
        return 1
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(n_jobs)))

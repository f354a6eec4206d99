"""How big a difference a bout can see: the exact power of the paired McNemar test the
report compares two contestants with, and the smallest difference in resolve rate it
detects with a given power.

On ``tasks`` tasks, each task is discordant in one contestant's favour (it resolves the
bug, the other does not) with probability ``better``, in the other's with ``worse``. The
test is exact: given ``d`` discordant tasks, the two-sided binomial test of the ``b`` in
the first's favour against ``Binomial(d, 1/2)`` rejects at ``alpha`` when
``2 P(X <= min(b, d - b)) <= alpha``. Its power sums the rejecting outcomes'
probabilities over ``d ~ Binomial(tasks, better + worse)`` and
``b ~ Binomial(d, better / (better + worse))``.

Before a bout, the discordance is unknown. :func:`detectable_difference` takes, unless
told the share of discordant tasks, the two contestants' outcomes as independent with
resolve rates around one half (``0.5 + delta/2`` and ``0.5 - delta/2``): the most
discordant case, so the difference it gives is an upper bound; agents that tend to
resolve the same bugs are told apart at smaller ones.
"""

from __future__ import annotations

import math

from bugbout.core.report.statistics import LEVEL

POWER = 0.8
"""The power a bout is sized for."""
ALPHA = LEVEL
"""The two-sided level of the test: the one the report's comparisons test at."""
NEGLIGIBLE = 1e-15
"""What the outcomes a power leaves out may weigh, at most."""


def mcnemar_power(tasks: int, better: float, worse: float, alpha: float = ALPHA) -> float:
    """The probability that the exact McNemar test rejects at ``alpha`` on ``tasks``
    paired tasks, discordant in the first's favour with probability ``better`` and in the
    second's with ``worse``."""
    return _power(tasks, better, worse, _criticals(tasks, alpha))


def detectable_difference(
    tasks: int, power: float = POWER, alpha: float = ALPHA, discordant: float | None = None
) -> float | None:
    """The smallest difference in resolve rate (0 to 1) the exact McNemar test detects
    with ``power`` at ``alpha`` on ``tasks`` paired tasks, to 1e-4; ``None`` when none
    can be. ``discordant``: the share of tasks the two contestants disagree on (by
    default the independent, most discordant case of the module's docstring)."""
    cuts = _criticals(tasks, alpha)

    def reaches(delta: float) -> bool:
        return _power(tasks, *_split(delta, discordant), cuts) >= power

    top = 1.0 if discordant is None else discordant
    if tasks <= 0 or not reaches(top):
        return None
    low, high = 0.0, top
    while high - low > 1e-4:
        middle = (low + high) / 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def _power(tasks: int, better: float, worse: float, cuts: list[int]) -> float:
    discordant = better + worse
    if tasks <= 0 or discordant <= 0:
        return 0.0
    share = better / discordant
    power = 0.0
    for d, weight in _pmfs(tasks, discordant):
        cut = cuts[d]
        if cut >= 0:
            power += weight * sum(q for b, q in _pmfs(d, share) if b <= cut or b >= d - cut)
    return min(power, 1.0)


def _pmfs(n: int, p: float) -> list[tuple[int, float]]:
    """The outcomes of ``Binomial(n, p)`` within 12 standard deviations of its mean, with
    their probabilities (those outside weigh less than :data:`NEGLIGIBLE` together)."""
    if p <= 0 or p >= 1:
        return [(n if p >= 1 else 0, 1.0)]
    spread = 12 * math.sqrt(n * p * (1 - p)) + 1
    low, high = max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread))
    q, odds, found = _pmf(low, n, p), p / (1 - p), []
    for k in range(low, high + 1):
        found.append((k, q))
        q *= (n - k) / (k + 1) * odds
    return found


def _split(delta: float, discordant: float | None) -> tuple[float, float]:
    """The probabilities of a task discordant each way, for a difference ``delta``."""
    if discordant is None:
        return (0.5 + delta / 2) ** 2, (0.5 - delta / 2) ** 2
    return (discordant + delta) / 2, (discordant - delta) / 2


def _criticals(tasks: int, alpha: float) -> list[int]:
    """For each number ``d`` of discordant tasks up to ``tasks``, the largest ``b`` below
    ``d / 2`` the exact test rejects (``-1``: none)."""
    cuts = [-1]
    for d in range(1, tasks + 1):
        cut, tail = -1, 0.0
        for b, q in _pmfs(d, 0.5):
            tail += q
            if b >= (d + 1) // 2 or 2 * tail > alpha * (1 + 1e-9):
                break
            cut = b
        cuts.append(cut)
    return cuts


def _pmf(k: int, n: int, p: float) -> float:
    """``P(X = k)`` for ``X ~ Binomial(n, p)``."""
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))

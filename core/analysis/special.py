"""SciPy's special functions, imported when first used: SciPy costs the window 0.3-0.5 s at its start, and the
window needs none of them until something is judged or predicted."""
from __future__ import annotations

from typing import Any


def stdtr(dof: Any, t: Any) -> Any:
    """Student's t distribution's CDF (scipy.special.stdtr)."""
    from scipy.special import stdtr as f
    return f(dof, t)


def stdtrit(dof: Any, p: Any) -> Any:
    """Its inverse (scipy.special.stdtrit)."""
    from scipy.special import stdtrit as f
    return f(dof, p)


def bdtr(k: Any, n: Any, p: Any) -> Any:
    """The binomial CDF, P(X ≤ k) for n trials of probability p (scipy.special.bdtr)."""
    from scipy.special import bdtr as f
    return f(k, n, p)


def nnls(a: Any, b: Any) -> Any:
    """Non-negative least squares (scipy.optimize.nnls)."""
    from scipy.optimize import nnls as f
    return f(a, b)

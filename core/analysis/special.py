"""SciPy's special functions, imported when first used: SciPy costs the window 0.3-0.5 s at its start, and the
window needs none of them until something is judged or predicted."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

Values = npt.NDArray[np.float64]  # what SciPy's functions give (a NumPy scalar for scalar arguments)


def stdtr(dof: npt.ArrayLike, t: npt.ArrayLike) -> Values:
    """Student's t distribution's CDF (scipy.special.stdtr)."""
    from scipy.special import stdtr as f
    return f(dof, t)


def stdtrit(dof: npt.ArrayLike, p: npt.ArrayLike) -> Values:
    """Its inverse (scipy.special.stdtrit)."""
    from scipy.special import stdtrit as f
    return f(dof, p)


def bdtr(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> Values:
    """The binomial CDF, P(X ≤ k) for n trials of probability p (scipy.special.bdtr)."""
    from scipy.special import bdtr as f
    return f(k, n, p)


def betaincinv(a: npt.ArrayLike, b: npt.ArrayLike, y: npt.ArrayLike) -> Values:
    """The inverse of the regularized incomplete beta function: the beta(a, b) quantile y (scipy.special.betaincinv)."""
    from scipy.special import betaincinv as f
    return f(a, b, y)


def nnls(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[Values, float]:
    """Non-negative least squares (scipy.optimize.nnls): the solution and the residual's norm."""
    from scipy.optimize import nnls as f
    x, norm = f(a, b)
    return x, float(norm)

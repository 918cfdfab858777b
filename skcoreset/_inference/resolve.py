"""Family parameters estimated from the data (``"auto"``), before a fit.

A family never fits anything (it sits below the inference code): one with parameters set to
``"auto"`` names the family whose fit gives the means it needs (``pilot_family``) and turns
those means into its parameters (``resolve``, e.g. the negative binomial overdispersion by
the method of moments). The pilot fit is here, called by the estimators and the coreset
constructors.
"""

import numpy as np

from .._backend import float_rows
from .._design import linear_predictor
from .dispersion import estimate_dispersion
from .laplace import laplace

# Rows of the pilot fit (evenly spaced through the rows of positive weight).
PILOT_ROWS = 10_000


def resolve_family(family, X, y, sample_weight, *, prior_prec, fit_intercept, offset=None,
                   return_dispersion=False, rows=None):
    """``family`` with every parameter set to ``"auto"`` estimated from the given rows.

    The Laplace mode of ``family.pilot_family()`` on at most 10,000 rows of positive weight,
    evenly spaced, gives the means that ``family.resolve`` turns into its parameters; a
    family with nothing to estimate is returned as it is. A family whose overdispersion has
    derivatives in ``log alpha`` (the negative binomial model) then refines that start to
    the mode of the joint posterior on the same rows (:func:`estimate_dispersion`), which
    also gives its uncertainty, and, given ``rows``, from there to the mode on all of them
    (a few Newton steps from the pilot's mode, each a pass over the rows in chunks).

    Parameters
    ----------
    family : Family
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Targets encoded for ``family``.
    sample_weight : ndarray of shape (n_samples,)
    prior_prec : ndarray of shape (n_params,)
        Diagonal prior precision of the pilot fit.
    fit_intercept : bool
    offset : ndarray of shape (n_samples,), default=None
        A known term of each row's linear predictor (the log exposure of counts).
    return_dispersion : bool, default=False
        Also return the :class:`~skcoreset._inference.dispersion.Dispersion` estimate
        (None when there is none).
    rows : InMemoryRows or DaskRows, default=None
        All the rows (with their encoded targets, weights and offsets) on which the
        dispersion is refined when the pilot rows are fewer; by default the pilot's
        estimate is kept.

    Returns
    -------
    family : Family
    dispersion : Dispersion or None
        Only with ``return_dispersion=True``.
    """
    if not family.unresolved:
        return (family, None) if return_dispersion else family
    pilot_rows = np.flatnonzero(sample_weight > 0)
    pilot_rows = pilot_rows[::max(1, -(-len(pilot_rows) // PILOT_ROWS))]
    X, y, w = float_rows(X[pilot_rows]), y[pilot_rows], sample_weight[pilot_rows]
    offset = None if offset is None else offset[pilot_rows]
    pilot = family.pilot_family()
    theta = laplace(X, y, pilot, sample_weight=w, prior_prec=prior_prec,
                    fit_intercept=fit_intercept, offset=offset).posterior.mean
    eta = linear_predictor(X, theta, fit_intercept)
    resolved = family.resolve(y, pilot.mean(eta if offset is None else eta + offset), w)
    dispersion = None
    if hasattr(resolved, "log_alpha_derivatives"):
        dispersion = estimate_dispersion(resolved, X, y, w, prior_prec=prior_prec,
                                         fit_intercept=fit_intercept, alpha0=resolved.alpha,
                                         offset=offset)
        if rows is not None and rows.n_positive() > len(pilot_rows):
            dispersion = estimate_dispersion(resolved, rows, None, None, prior_prec=prior_prec,
                                             fit_intercept=fit_intercept,
                                             alpha0=dispersion.alpha, theta0=dispersion.theta)
        resolved = resolved.with_alpha(dispersion.alpha)
    return (resolved, dispersion) if return_dispersion else resolved

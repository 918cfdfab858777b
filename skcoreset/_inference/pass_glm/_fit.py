"""``pass_glm``: the PASS-GLM inference method, one pass for the statistics, then the posterior."""

import numpy as np

from ..._backend import DaskRows, is_dask_collection
from ._dask import chunked_pilot, chunked_statistics
from ._pilot import PILOT_ROWS, PILOT_TOL, start_statistics, surrogate_options
from ._posterior import pass_glm_posterior
from ._statistics import MAX_MONOMIALS


def pass_glm(X, y, family, *, sample_weight, prior_prec, fit_intercept, degree=2,
             radius="auto", tol=1e-10, max_iter=100, theta0=None, verbose=0,
             max_monomials=MAX_MONOMIALS, pilot_rows=PILOT_ROWS):
    """PASS-GLM posterior of a weighted GLM: one pass for the statistics, then the posterior.

    Same calling convention as :func:`~skcoreset._inference.laplace.laplace`. For rows on a
    cluster (dask arrays) the statistics are computed chunk-wise where the data live
    (:func:`chunked_statistics`), otherwise in memory (:func:`pass_glm_statistics`).
    A Laplace fit on a pilot subsample of at most ``pilot_rows`` rows (:func:`pilot_fit`;
    the first chunk of a dask array) chooses the polynomial for ``radius="auto"`` and
    measures the approximation's error (:func:`mean_error_estimate`) in either case.

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n, d), or DaskRows
        The rows; a :class:`~skcoreset._backend.DaskRows` storage holds rows on a cluster
        with their encoded targets and weights (``y`` and ``sample_weight`` are then None).
    y : ndarray or dask.array.Array of shape (n,)
        Labels in ``{-1, +1}`` (logistic) or counts (Poisson).
    family : Family
        :class:`~skcoreset.families.LogisticFamily`, or
        :class:`~skcoreset.families.PoissonFamily` with ``link="log"``.
    sample_weight : ndarray of shape (n,) or None
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    degree : int, default=2
        Degree ``M`` of the polynomial: ``2, 6, 10, ...`` for logistic, even for Poisson (see
        :func:`check_pass_degree`).
    radius : float or "auto", default="auto"
        A number: the Chebyshev approximation on ``[-radius, radius]`` (the paper's; choose
        it to cover most ``a_n . theta`` near the posterior mode). ``"auto"``: the
        least-squares fit of ``f'`` at the pilot's linear predictors
        (:func:`fitted_coefficients`).
    tol, max_iter, theta0, verbose
        Newton options for ``degree > 2``; see :func:`pass_glm_posterior`.
    max_monomials : int, default=MAX_MONOMIALS
        Cap on ``C(p + M, M)`` for ``degree > 2``.
    pilot_rows : int, default=PILOT_ROWS
        Size of the pilot subsample.

    Returns
    -------
    InferenceResult
        With a :class:`GaussianPosterior`; ``extra["statistics"]`` holds the
        :class:`PassGLMStatistics`, from which ``partial_fit`` can continue, and
        ``extra["pilot"]`` the :class:`Pilot`.
    """
    if is_dask_collection(X):
        X = DaskRows.from_arrays(X, y, sample_weight)
    if (sample_weight is not None and not is_dask_collection(sample_weight)
            and np.all(np.asarray(sample_weight) == 1.0)):
        sample_weight = None  # unit weights (the estimators' default): no weight passes
    pilot_options = dict(prior_prec=prior_prec, fit_intercept=fit_intercept,
                         max_rows=pilot_rows, tol=PILOT_TOL, max_iter=max_iter)
    if isinstance(X, DaskRows):
        pilot = chunked_pilot(X, family, **pilot_options)
        stats = chunked_statistics(
            X, family, fit_intercept=fit_intercept, max_monomials=max_monomials,
            **surrogate_options(family, degree, radius, pilot))
    else:
        stats, pilot = start_statistics(X, y, family, sample_weight=sample_weight,
                                        degree=degree, radius=radius,
                                        max_monomials=max_monomials, **pilot_options)
        stats.add(X, y, sample_weight)
    result = pass_glm_posterior(stats, prior_prec, tol=tol, max_iter=max_iter, theta0=theta0,
                                verbose=verbose, pilot=pilot)
    result.extra["statistics"] = stats
    result.extra["pilot"] = pilot
    return result

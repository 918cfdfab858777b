"""``pass_glm``: the PASS-GLM inference method, one pass for the statistics and the pilot
sample, then the polynomial and the posterior."""

import numpy as np

from ..._backend import DaskRows, is_chunked, is_dask_collection
from ._dask import summarise_chunks
from ._pilot import PILOT_ROWS, PILOT_TOL, PilotSample, pilot_fit, start_statistics, \
    surrogate_options
from ._posterior import pass_glm_posterior
from ._statistics import MAX_MONOMIALS


def pass_glm(X, y, family, *, sample_weight, prior_prec, fit_intercept, degree=2,
             radius="auto", tol=1e-10, max_iter=100, theta0=None, verbose=0,
             max_monomials=MAX_MONOMIALS, pilot_rows=PILOT_ROWS):
    """PASS-GLM posterior of a weighted GLM: one pass for the statistics, then the posterior.

    Same calling convention as :func:`~skcoreset._inference.laplace.laplace`. The one pass
    over the rows, in memory or chunk-wise where the rows of a dask array live
    (:func:`summarise_chunks`), computes the statistics and a uniform sample of the rows
    (:class:`PilotSample`, the same sample either way); then :func:`posterior_from_sample`
    chooses the polynomial and measures the approximation's error.

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
        Size of the pilot subsample, and of the held-out rows.

    Returns
    -------
    InferenceResult
        With a :class:`GaussianPosterior`; ``extra`` holds what
        :func:`posterior_from_sample` adds.
    """
    if is_dask_collection(X):
        X = DaskRows.from_arrays(X, y, sample_weight)
    n_features = X.n_features if is_chunked(X) else np.shape(X)[1]
    stats = start_statistics(family, n_features, degree=degree, radius=radius,
                             fit_intercept=fit_intercept, max_monomials=max_monomials)
    if is_chunked(X):
        stats, sample = summarise_chunks(X, stats, 2 * pilot_rows)
    else:
        if sample_weight is not None and np.all(np.asarray(sample_weight) == 1.0):
            sample_weight = None  # unit weights (the estimators' default): no weight passes
        stats.add(X, y, sample_weight)  # raises for non-finite X before the rows are sampled
        sample = PilotSample.of_rows(stats.model, X, y, sample_weight,
                                     capacity=2 * pilot_rows)
    return posterior_from_sample(stats, sample, family, radius=radius, prior_prec=prior_prec,
                                 pilot_rows=pilot_rows, tol=tol, max_iter=max_iter,
                                 theta0=theta0, verbose=verbose)


def posterior_from_sample(stats, sample, family, *, radius, prior_prec, pilot_rows=PILOT_ROWS,
                          tol=1e-10, max_iter=100, theta0=None, verbose=0, pilot_theta=None):
    """The PASS-GLM posterior from the statistics and the pilot sample of the same rows (all
    of a data set, or of a stream so far).

    For ``radius="auto"`` the polynomial is chosen now, from a Laplace fit on the sample's
    pilot rows (:func:`pilot_fit`, started at ``pilot_theta`` when given: a stream's previous
    pilot); the statistics do not depend on it. Its error is measured on the sample's
    held-out rows (:meth:`PilotSample.split`, :func:`pass_glm_posterior`).

    Returns
    -------
    InferenceResult
        ``extra`` holds, besides :func:`pass_glm_posterior`'s entries, ``statistics`` (with
        the polynomial: a stream continues from them), ``pilot_sample``, ``pilot`` (the
        :class:`Pilot`, or None for a numeric radius) and ``held_out`` (the rows of the
        accuracy estimate).
    """
    pilot_part, held_out = sample.split(pilot_rows, stats.fit_intercept)
    pilot = None
    if isinstance(radius, str) and radius == "auto":
        pilot = pilot_fit(pilot_part, family, prior_prec=prior_prec, tol=PILOT_TOL,
                          max_iter=max_iter, theta0=pilot_theta)
        stats = stats.with_polynomial(**surrogate_options(family, stats.degree, pilot))
    result = pass_glm_posterior(stats, prior_prec, tol=tol, max_iter=max_iter, theta0=theta0,
                                verbose=verbose, pilot=pilot, held_out=held_out)
    result.extra.update(statistics=stats, pilot_sample=sample, pilot=pilot,
                        held_out=held_out)
    return result

"""Warnings raised by skcoreset.

All are ``UserWarning`` subclasses, so the usual :mod:`warnings` filters (and scikit-learn's
handling of :class:`~sklearn.exceptions.ConvergenceWarning`) apply. Silence one by its class::

    import warnings
    from skcoreset.exceptions import PassGLMAccuracyWarning

    warnings.filterwarnings("ignore", category=PassGLMAccuracyWarning)
"""

from sklearn.exceptions import ConvergenceWarning, EfficiencyWarning

__all__ = ["CoresetAccuracyWarning", "CoresetEfficiencyWarning", "ImportanceSamplingWarning",
           "MCMCDiagnosticWarning", "ModelMismatchWarning", "PassGLMAccuracyWarning"]


class MCMCDiagnosticWarning(ConvergenceWarning):
    """The MCMC run looks unreliable.

    Issued by ``method="mcmc"`` when a chain is too short for the draws asked for (the
    effective sample size falls short of ``n_draws`` within the budget), when chains
    disagree (rank-normalized R-hat above its limit), after divergent transitions or with
    an odd acceptance fraction. The message gives the numbers and what to change.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning` (hence of ``UserWarning``),
    so the usual scikit-learn warning filters apply.
    """


class PassGLMAccuracyWarning(UserWarning):
    """The PASS-GLM posterior is measurably off the exact one.

    Issued by ``method="pass_glm"`` when held-out rows estimate the error of the posterior
    mean caused by the polynomial approximation to exceed one posterior standard deviation,
    or when the estimate's standard error cannot rule that out. The approximation error
    does not shrink with the number of rows while the posterior does: use a larger
    ``pass_degree`` (few features), ``pass_radius="auto"``, or ``method="laplace"``.
    """


class ImportanceSamplingWarning(UserWarning):
    """Importance weights from a fitted posterior to the exact one are unreliable.

    Issued by :func:`skcoreset.metrics.exact_kl` when the Pareto shape ``k-hat`` of the
    importance weights exceeds ``min(1 - 1 / log10(S), 0.7)`` for ``S`` draws (Vehtari et
    al., 2024): the fitted posterior is then too far from the exact one (or too narrow) for
    its draws to stand for it, and the estimated divergence and moments can be far off,
    usually too small. The message gives ``k-hat`` and what to change (more draws when
    ``k-hat`` is below 0.7, else a closer fit: a larger coreset, or MCMC).
    """


class CoresetAccuracyWarning(UserWarning):
    """A coreset is far from the posterior it stands in for.

    Issued by the coreset constructors when their own estimate of ``KL(coreset posterior ||
    full posterior)`` (``kl_estimate_``, between Laplace approximations under the model the
    coreset is built for) exceeds 1 nat: posterior means may then be a standard deviation
    or more off. The message gives the number and what to change (a larger ``M``, or
    :class:`~skcoreset.QuasiNewtonCoreset`).
    """


class ModelMismatchWarning(UserWarning):
    """A coreset is built under another model than the one fitted on it.

    Issued by :class:`skcoreset.pipeline.Pipeline` (and ``fit_coreset(..., estimator=...)``)
    when a coreset step's explicit ``model``, prior scales or ``fit_intercept`` disagree with
    the final estimator's: the coreset's weights then match the wrong likelihood, and the
    posterior fitted on them can be nats off. With ``model="auto"`` (the default) the coreset
    takes the final estimator's model and prior.
    """


class CoresetEfficiencyWarning(EfficiencyWarning):
    """A coreset does not pay at this number of rows: sampling all of them is as fast.

    Issued by :class:`skcoreset.pipeline.Pipeline` when a coreset step is followed by an
    estimator that samples (``method="mcmc"``) and the data have fewer rows than the size
    from which a coreset and NUTS on it are measured to be faster than NUTS on all rows at
    equal accuracy (about four times the default coreset's rows, ``max(500, p (p + 3) /
    2)`` for ``p`` parameters; see :ref:`choosing_coreset_or_not`). The message gives the
    numbers and the fix: fit the estimator on all rows, without the coreset step.

    A subclass of :class:`sklearn.exceptions.EfficiencyWarning` (hence of ``UserWarning``).
    """

"""Is a Gaussian posterior enough? Its distance to the exact posterior, and the advice, in
one line."""

import warnings
from dataclasses import dataclass
from typing import Any

from .._advice import coreset_pays
from .._posterior import SamplePosterior
from .._typing import MatrixLike, RandomStateLike, VectorLike
from ..exceptions import ImportanceSamplingWarning
from ._exact import MAX_PARETO_K, ExactKL, exact_kl

# Within this many nats of the exact posterior a Gaussian fit is as close to it as the draws
# of an MCMC run of 1,000 effective draws are in their means alone (about p / 2000 nats for
# p parameters: 0.016 at p = 31); the target of the coreset route, too
ENOUGH_KL = 0.02
_NAMES = {"laplace": "Laplace", "kl_proximal": "KL-proximal", "pass_glm": "PASS-GLM"}


@dataclass(frozen=True, repr=False)
class GaussianCheck:
    """What :func:`gaussian_check` returns; printed, the one line of :attr:`advice`.

    Attributes
    ----------
    enough : bool or None
        Whether the Gaussian posterior is within ``0.02`` nats of the exact one (reliably);
        ``None`` when the draws cannot tell (ask for more, ``n_draws``).
    kl : float
        ``KL(Gaussian posterior || exact posterior of all rows)`` in nats.
    pareto_k : float
        The Pareto ``k-hat`` of the importance weights (reliable up to
        ``exact.pareto_k_threshold``).
    max_mean_error_sd : float
        Largest error of a posterior mean, in exact-posterior standard deviations.
    advice : str
        The answer in one line, with what to do.
    exact : ExactKL
        Everything :func:`exact_kl` measured (the exact posterior's ``mean`` and ``sd``, the
        ``ess`` and ``kl_se``).
    """

    enough: bool | None
    kl: float
    pareto_k: float
    max_mean_error_sd: float
    advice: str
    exact: ExactKL

    def __str__(self):
        return self.advice

    def __repr__(self):
        return self.advice


def _route(estimator_name, n_samples, n_features):
    """How to sample the exact posterior, the faster route at this size first."""
    mcmc = f"{estimator_name}(method='mcmc')"
    if n_samples is not None and not coreset_pays(n_samples, n_features):
        return f"{mcmc} on all rows (at {n_samples:,} rows as fast as a coreset)"
    return (f"a QuasiNewtonCoreset() and {mcmc} in a Pipeline (faster than NUTS on all "
            "rows at this size), with exact_correction=True for draws of the exact posterior")


def gaussian_check(estimator: Any, X: MatrixLike, y: VectorLike,
                   sample_weight: VectorLike | None = None, *,
                   exposure: VectorLike | None = None, offset: VectorLike | None = None,
                   n_draws: int = 1000, random_state: RandomStateLike = None) -> GaussianCheck:
    """Tell whether a Gaussian posterior is enough: its distance to the exact one, in a line.

    A Laplace (``method="laplace"``), KL-proximal or PASS-GLM fit is a Gaussian
    approximation; it is off where the posterior is skewed (rare events, few rows per
    parameter, near separation), which is when sampling the exact posterior is worth its
    cost. This measures ``KL(Gaussian posterior || exact posterior of all rows)`` with
    :func:`exact_kl` (importance weighting over every row, about ten Laplace fits at the
    default 1,000 draws) and answers in one line (``print(check)``), e.g.::

        Laplace is 0.038 nats from the exact posterior (k-hat 0.05; means up to 0.15 sd
        off): above 0.02 nats, sample the exact posterior: a QuasiNewtonCoreset() and ...

    with the faster way to sample at this number of rows: NUTS on all rows, or a
    coreset and NUTS on it (the measured rule of :ref:`choosing_coreset_or_not`).

    The Gaussian posterior is *enough* when it is within 0.02 nats of the exact one, as
    close as the draws of an MCMC run of 1,000 effective draws are in their means alone
    (about ``p / 2000`` nats for ``p`` parameters), and the estimate is reliable (Pareto
    ``k-hat`` at most ``min(1 - 1 / log10(n_draws), 0.7)``). A ``k-hat`` above 0.7 says the
    Gaussian's draws cannot represent the exact posterior: it is far off, and the
    estimated distance is a lower bound.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        A skcoreset Bayesian GLM fitted with a Gaussian method (``"laplace"``,
        ``"kl_proximal"``, ``"pass_glm"``), or a fitted
        :class:`~skcoreset.pipeline.Pipeline` ending in one.
    X : array-like, sparse matrix, np.memmap or dask array of shape (n_samples, n_features)
        All rows of the data, as given to ``fit``.
    y : array-like of shape (n_samples,)
        Their targets.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows, as in ``fit``.
    exposure, offset : array-like of shape (n_samples,), default=None
        Of count targets, as in the count regressors' ``fit``.
    n_draws : int, default=1000
        Draws of the Gaussian posterior; the cost is proportional to it.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Returns
    -------
    check : GaussianCheck
        ``enough``, ``kl``, ``pareto_k``, ``max_mean_error_sd``, ``advice`` (the line its
        ``repr`` prints) and ``exact``, the :class:`ExactKL` measured.

    Raises
    ------
    TypeError
        If the estimator's posterior is not Gaussian (``method="mcmc"``: use
        :func:`exact_kl`), or it is not a skcoreset Bayesian GLM.

    See Also
    --------
    exact_kl : The distance of any fit, MCMC and coresets included, to the exact posterior.

    Examples
    --------
    >>> from skcoreset import BayesianLogisticRegression
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import gaussian_check
    >>> X, y = make_logistic_regression(5000, coef=[1.0, -0.5], random_state=0)
    >>> clf = BayesianLogisticRegression().fit(X, y)
    >>> check = gaussian_check(clf, X, y, random_state=0)
    >>> check.enough
    True
    """
    final = estimator[-1] if hasattr(estimator, "steps") else estimator
    if isinstance(getattr(final, "posterior_", None), SamplePosterior):
        raise TypeError("gaussian_check measures a Gaussian posterior (method='laplace', "
                        "'kl_proximal' or 'pass_glm'); this estimator's holds draws: "
                        "use exact_kl for its distance to the exact posterior.")
    with warnings.catch_warnings():  # the line says it, with the advice
        warnings.simplefilter("ignore", ImportanceSamplingWarning)
        exact = exact_kl(estimator, X, y, sample_weight, exposure=exposure, offset=offset,
                         n_draws=n_draws, random_state=random_state)
    name = _NAMES.get(final.get_params(deep=False).get("method"), "The Gaussian posterior")
    try:
        n_samples: int | None = int(getattr(X, "shape")[0])
    except (AttributeError, TypeError, ValueError):  # a list, or an unknown size (dask)
        n_samples = None
    route = _route(type(final).__name__, n_samples, final.n_features_in_)
    distance = (f"{exact.kl:.2g} nats from the exact posterior (k-hat {exact.pareto_k:.2f}; "
                f"means up to {exact.max_mean_error_sd:.2f} sd off)")
    if exact.reliable:
        enough = bool(exact.kl <= ENOUGH_KL)
        advice = (f"{name} is {distance}: "
                  + (f"within {ENOUGH_KL} nats, the Gaussian posterior is enough."
                     if enough else f"above {ENOUGH_KL} nats, sample the exact posterior: "
                     f"{route}."))
    elif exact.pareto_k <= MAX_PARETO_K and exact.kl <= ENOUGH_KL:
        enough = None
        advice = (f"{name} is {distance}, but {n_draws} draws cannot tell reliably (k-hat "
                  f"above {exact.pareto_k_threshold:.2f}): ask for more draws (n_draws).")
    else:
        enough = False
        advice = (f"{name} is at least {distance}: the Gaussian's draws cannot represent the "
                  f"exact posterior (k-hat above {exact.pareto_k_threshold:.2f}), it is far "
                  f"off; sample the exact posterior: {route}.")
    return GaussianCheck(enough=enough, kl=exact.kl, pareto_k=exact.pareto_k,
                         max_mean_error_sd=exact.max_mean_error_sd, advice=advice,
                         exact=exact)

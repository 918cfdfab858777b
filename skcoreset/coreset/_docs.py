"""Docstring sections the coreset constructors share (their parameters and attributes)."""

from .._docstrings import fill_doc

_MODEL_DOC = """
    model : {"auto", "logistic", "probit", "poisson", "gaussian", "negative_binomial"} \
or Family, default="auto"
        Likelihood of the data. ``"auto"`` infers it from ``y`` with
        :func:`sklearn.utils.multiclass.type_of_target`: binary -> logistic, non-negative
        integers -> poisson, continuous -> gaussian (``"probit"``: binary labels under the
        probit link, :class:`~skcoreset.families.ProbitFamily`). A ``UserWarning`` flags the
        readings that could be wrong (at most 10 distinct integers, which may be class
        labels; non-negative non-integer values, which may be rates or rounded counts): set
        the model explicitly to silence it. ``"poisson"`` accepts non-negative real targets,
        such as rates ``counts / exposure`` fitted with ``sample_weight=exposure``.
        ``"negative_binomial"`` (overdispersed counts) estimates its overdispersion from the
        data (see
        :class:`~skcoreset.families.NegativeBinomialFamily`). A
        :class:`~skcoreset.families.Family` instance, e.g.
        ``NegativeBinomialFamily(alpha=0.5)`` or ``PoissonFamily(link="softplus")``, sets
        the likelihood with its own parameters. A family added to
        :data:`skcoreset.families.FAMILIES` is named like the others (with its default
        parameters).
"""

_FAMILY_PARAMS_DOC = """
    link : {"log", "softplus"}, default="log"
        Poisson rate ``exp(eta)`` or ``log(1 + exp(eta))`` (the coreset papers' choice).
        Used only by the poisson model given by name.

    noise_scale : float, default=1.0
        Known observation noise standard deviation of the gaussian model given by name.
"""

_PRIOR_PARAMS_DOC = """
    prior_scale : float, default=1.0
        Standard deviation of the prior ``N(0, prior_scale^2 I)`` on the coefficients, as in
        the estimators.

    intercept_prior_scale : float, default=10.0
        Standard deviation of the Gaussian prior on the intercept, as in the estimators.

    fit_intercept : bool, default=True
        Whether the model has an intercept (not part of X).

    random_state : int, RandomState instance or None, default=None
        Seed of the constructor's random choices, for reproducible coresets.

    verbose : int, default=0
        Print progress when positive.
"""

COMMON_PARAMS_DOC = _MODEL_DOC + _FAMILY_PARAMS_DOC + _PRIOR_PARAMS_DOC
# the sampling constructors take no family parameters (a Family instance as model has them)
SAMPLING_PARAMS_DOC = _MODEL_DOC + _PRIOR_PARAMS_DOC

COMMON_ATTRS_DOC = """
    sample_indices_ : ndarray of shape (n_coreset,)
        Rows of the training data in the coreset, sorted (``n_coreset <= M``).

    sample_weight_ : ndarray of shape (n_coreset,)
        Their positive weights.

    sample_offset_ : ndarray of shape (n_coreset,) or None
        Their offsets ``offset + log(exposure)`` in the linear predictor when the coreset
        was built under them (the negative binomial model's ``exposure`` and ``offset``),
        which the estimator fitted on the coreset takes as ``offset=``
        (:class:`skcoreset.pipeline.Pipeline` passes them on); else None.

    model_ : str
        The likelihood model used (``model`` with ``"auto"`` resolved; a Family's name).
        In a :class:`skcoreset.pipeline.Pipeline`, ``"auto"`` is the final estimator's
        model (see ``fit_coreset``).

    kl_estimate_ : float
        How far the coreset is from the posterior it stands in for, in nats:
        ``KL(coreset Laplace || full Laplace)``, the KL divergence between the Laplace
        approximations of the posterior given the coreset and given all rows, under the
        model and prior the coreset was built for (``family_``, ``prior_scale_``). It costs
        a Laplace fit of the coreset and one of all rows (a few passes over them; about
        0.4 s at N = 1e6, d = 10), except for constructors that fit the full data's Laplace
        approximation anyway (``QuasiNewtonCoreset``). ``fit`` warns
        (:class:`~skcoreset.exceptions.CoresetAccuracyWarning`) when it exceeds 1 nat. It
        measures the Gaussian part of the posterior only; its non-Gaussian part is not
        seen. Not set by ``partial_fit`` (a stream's rows are not kept).

    prior_scale_, intercept_prior_scale_ : float
        The prior scales the coreset was built under: ``prior_scale`` and
        ``intercept_prior_scale``, or the final estimator's in a Pipeline with
        ``model="auto"``.

    family_ : Family
        The likelihood family used, with the parameters estimated from the data (e.g. the
        negative binomial overdispersion ``family_.alpha``).

    classes_ : ndarray of shape (2,)
        The labels of a binary model, logistic or probit (``classes_[1]`` is the positive
        class). Only set for the binary models.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.
"""


fill_sampling_doc = fill_doc(common_params=SAMPLING_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC)

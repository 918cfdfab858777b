"""Which model a coreset is built under: ``model="auto"`` read from the targets, or the
likelihood and prior of the estimator that will be fitted on it (in a
:class:`skcoreset.pipeline.Pipeline`), with a warning wherever the two disagree."""

import inspect

import numpy as np
from sklearn.utils.multiclass import type_of_target

from .._warnings import warn
from ..exceptions import ModelMismatchWarning
from ..families import make_family


# At most this many distinct integer values: as likely class labels as counts.
_FEW_DISTINCT_VALUES = 10


def resolve_model(model, y, *, first_block=False):
    """The likelihood model for ``model="auto"``: binary -> logistic, counts -> poisson,
    continuous -> gaussian (via :func:`sklearn.utils.multiclass.type_of_target`).

    Where y fits two readings a ``UserWarning`` says which model was chosen and how to
    choose explicitly: integer targets with few distinct values (class labels or counts),
    non-negative non-integer targets (measurements, or rates and rounded counts), and, with
    ``first_block=True`` (y is only the first block of a stream, as in ``partial_fit``),
    binary non-negative integers, which later blocks may show to be counts.

    Parameters
    ----------
    model : {"auto", "logistic", "probit", "poisson", "gaussian", "negative_binomial"} or Family
        Anything but ``"auto"`` is returned as it is.
    y : array-like of shape (n_samples,)
    first_block : bool, default=False
        Whether y is only the first part of the data.

    Returns
    -------
    model : str or Family
    """
    if not isinstance(model, str) or model != "auto":
        return model
    target_type = type_of_target(y, input_name="y")
    if target_type == "unknown":
        raise ValueError("Unknown label type: model='auto' cannot infer a likelihood from y; "
                         "set model explicitly.")
    y_array = np.asarray(y)
    numeric = y_array.dtype.kind in "iuf"
    if target_type == "binary":
        values = np.unique(y_array)
        if (first_block and numeric and np.all(values >= 0)
                and np.all(values == np.round(values))):
            warn(
                f"model='auto' infers the logistic model from a first block whose y takes "
                f"only the values {values.tolist()}; if y are counts, later blocks will be "
                "rejected. Set model='logistic' (or pass classes) or model='poisson' "
                "explicitly.", UserWarning)
        return "logistic"
    if target_type == "multiclass" and numeric and np.all(y_array >= 0):
        values = np.unique(y_array)
        if len(values) <= _FEW_DISTINCT_VALUES:
            warn(
                f"model='auto' infers the poisson model from y with {len(values)} distinct "
                f"integer values {values.tolist()}, which may be class labels; skcoreset "
                "has no multi-class model. Set model='poisson' explicitly if y are counts.",
                UserWarning)
        return "poisson"
    if target_type == "continuous":
        if np.all(y_array >= 0):
            warn(
                "model='auto' infers the gaussian model from non-negative, non-integer y; "
                "if y are rates (counts / exposure, with sample_weight=exposure) or counts "
                "with rounding error, set model='poisson', which accepts non-negative real "
                "targets. Set model='gaussian' explicitly to keep the gaussian model.",
                UserWarning)
        return "gaussian"
    raise ValueError(
        f"model='auto' cannot infer a likelihood from a target of type {target_type!r}; "
        "expected binary labels (logistic), non-negative integer counts (poisson) or "
        "continuous values (gaussian). Set model explicitly.")


class FitLikelihood:
    """The likelihood and prior a coreset is built under when they are not its own
    parameters: those of the estimator that will be fitted on it (see
    :func:`likelihood_for`). Read through ``BaseCoreset._likelihood_params`` as the
    constructor's own parameters are."""

    def __init__(self, model, prior_scale, intercept_prior_scale, fit_intercept):
        self.model = model  # a Family instance: it carries its own parameters
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept

    def _family_params(self):
        return {}


_PRIOR_NAMES = ("prior_scale", "intercept_prior_scale")


def _describe_model(family):
    return family.name if repr(family) == repr(make_family(family.name)) else repr(family)


def likelihood_for(coreset, estimator):
    """The :class:`FitLikelihood` under which ``coreset`` is built for ``estimator`` (the
    estimator that will be fitted on it), or ``None`` to build it under its own parameters.

    With ``model="auto"`` the coreset takes the estimator's likelihood (family, link,
    overdispersion) and prior scales: a coreset stands in for the data under one model, and
    the weights that match the Poisson likelihood do not match the negative binomial one.
    With an explicit ``model``, or an estimator that does not say its family
    (``get_family``), the coreset keeps its own; a :class:`~skcoreset.exceptions.
    ModelMismatchWarning` names both wherever the two disagree.
    """
    get_family = getattr(estimator, "get_family", None)
    if get_family is None:
        return None
    family = get_family()
    theirs = estimator.get_params(deep=False)
    # the constructor's own parameters, not those of its previous fit for an estimator
    own = coreset._own_likelihood_params()
    name, other = type(coreset).__name__, type(estimator).__name__
    problems = []
    auto = isinstance(own.model, str) and own.model == "auto"
    if not auto:
        own_family = make_family(own.model, **own._family_params())
        if repr(own_family) != repr(family):
            problems.append(
                f"{name} is built under the {_describe_model(own_family)} model, but "
                f"{other} fits the {_describe_model(family)} model, so the coreset's weights "
                "match the wrong likelihood and the posterior fitted on them can be nats "
                "off. Leave model='auto' (the default), which takes the final estimator's "
                "model in a skcoreset Pipeline, or set the same model in both")
    defaults = inspect.signature(type(own).__init__).parameters
    for key in _PRIOR_NAMES + ("fit_intercept",):
        if key in theirs and theirs[key] != getattr(own, key):
            if auto and key != "fit_intercept":
                if key in defaults and getattr(own, key) == defaults[key].default:
                    continue  # left at its default: the estimator's prior is taken
                problems.append(
                    f"{name}({key}={getattr(own, key)!r}) is ignored: with model='auto' the "
                    f"coreset is built under the prior of {other}({key}={theirs[key]!r})")
            else:
                problems.append(
                    f"{name} is built with {key}={getattr(own, key)!r}, but {other} fits "
                    f"with {key}={theirs[key]!r}; set the same {key} in both")
    if problems:
        warn("; ".join(problems) + ".", ModelMismatchWarning)
    if not auto:
        return None
    return FitLikelihood(family,
                         *(theirs.get(key, getattr(own, key)) for key in _PRIOR_NAMES),
                         fit_intercept=own.fit_intercept)


def builds_for_sampler(estimator):
    """Whether ``estimator`` (that will be fitted on the coreset) samples its posterior
    (``method="mcmc"``), for which a constructor may size the coreset by the exact
    posterior rather than by its Laplace approximation."""
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    return isinstance(params.get("method"), str) and params["method"] == "mcmc"

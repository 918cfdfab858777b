"""Bernoulli likelihoods of two classes, encoded ``y in {-1, +1}``, with any link onto (0, 1)."""

from typing import Any

import numpy as np
from scipy.special import gammaln
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets

from ._base import Family, as_column, by_width, piecewise, wide_gaussian_nodes
from ._links import Link
from .._typing import ArrayInput, FloatArray, RandomStateLike

# The general form's expectations over Gaussians wider than this use Gauss-Legendre panels
# with ends also at +-2 and 4 (where an asymmetric F, such as cloglog's 1 - exp(-e^eta),
# turns within a few units): 32 Hermite nodes err by 2e-6 of E[log F] at variance 1 there,
# these panels by 1e-15.
_GENERAL_WIDE_VARIANCE = 0.1
_GENERAL_PANEL_ETA = np.array([-64.0, -8.0, -2.0, 0.0, 2.0, 4.0, 8.0, 64.0])


def _plus_minus(positive):
    """+1.0 where ``positive``, else -1.0 (several times faster than ``np.where`` with scalars)."""
    encoded = positive.astype(np.float64)
    encoded *= 2.0
    encoded -= 1.0
    return encoded


def _two_numeric_labels(y):
    """``(y_encoded, classes)`` when the 1-D numeric y holds exactly two distinct integral
    values, from a few O(n) passes (min, max, two comparisons) instead of the sorts or hash
    tables of ``np.unique`` and scikit-learn's ``type_of_target``; None otherwise, and the
    caller's full checks decide (and word any error). For such y those checks find the
    classes ``[min, max]`` of y's dtype and the target type "binary", as here."""
    if y.dtype.kind not in "biuf" or len(y) == 0:
        return None
    low, high = y.min(), y.max()
    if y.dtype.kind == "f" and not all(
            np.isfinite(value) and abs(value) < 2.0**53 and float(value).is_integer()
            for value in (low, high)):
        return None  # NaN, infinity or non-integral values: "continuous" or an error
    if not low < high:
        return None  # one class
    positive = y == high
    if np.count_nonzero(positive) + np.count_nonzero(y == low) != len(y):
        return None  # a third value
    return _plus_minus(positive), np.array([low, high], dtype=y.dtype)


class BinaryFamily(Family):
    """Bernoulli likelihood of two classes with any link onto ``(0, 1)``; labels encoded ±1.

    ``P(y = +1 | eta) = F(eta)`` for the inverse link ``F``, a continuous distribution
    function (:attr:`Link.cdf <skcoreset.families.Link.cdf>`), so that ``log p(y | eta)`` is
    the link's :meth:`~skcoreset.families.Link.log_inverse` ``log F(eta)`` for ``y = +1`` and
    its :meth:`~skcoreset.families.Link.log_complement` ``log(1 - F(eta))`` for ``y = -1``,
    with their derivatives. For a link symmetric about 0 (``F(-s) = 1 - F(s)``: logit,
    probit) both are ``log F(y eta)``, evaluated once at the margins ``y eta``. Targets are
    any two class labels: sorted, the larger one (``classes[1]``) is the positive class,
    encoded +1.

    A new binary model is a :class:`~skcoreset.families.Link` with ``cdf = True``:
    :func:`~skcoreset.families.binary_family` (or this class) gives it the targets, the
    likelihood, predictions (closed-form Gaussian moments when the link has them,
    quadrature otherwise) and expectations over wide Gaussians.
    :class:`LogisticFamily` and :class:`ProbitFamily` are the registered ones, with faster
    forms of their own.

    Parameters
    ----------
    link : Link
        A link whose inverse is a distribution function (``link.cdf``), e.g.
        ``CLogLogLink()``, ``LogitLink()`` or ``ProbitLink()``.
    n_quadrature : int, default=32
        Gauss-Hermite points of the expectations over narrow Gaussians (variance at most 1);
        wider ones use Gauss-Legendre panels (see :func:`wide_gaussian_nodes`).

    Attributes
    ----------
    name : str
        ``model_`` of the coreset constructors and the model in messages: the registered
        subclass's name, else the link's (``"cloglog"``).
    """

    binary = True

    def __init__(self, link: Link, n_quadrature: int = 32) -> None:
        super().__init__(link, n_quadrature=n_quadrature)
        if not (link.cdf or link.symmetric):  # a symmetric link is a distribution function
            raise ValueError(
                f"A binary family needs a link whose inverse is a distribution function "
                f"onto (0, 1) (Link.cdf), such as LogitLink(), ProbitLink() or "
                f"CLogLogLink(); got {link!r}.")
        if type(self).name is None:
            self.name = link.name or "binary"

    def _params(self):
        # the registered subclasses fix their link; a BinaryFamily shows it
        own = {} if type(self).name is not None else {"link": self.link}
        return {**own, **super()._params()}

    # --- targets ---------------------------------------------------------------------------
    @classmethod
    def check_classes(cls, labels: ArrayInput, *, source: str = "y", hint: str = "",
                      one_class_ok: bool = False) -> Any:
        """The two class labels, sorted, from labels (or declared classes).

        Parameters
        ----------
        labels : array-like
            Class labels (repeats allowed).
        source : str, default="y"
            What the labels are, for the messages.
        hint : str, default=""
            Appended to the message for more than two classes (how to fit multi-class data).
        one_class_ok : bool, default=False
            Accept a single class when its label says its side: 1 or True is the positive
            class, 0, -1 or False the negative one (used to evaluate a likelihood on a
            subset; fitting needs both classes).

        Returns
        -------
        classes : ndarray of shape (2,), or (1,) for an accepted single class
        """
        model = cls.name or "binary"
        labels = column_or_1d(labels, warn=True)
        check_classification_targets(labels)
        classes = np.unique(labels)
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported: the {model} model needs exactly "
                f"two classes, and {source} has {len(classes)} classes.{hint}")
        if len(classes) == 2:
            return classes
        if one_class_ok and len(classes) == 1:
            # a single class: only its name tells which side it is on (see encode_target)
            if classes[0] in (1, True, 0, -1, False):
                return classes
            raise ValueError(
                f"y contains the single class {classes[0]!r}; with one class the positive "
                "label is ambiguous unless it is 1 (or 0 / -1 for negative).")
        raise ValueError(
            "{} contains only one class ({}); the {} model needs samples of two "
            "classes.".format(source, classes[0] if len(classes) else "none", model))

    def fit_target(self, y: ArrayInput, classes: ArrayInput | None = None, *,
                   hint: str = "") -> tuple[FloatArray, Any]:
        """Validate the labels; ``classes`` (sorted) from ``classes`` when given, else from y.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels.
        classes : array-like of shape (2,), default=None
            Both labels, declared up front (the first block of a stream may hold one).
        hint : str, default=""
            Appended to the message for more than two classes.

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
            +1 for ``classes[1]``, -1 for ``classes[0]``.
        classes : ndarray of shape (2,)
        """
        if classes is None:
            y = column_or_1d(y, warn=True)
            two = _two_numeric_labels(y)
            if two is not None:
                return two
            classes = self.check_classes(y, hint=hint)
            # the classes are y's own labels: none unseen, no second np.unique of y
            return self.encode_target(y, classes, all_seen=True), classes
        classes = self.check_classes(classes, source="classes", hint=hint)
        return self.encode_target(y, classes), classes

    @staticmethod
    def encode_target(y: ArrayInput, classes: ArrayInput = None, *, hint: str = "",
                      all_seen: bool = False) -> FloatArray:
        """±1 labels against known ``classes``; unseen labels raise a ``ValueError``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels.
        classes : ndarray of shape (2,) or (1,)
            The labels :meth:`fit_target` returned: ``classes[1]`` is +1; a single class is
            +1 when it is 1 or True, else -1.
        hint : str, default=""
            Appended to the message for unseen labels.
        all_seen : bool, default=False
            Skip the check for unseen labels (``classes`` are known to hold every label).

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
        """
        y = column_or_1d(y, warn=True)
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        unseen: Any = [] if all_seen else np.setdiff1d(np.unique(y), classes)
        if len(unseen):
            raise ValueError(f"y contains labels {unseen[:5].tolist()} not in classes_ "
                             f"{np.asarray(classes).tolist()}.{hint}")
        if len(classes) == 1:
            return np.full(len(y), 1.0 if classes[0] in (1, True) else -1.0)
        return _plus_minus(y == classes[1])

    @staticmethod
    def trials_as_rows(successes: FloatArray, n_trials: FloatArray,
                       sample_weight: FloatArray) -> tuple[Any, FloatArray, FloatArray, float]:
        """Binomial counts, ``k`` successes out of ``n`` trials per cell, as weighted ±1 rows.

        A cell's binomial log-likelihood
        ``k log F(eta) + (n - k) log(1 - F(eta)) + log C(n, k)`` is, up to the constant, the
        Bernoulli log-likelihood of a +1 row of weight ``k`` plus that of a -1 row of weight
        ``n - k`` at the same ``x``: so the two rows, weights times ``sample_weight``, give
        the cells' posterior for every link and method. A cell with ``k = 0`` or ``k = n``
        needs one row only (cells with no trials none), so there are at most two rows per
        cell whatever the number of trials.

        Parameters
        ----------
        successes : ndarray of shape (n,)
            Whole numbers ``k`` with ``0 <= k <= n_trials``.
        n_trials : ndarray of shape (n,)
            Non-negative whole numbers of trials.
        sample_weight : ndarray of shape (n,)

        Returns
        -------
        rows : ndarray of int
            The cell of each row (index into the cells, successes' rows first).
        y_encoded : ndarray
            +1 for a row of successes, -1 for one of failures.
        weights : ndarray
            ``sample_weight * k`` and ``sample_weight * (n - k)``.
        log_constant : float
            ``sum_n w_n log C(n_n, k_n)``: the counts' log-likelihood minus the rows' one.
        """
        failures = n_trials - successes
        hits = np.flatnonzero(successes > 0)
        misses = np.flatnonzero(failures > 0)
        rows = np.concatenate([hits, misses])
        y_encoded = np.concatenate([np.ones(len(hits)), -np.ones(len(misses))])
        weights = np.concatenate([sample_weight[hits] * successes[hits],
                                  sample_weight[misses] * failures[misses]])
        log_choose = (gammaln(n_trials + 1.0) - gammaln(successes + 1.0)
                      - gammaln(failures + 1.0))
        return rows, y_encoded, weights, float(sample_weight @ log_choose)

    def loglik_with_trials(self, successes: FloatArray, eta: FloatArray,
                           n_trials: FloatArray) -> FloatArray:
        """``log p(k | eta)`` of ``k`` successes out of ``n`` trials, ``k ~ Binomial(n,
        F(eta))``: ``log C(n, k) + k log F(eta) + (n - k) log(1 - F(eta))``.

        Parameters
        ----------
        successes : ndarray of shape (n,)
            Whole numbers ``k`` with ``0 <= k <= n_trials``.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        n_trials : ndarray of shape (n,)
            Non-negative whole numbers of trials.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        k, n = as_column(successes, eta), as_column(n_trials, eta)
        ones = np.ones(np.shape(eta))
        # a term of no trials is 0, also where log F(eta) is -inf
        hits = np.where(k > 0, k * self.loglik(ones, eta), 0.0)
        misses = np.where(n > k, (n - k) * self.loglik(-ones, eta), 0.0)
        return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0) + hits + misses

    def sample_with_trials(self, eta: FloatArray, n_trials: FloatArray,
                           random_state: RandomStateLike = None) -> FloatArray:
        """Draw the successes out of ``n_trials``, ``Binomial(n_trials, F(eta))``.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        n_trials : ndarray of shape (n,)
            Non-negative whole numbers of trials.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        successes : ndarray of the shape of ``eta``
            Counts as floats.
        """
        n = np.broadcast_to(as_column(n_trials, eta), np.shape(eta)).astype(np.int64)
        return check_random_state(random_state).binomial(n, self.mean(eta)).astype(float)

    # --- the likelihood: log F(eta) for y = +1, log(1 - F(eta)) for y = -1 ---------------
    def _terms(self, y, eta, which):
        """The terms ``which`` (a subset of ``("value", "d1", "d2")``) of the
        log-likelihood: at the margins ``y eta`` for a symmetric link (one evaluation of
        ``log F``), else ``log F`` and its derivatives on the positive labels and
        ``log(1 - F)`` and its derivatives on the negative ones."""
        link = self.link
        y = as_column(y, eta)
        if link.symmetric:
            margin = y * eta
            out = []
            if "value" in which:
                out.append(link.log_inverse(margin))
            if "d1" in which or "d2" in which:
                d1, d2 = link.log_inverse_derivatives(margin)
                out += [y * d1] if "d1" in which else []
                out += [d2] if "d2" in which else []
            return tuple(out)

        def side(log_f, derivatives):
            def terms(eta):
                out = [log_f(eta)] if "value" in which else []
                if "d1" in which or "d2" in which:
                    d1, d2 = derivatives(eta)
                    out += [d1] if "d1" in which else []
                    out += [d2] if "d2" in which else []
                return tuple(out)
            return terms

        if np.size(eta) == 0:
            return tuple(np.zeros(np.shape(eta)) for _ in which)
        positive = np.broadcast_to(y > 0, np.shape(eta))
        return piecewise([(positive, side(link.log_inverse, link.log_inverse_derivatives)),
                          (~positive, side(link.log_complement,
                                           link.log_complement_derivatives))], eta)

    def loglik(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``log F(eta)`` for ``y = +1``, ``log(1 - F(eta))`` for ``y = -1`` (``log F(y eta)``
        for a symmetric link).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels encoded ±1.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        return self._terms(y, eta, ("value",))[0]

    def d1(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """First derivative of :meth:`loglik` in ``eta`` (``y (log F)'(y eta)`` for a
        symmetric link).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels encoded ±1.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d1 : ndarray of the shape of ``eta``
        """
        return self._terms(y, eta, ("d1",))[0]

    def d2(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """Second derivative of :meth:`loglik` in ``eta`` (``(log F)''(y eta)`` for a
        symmetric link, ``y^2 = 1``).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels encoded ±1.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d2 : ndarray of the shape of ``eta``
        """
        return self._terms(y, eta, ("d2",))[0]

    def loglik_and_derivatives(self, y: FloatArray, eta: FloatArray,
                               second: bool = False) -> tuple[FloatArray, ...]:
        """The log-likelihood and its derivatives from one evaluation of the link.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels encoded ±1.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        second : bool, default=False
            Also return the second derivative.

        Returns
        -------
        terms : tuple of ndarray of the shape of ``eta``
            ``(loglik, d1)``, or ``(loglik, d1, d2)`` with ``second=True`` (the
            log-likelihood of two classes has no ``eta``-free terms).
        """
        return self._terms(y, eta, ("value", "d1", "d2") if second else ("value", "d1"))

    def initial_predictor(self, mean_target: float) -> float:
        """The link of ``P(y = +1) = (1 + mean) / 2`` for the mean of ±1 labels, clipped
        to ``[1e-6, 1 - 1e-6]`` so that one class only gives a finite start.

        Parameters
        ----------
        mean_target : float
            Weighted mean of the ±1 labels.

        Returns
        -------
        eta : float
        """
        return self.link(np.clip(0.5 * (1.0 + mean_target), 1e-6, 1 - 1e-6))

    def predictive_variance(self, mean: FloatArray, var: FloatArray) -> FloatArray:
        """Variance of the positive-class indicator, ``E[p] (1 - E[p])`` (the posterior
        variance ``var`` of p is part of it: ``E[p (1 - p)] + Var[p]``).

        Parameters
        ----------
        mean, var : ndarray of shape (n,)
            Posterior mean and variance of ``P(y = +1 | x)``.

        Returns
        -------
        variance : ndarray of shape (n,)
        """
        return mean * (1.0 - mean)

    def sample(self, eta: FloatArray, random_state: RandomStateLike = None) -> FloatArray:
        """Draws of ±1 labels given linear predictors.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        y : ndarray of the shape of ``eta``
            +1.0 with probability ``F(eta)``, else -1.0.
        """
        rng = check_random_state(random_state)
        return np.where(rng.random_sample(np.shape(eta)) < self.mean(eta), 1.0, -1.0)

    # --- expectations over a Gaussian linear predictor -------------------------------------
    def expected_loglik(self, y: FloatArray, m: FloatArray,
                        v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``E[log p(y | eta)]`` for ``eta ~ N(m, v)`` and its gradients in ``m`` and ``v``.

        Gauss-Hermite quadrature for ``v <= 1`` (:meth:`Family.expected_loglik`; ``v <= 0.1``
        for an asymmetric link); for wider Gaussians, where the change of curvature of
        ``log F`` near 0 is narrow on the scale of the Hermite nodes, Gauss-Legendre panels
        (:func:`wide_gaussian_nodes`, with more panel ends near 0 for an asymmetric link),
        or a family's own rule.

        Parameters
        ----------
        y, m, v : ndarray of shape (n,)
            Labels encoded ±1, means and variances of the Gaussian linear predictors.

        Returns
        -------
        value, grad_m, grad_v : ndarray of shape (n,)
            ``grad_m = E[d1]``, ``grad_v = E[d2] / 2`` (Bonnet's and Price's theorems).
        """
        return by_width(v, super().expected_loglik, self._wide_expected_loglik, y, m, v,
                        **self._width())

    def expected_mean(self, m: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Mean and variance of ``P(y = +1 | eta) = F(eta)`` over ``eta ~ N(m, v)``.

        The link's closed form where it has one (:meth:`Link.gaussian_moments`, e.g. the
        probit link's); otherwise quadrature as in :meth:`expected_loglik`.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        mean, var : ndarray of shape (n,)
        """
        moments = self.link.gaussian_moments(m, v)
        if moments is not None:
            return moments
        return by_width(v, super().expected_mean, self._wide_expected_mean, m, v,
                        **self._width())

    def _width(self):
        """The variance above which :func:`by_width` takes the wide rule (its default for
        a symmetric link)."""
        return {} if self.link.symmetric else {"threshold": _GENERAL_WIDE_VARIANCE}

    def _panels(self):
        """The panel ends of :func:`wide_gaussian_nodes` (its default for a symmetric
        link)."""
        return {} if self.link.symmetric else {"breaks": _GENERAL_PANEL_ETA}

    def _wide_expected_loglik(self, y, m, v):
        """:meth:`expected_loglik` of wide Gaussians, by Gauss-Legendre panels
        (at the margins ``y eta`` for a symmetric link: the same panels, as they are
        symmetric about 0)."""
        if not self.link.symmetric:
            eta, weights = wide_gaussian_nodes(m, v, **self._panels())
            value, d1, d2 = self._terms(y, eta, ("value", "d1", "d2"))
            return ((value * weights).sum(axis=1), (d1 * weights).sum(axis=1),
                    0.5 * (d2 * weights).sum(axis=1))
        margin, weights = wide_gaussian_nodes(y * m, v)
        d1, d2 = self.link.log_inverse_derivatives(margin)
        return ((self.link.log_inverse(margin) * weights).sum(axis=1),
                y * (d1 * weights).sum(axis=1), 0.5 * (d2 * weights).sum(axis=1))

    def _wide_expected_mean(self, m, v):
        """:meth:`expected_mean` of wide Gaussians, by Gauss-Legendre panels."""
        eta, weights = wide_gaussian_nodes(m, v, **self._panels())
        p = self.mean(eta)
        mean = (p * weights).sum(axis=1)
        return mean, np.maximum((p**2 * weights).sum(axis=1) - mean**2, 0.0)

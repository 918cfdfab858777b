"""Bernoulli likelihood with logit link: binary labels encoded as ``y in {-1, +1}``."""

import numpy as np
from scipy.special import expit, ndtr
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils.multiclass import check_classification_targets

from ._base import Family, as_column, by_width, exp_log1p_exp_neg, half_lines, normal_pdf


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


class LogisticFamily(Family):
    """Bernoulli likelihood with logit link; labels encoded as ``y in {-1, +1}``.

    ``log p(y | eta) = -log(1 + exp(-y eta))``. Targets are any two class labels: sorted,
    the larger one (``classes[1]``) is the positive class, encoded +1.

    Expectations over ``eta ~ N(m, v)`` use Gauss-Hermite quadrature for ``v <= 1``. For wider
    Gaussians, where the sigmoid's curvature near 0 is too narrow for Hermite nodes (32 nodes
    err by 1e-2 in probability at v = 100), each function is split into a piecewise-linear
    part with a closed-form Gaussian expectation (``min(s, 0)``, a step) and a remainder that
    decays like ``exp(-|s|)``, integrated on each half line by Gauss-Laguerre quadrature;
    accurate to ~1e-10 for all ``v >= 1``.

    Parameters
    ----------
    n_quadrature : int, default=32
        Gauss-Hermite points of the expectations over narrow Gaussians.
    """

    name = "logistic"
    float32_loglik = True

    # --- targets ---------------------------------------------------------------------------
    @staticmethod
    def check_classes(labels, *, source="y", hint="", one_class_ok=False):
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
        labels = column_or_1d(labels, warn=True)
        check_classification_targets(labels)
        classes = np.unique(labels)
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported: the logistic model needs exactly "
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
            "{} contains only one class ({}); the logistic model needs samples of two "
            "classes.".format(source, classes[0] if len(classes) else "none"))

    def fit_target(self, y, classes=None, *, hint=""):
        """Validate the labels; ``classes`` (sorted) from ``classes`` when given, else from y.
        ``hint`` is appended to the message for more than two classes.

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
    def encode_target(y, classes=None, *, hint="", all_seen=False):
        """±1 labels against known ``classes`` (``classes[1]`` is +1; a single class is +1
        when it is 1 or True, else -1); unseen labels raise a ``ValueError`` (``hint`` is
        appended to its message). ``all_seen=True`` skips that check when ``classes`` are
        known to hold every label of y."""
        y = column_or_1d(y, warn=True)
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        unseen = [] if all_seen else np.setdiff1d(np.unique(y), classes)
        if len(unseen):
            raise ValueError(f"y contains labels {unseen[:5].tolist()} not in classes_ "
                             f"{np.asarray(classes).tolist()}.{hint}")
        if len(classes) == 1:
            return np.full(len(y), 1.0 if classes[0] in (1, True) else -1.0)
        return _plus_minus(y == classes[1])

    # --- the likelihood --------------------------------------------------------------------
    def loglik(self, y, eta):
        # log sigmoid(s) = min(s, 0) - log(1 + exp(-|s|)): stable, and about twice as fast
        # as scipy.special.log_expit on large (n, S) arrays
        eta = np.asarray(eta)
        if eta.dtype == np.float32 and eta.ndim:
            # the Hilbert projection's arrays, in place: u <= 1, so log(1 + u) is within
            # float32 rounding of log1p(u), and several times faster (numpy's log1p has no
            # vectorised loop)
            s = np.asarray(as_column(y, eta), dtype=np.float32) * eta
            u = np.abs(s)
            np.exp(np.negative(u, out=u), out=u)
            u += 1
            np.log(u, out=u)
            np.minimum(s, 0, out=s)
            s -= u
            return s
        s = as_column(y, eta) * eta
        return np.minimum(s, 0.0) - np.log1p(np.exp(-np.abs(s)))

    def d1(self, y, eta):
        y = as_column(y, eta)
        return y * expit(-y * eta)

    def d2(self, y, eta):
        return -expit(eta) * expit(-eta)  # not p (1 - p), which cancels to 0 for eta >> 1

    def loglik_and_derivatives(self, y, eta, second=False):
        # one exponential for the three: with s = y eta and e = exp(-|s|),
        # log sigmoid(s) = min(s, 0) - log1p(e), d1 = y sigmoid(-s) = y e / (1 + e) for
        # s > 0 and y / (1 + e) otherwise, d2 = -sigmoid(s) sigmoid(-s) = -e / (1 + e)^2
        y = as_column(y, eta)
        s = y * eta
        e = np.exp(-np.abs(s))
        one_plus_e = 1.0 + e
        loglik = np.minimum(s, 0.0) - np.log1p(e)
        d1 = y * np.where(s > 0, e, 1.0) / one_plus_e
        if not second:
            return loglik, d1
        return loglik, d1, -e / (one_plus_e * one_plus_e)

    def mean(self, eta):
        """Probability of the positive class."""
        return expit(eta)

    def link(self, mean_y):
        """Predictor whose ``E[y]`` (in the ±1 encoding) is ``mean_y``, clipped to be finite."""
        p = np.clip(0.5 * (1.0 + mean_y), 1e-6, 1 - 1e-6)
        return np.log(p) - np.log1p(-p)

    def predictive_variance(self, mean, var):
        """Variance of the positive-class indicator, ``E[p] (1 - E[p])`` (the posterior
        variance ``var`` of p is part of it: ``E[p (1 - p)] + Var[p]``)."""
        return mean * (1.0 - mean)

    def sample(self, eta, random_state=None):
        """Draws of ±1 labels given linear predictors."""
        rng = check_random_state(random_state)
        return np.where(rng.random_sample(np.shape(eta)) < expit(eta), 1.0, -1.0)

    # --- expectations over a Gaussian linear predictor -------------------------------------
    @staticmethod
    def _wide_moments(mu, v):
        """Expectations over ``s ~ N(mu, v)`` for wide Gaussians (v > 1), by splitting.

        Returns ``E[log sigmoid(s)]``, ``E[sigmoid(-s)]``, ``E[sigmoid(s) sigmoid(-s)]`` and
        ``E[sigmoid(s)^2]``. The remainders are ``int_0^inf r(x) N(x) + r(-x) N(-x) dx`` with
        ``r`` decaying like ``exp(-x)``, written as ``int exp(-x) [exp(x) r(x) ...] dx``.
        """
        x, weights, right, left = half_lines(mu, v)
        sd = np.sqrt(v)
        z = mu / sd
        sig = expit(x)  # exp(x) sigmoid(-x)
        # log sigmoid(s) = min(s, 0) - log1p(exp(-|s|))
        e_min = mu * ndtr(-z) - sd * normal_pdf(z, 0.0, 1.0)
        e_loglik = e_min - (exp_log1p_exp_neg(x) * (right + left)) @ weights
        # sigmoid(-s) = step(-s) + [sigmoid(-x) on x > 0, -sigmoid(-x) at s = -x]
        e_sig_neg = ndtr(-z) + (sig * (right - left)) @ weights
        # sigmoid(s) sigmoid(-s) is even; exp(x) sigmoid(x) sigmoid(-x) = sigmoid(x)^2
        e_curv = (sig**2 * (right + left)) @ weights
        # sigmoid(s)^2 = step(s) - sigmoid(-x)(1 + sigmoid(x)) at s = x, sigmoid(-x)^2 at -x
        e_sig_sq = ndtr(z) + ((-sig * (1.0 + sig)) * right + (sig * expit(-x)) * left) @ weights
        return e_loglik, e_sig_neg, e_curv, e_sig_sq

    def expected_loglik(self, y, m, v):
        def wide(y, m, v):
            e_loglik, e_sig_neg, e_curv, _ = self._wide_moments(y * m, v)
            # d/dm: y E[sigmoid(-s)]; d/dv: E[d2] / 2 (Price)
            return e_loglik, y * e_sig_neg, -0.5 * e_curv

        return by_width(v, super().expected_loglik, wide, y, m, v)

    def expected_mean(self, m, v):
        def wide(m, v):
            _, e_sig_neg, _, e_sig_sq = self._wide_moments(m, v)
            mean = 1.0 - e_sig_neg
            return mean, np.maximum(e_sig_sq - mean**2, 0.0)

        return by_width(v, super().expected_mean, wide, m, v)

"""Predicted probability against observed frequency of a binary classifier, with the
posterior predictive band of the observed frequency."""

import numbers

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_consistent_length, column_or_1d

from .._posterior import check_level
from ._base import axes, final_estimator, transform_for_final

# entries of one block of posterior predictive draws (draws x rows): bounded memory
_BLOCK_ENTRIES = 4_000_000


def _check_n_bins(n_bins):
    if not isinstance(n_bins, numbers.Integral) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    return int(n_bins)


def _bin_edges(y_prob, n_bins, strategy):
    """Edges of ``n_bins`` bins on [0, 1]: equal widths, or quantiles of ``y_prob``."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "quantile":
        edges = np.quantile(y_prob, np.linspace(0.0, 1.0, n_bins + 1))
        edges[0], edges[-1] = 0.0, 1.0
        return edges
    raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}.")


def _bin_indicator(y_prob, edges):
    """Sparse ``(n_samples, n_bins)`` indicator of each row's bin; bins as in
    :func:`numpy.histogram` (half-open, the last one closed)."""
    bins = np.searchsorted(edges[1:-1], y_prob, side="right")
    n = len(y_prob)
    return sparse.csr_matrix((np.ones(n), (np.arange(n), bins)), shape=(n, len(edges) - 1))


def _encode(y, classes, pos_label, name):
    """y as 1.0 for ``pos_label``, 0.0 for the other class; ValueError for other values."""
    y = np.asarray(y)
    unknown = np.setdiff1d(np.unique(y), classes)
    if unknown.size:
        raise ValueError(f"{name} has values {unknown[:5].tolist()} outside the classes "
                         f"{classes.tolist()}.")
    return (y == pos_label).astype(float)


class PredictiveCalibrationDisplay:
    """Calibration curve of a Bayesian binary classifier with its posterior predictive band.

    The rows are binned by their predicted probability of the positive class; each bin's
    point is the mean predicted probability against the observed frequency of the positive
    class, as in :class:`sklearn.calibration.CalibrationDisplay`. The band is the
    posterior predictive interval of that observed frequency: the frequency in each bin of
    data sets drawn from the fitted model (``sample_y``: parameters from the posterior,
    then labels), the equal-tailed interval at ``level`` over the draws. A point outside
    its band is a miscalibration the posterior does not account for, beyond the bin's
    binomial noise.

    Build it with :meth:`from_estimator` or :meth:`from_predictions`.

    Parameters
    ----------
    prob_true : ndarray of shape (n_nonempty_bins,)
        Observed frequency of the positive class in each non-empty bin.
    prob_pred : ndarray of shape (n_nonempty_bins,)
        Mean predicted probability in each bin.
    band_lower, band_upper : ndarray of shape (n_nonempty_bins,) or None, default=None
        Bounds of the posterior predictive band of ``prob_true``; None: no band.
    level : float, default=0.95
        Posterior probability inside the band (for its label).
    name : str or None, default=None
        Legend label of the curve.
    pos_label : int, float, bool or str or None, default=None
        The positive class (for the axis label).

    Attributes
    ----------
    line_ : matplotlib Line2D
        The calibration curve.
    band_ : matplotlib PolyCollection or None
        The band, None without one.
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        The figure of ``ax_``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcoreset import BayesianLogisticRegression
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.plotting import PredictiveCalibrationDisplay
    >>> X, y = make_logistic_regression(2000, n_features=3, random_state=0)
    >>> clf = BayesianLogisticRegression().fit(X, y)
    >>> display = PredictiveCalibrationDisplay.from_estimator(clf, X, y, random_state=0)
    >>> bool(((display.band_lower <= display.prob_true)
    ...       & (display.prob_true <= display.band_upper)).mean() > 0.5)
    True
    """

    def __init__(self, *, prob_true, prob_pred, band_lower=None, band_upper=None,
                 level=0.95, name=None, pos_label=None):
        self.prob_true = prob_true
        self.prob_pred = prob_pred
        self.band_lower = band_lower
        self.band_upper = band_upper
        self.level = level
        self.name = name
        self.pos_label = pos_label

    def plot(self, *, ax=None, name=None, ref_line=True, **kwargs):
        """Draw the curve, its band and the diagonal on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        name : str or None, default=None
            Legend label of the curve; None: the display's ``name``.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : PredictiveCalibrationDisplay
            This display, with ``line_``, ``band_``, ``ax_`` and ``figure_`` set.
        """
        self.figure_, self.ax_ = axes(ax)
        name = self.name if name is None else name
        if ref_line:
            self.ax_.plot([0, 1], [0, 1], color="0.4", linestyle=":", linewidth=1,
                          label="perfectly calibrated")
        self.line_, = self.ax_.plot(self.prob_pred, self.prob_true,
                                    **{"marker": "s", "label": name, **kwargs})
        self.band_ = None
        if self.band_lower is not None:
            self.band_ = self.ax_.fill_between(
                self.prob_pred, self.band_lower, self.band_upper,
                color=self.line_.get_color(), alpha=0.25, linewidth=0,
                label=f"{self.level:.0%} posterior predictive band")
        positive = "" if self.pos_label is None else f" (positive class: {self.pos_label})"
        self.ax_.set_xlabel(f"mean predicted probability{positive}")
        self.ax_.set_ylabel(f"observed frequency{positive}")
        self.ax_.set_xlim(-0.02, 1.02)
        self.ax_.set_ylim(-0.02, 1.02)
        self.ax_.set_aspect("equal")
        self.ax_.legend(loc="upper left")
        return self

    @classmethod
    def from_estimator(cls, estimator, X, y, *, n_bins=10, strategy="uniform", level=0.95,
                       n_draws=500, random_state=None, name=None, ref_line=True, ax=None,
                       **kwargs):
        """Calibration of a fitted Bayesian binary classifier on ``(X, y)``.

        The probabilities are ``predict_proba(X)[:, 1]``, those of ``classes_[1]``; the
        band comes from ``n_draws`` posterior predictive draws of the labels of ``X``
        (``sample_y``, in blocks of bounded memory).

        Parameters
        ----------
        estimator : classifier
            A fitted skcoreset binary classifier (``BayesianLogisticRegression``,
            ``BayesianProbitRegression``, ``BayesianBinaryRegression``) or a pipeline
            ending in one.
        X : array-like of shape (n_samples, n_features)
            The rows, typically held out (a dask array is computed: the predictions, then
            the draws a block at a time).
        y : array-like of shape (n_samples,)
            Their labels, among ``classes_``.
        n_bins : int, default=10
            Number of bins of the predicted probability.
        strategy : {"uniform", "quantile"}, default="uniform"
            Bins of equal width on [0, 1], or holding equal numbers of rows.
        level : float, default=0.95
            Posterior probability inside the band.
        n_draws : int, default=500
            Posterior predictive draws behind the band.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.
        name : str or None, default=None
            Legend label; None: the estimator's class name.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : PredictiveCalibrationDisplay
            The display, drawn.
        """
        final = final_estimator(estimator)
        classes = getattr(final, "classes_", None)
        if classes is None or len(classes) != 2 or not hasattr(final, "sample_y"):
            raise TypeError(f"estimator must be a fitted binary classifier with "
                            f"predict_proba and sample_y, got {type(final).__name__}.")
        if not isinstance(n_draws, numbers.Integral) or isinstance(n_draws, bool) \
                or n_draws < 2:
            raise ValueError(f"n_draws must be an integer of at least 2, got {n_draws!r}.")
        level = check_level(level)
        y_true = _encode(column_or_1d(y), classes, classes[1], "y")
        # np.asarray: a dask X's lazy predictions computed (n_samples values; the draws
        # below a block at a time)
        y_prob = np.asarray(estimator.predict_proba(X)[:, 1], dtype=float)
        check_consistent_length(y_prob, y_true)
        Xt = transform_for_final(estimator, X)
        rng = check_random_state(random_state)
        block = max(1, min(n_draws, _BLOCK_ENTRIES // max(len(y_true), 1)))
        n_bins = _check_n_bins(n_bins)
        indicator = _bin_indicator(y_prob, _bin_edges(y_prob, n_bins, strategy))
        positives = []  # positives per bin, one row per draw
        for start in range(0, n_draws, block):
            draws = final.sample_y(Xt, min(block, n_draws - start), random_state=rng)
            hits = (np.asarray(draws) == classes[1]).astype(float)
            positives.append(np.asarray(indicator.T @ hits.T).T)
        return cls._from_binned(y_true, y_prob, indicator, np.vstack(positives), level,
                                type(final).__name__ if name is None else name, classes[1],
                                ref_line, ax, kwargs)

    @classmethod
    def from_predictions(cls, y_true, y_prob, *, y_draws=None, pos_label=None, n_bins=10,
                         strategy="uniform", level=0.95, name=None, ref_line=True, ax=None,
                         **kwargs):
        """Calibration of given probabilities, with the band of given predictive draws.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            The labels, of two classes.
        y_prob : array-like of shape (n_samples,)
            Predicted probabilities of ``pos_label``, in [0, 1].
        y_draws : array-like of shape (n_draws, n_samples) or None, default=None
            Labels drawn from the posterior predictive distribution at the same rows, one
            row per draw (what ``sample_y`` returns); None: no band.
        pos_label : int, float, bool or str or None, default=None
            The positive class; None: the larger of the two labels.
        n_bins : int, default=10
            Number of bins of the predicted probability.
        strategy : {"uniform", "quantile"}, default="uniform"
            Bins of equal width on [0, 1], or holding equal numbers of rows.
        level : float, default=0.95
            Posterior probability inside the band.
        name : str or None, default=None
            Legend label of the curve.
        ref_line : bool, default=True
            Draw the diagonal of perfect calibration.
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : PredictiveCalibrationDisplay
            The display, drawn.
        """
        level = check_level(level)
        y_true = column_or_1d(y_true)
        y_prob = column_or_1d(y_prob).astype(float)
        check_consistent_length(y_true, y_prob)
        if not np.all((y_prob >= 0) & (y_prob <= 1)):
            raise ValueError("y_prob must hold probabilities in [0, 1].")
        classes = np.unique(y_true)
        if len(classes) > 2 or (pos_label is None and len(classes) != 2):
            raise ValueError(f"y_true must hold two classes, got {classes[:5].tolist()}"
                             + ("" if len(classes) > 2 else "; pass pos_label"))
        pos_label = classes[-1] if pos_label is None else pos_label
        if pos_label not in classes and len(classes) == 2:
            raise ValueError(f"pos_label={pos_label!r} is not one of the classes "
                             f"{classes.tolist()}.")
        classes = np.union1d(classes, [pos_label])
        encoded = _encode(y_true, classes, pos_label, "y_true")
        n_bins = _check_n_bins(n_bins)
        indicator = _bin_indicator(y_prob, _bin_edges(y_prob, n_bins, strategy))
        positives = None
        if y_draws is not None:
            y_draws = np.asarray(y_draws)
            if y_draws.ndim != 2 or y_draws.shape[1] != len(y_true) or len(y_draws) < 2:
                raise ValueError(f"y_draws must have shape (n_draws, n_samples) with "
                                 f"n_samples={len(y_true)} and at least 2 draws, got "
                                 f"{y_draws.shape}.")
            draws = _encode(y_draws.ravel(), classes, pos_label, "y_draws")
            positives = np.asarray(indicator.T @ draws.reshape(y_draws.shape).T).T
        return cls._from_binned(encoded, y_prob, indicator, positives, level, name,
                                pos_label, ref_line, ax, kwargs)

    @classmethod
    def _from_binned(cls, y_true, y_prob, indicator, positives, level, name, pos_label,
                     ref_line, ax, kwargs):
        """The display of 0/1 labels and probabilities binned by ``indicator``, with the
        band of the positives per bin of the predictive draws (``(n_draws, n_bins)``, or
        None), drawn."""
        counts = np.asarray(indicator.sum(axis=0)).ravel()
        nonempty = counts > 0
        prob_true = (indicator.T @ y_true)[nonempty] / counts[nonempty]
        prob_pred = (indicator.T @ y_prob)[nonempty] / counts[nonempty]
        lower = upper = None
        if positives is not None:
            frequency = positives[:, nonempty] / counts[nonempty]
            lower, upper = np.quantile(frequency, [(1 - level) / 2, (1 + level) / 2], axis=0)
        display = cls(prob_true=prob_true, prob_pred=prob_pred, band_lower=lower,
                      band_upper=upper, level=level, name=name, pos_label=pos_label)
        return display.plot(ax=ax, ref_line=ref_line, **kwargs)

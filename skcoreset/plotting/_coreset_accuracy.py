"""The KL divergence of a coreset posterior from the full posterior against the coreset's
size."""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ..exceptions import CoresetAccuracyWarning
from ..metrics import coreset_quality
from ._base import axes


def _check_sizes(sizes):
    """``sizes`` as a 1-D array of distinct positive integers, in increasing order."""
    try:
        array = np.asarray(sizes, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"sizes must be a list of positive integers, got {sizes!r}.") from exc
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"sizes must be a non-empty 1-D list of coreset sizes, got shape "
                         f"{array.shape}.")
    if not np.all(np.isfinite(array)) or np.any(array < 1) or np.any(array != np.round(array)):
        raise ValueError(f"sizes must hold positive integers, got {sizes!r}.")
    return np.unique(array.astype(int))


class CoresetAccuracyDisplay:
    """Coreset accuracy against coreset size: ``KL(coreset posterior || full posterior)``.

    The KL divergence, in nats, between the Laplace approximations of the posterior given
    the weighted coreset and of the posterior given all rows, against the number of coreset
    rows, on logarithmic axes, with the target accuracy marked. Below about 0.1 nats the
    two posteriors are hard to tell apart.

    Build it with :meth:`from_coreset` (the sizes a :class:`~skcoreset.QuasiNewtonCoreset`
    tried while growing, its ``kl_path_``) or :meth:`from_estimator` (any constructor,
    fitted at each of several sizes and measured by
    :func:`~skcoreset.metrics.coreset_quality`).

    Parameters
    ----------
    sizes : array-like of shape (n_sizes,)
        Number of coreset rows.
    kl : array-like of shape (n_sizes,)
        KL divergence of the coreset posterior from the full posterior at each size, in
        nats.
    target_kl : float or None, default=None
        Target accuracy in nats, drawn as a horizontal line; None: no line.
    name : str or None, default=None
        Legend label of the curve.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The KL curve.
    target_line_ : matplotlib Line2D or None
        The target line, None without ``target_kl``.
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        The figure of ``ax_``.

    See Also
    --------
    skcoreset.metrics.coreset_quality : The KL divergence and mean error of one coreset.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcoreset import QuasiNewtonCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.plotting import CoresetAccuracyDisplay
    >>> X, y = make_logistic_regression(20_000, n_features=5, random_state=0)
    >>> coreset = QuasiNewtonCoreset(target_kl=0.01, random_state=0).fit(X, y)
    >>> display = CoresetAccuracyDisplay.from_coreset(coreset)
    >>> display.line_.get_xdata() is not None
    True
    """

    def __init__(self, *, sizes, kl, target_kl=None, name=None):
        self.sizes = sizes
        self.kl = kl
        self.target_kl = target_kl
        self.name = name

    def plot(self, *, ax=None, name=None, **kwargs):
        """Draw the curve (and the target line) on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        name : str or None, default=None
            Legend label of the curve; None: the display's ``name``.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : CoresetAccuracyDisplay
            This display, with ``line_``, ``target_line_``, ``ax_`` and ``figure_`` set.
        """
        sizes = np.asarray(self.sizes, dtype=float)
        kl = np.asarray(self.kl, dtype=float)
        if sizes.shape != kl.shape or sizes.ndim != 1:
            raise ValueError(f"sizes and kl must be 1-D of the same length, got shapes "
                             f"{sizes.shape} and {kl.shape}.")
        self.figure_, self.ax_ = axes(ax)
        name = self.name if name is None else name
        self.line_, = self.ax_.plot(sizes, kl, **{"marker": "o", "label": name, **kwargs})
        self.target_line_ = None
        if self.target_kl is not None:
            self.target_line_ = self.ax_.axhline(
                self.target_kl, color="0.4", linestyle="--", linewidth=1,
                label=f"target_kl = {self.target_kl:g}")
        self.ax_.set_xscale("log")
        if np.all(kl > 0):  # a KL of exactly 0 (the whole data) has no logarithm
            self.ax_.set_yscale("log")
        self.ax_.set_xlabel("coreset rows")
        self.ax_.set_ylabel("KL(coreset posterior || full posterior), nats")
        if name is not None or self.target_line_ is not None:
            self.ax_.legend()
        return self

    @classmethod
    def from_coreset(cls, coreset, *, name=None, ax=None, **kwargs):
        """The growth path of a fitted :class:`~skcoreset.QuasiNewtonCoreset`.

        Plots its ``kl_path_``: each size it tried and the KL estimate there (between the
        Laplace approximations of the coreset and full posteriors, after the exact first
        step), with ``target_kl`` marked when the size was chosen by it (``M="auto"``).
        An integer ``M`` gives one point.

        Parameters
        ----------
        coreset : QuasiNewtonCoreset
            A fitted constructor with a ``kl_path_``.
        name : str or None, default=None
            Legend label; None: the constructor's class name.
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : CoresetAccuracyDisplay
            The display, drawn.
        """
        check_is_fitted(coreset)
        if not hasattr(coreset, "kl_path_"):
            raise TypeError(
                f"coreset must be a fitted QuasiNewtonCoreset, whose kl_path_ records the "
                f"sizes it tried; {type(coreset).__name__} has none. Use "
                "CoresetAccuracyDisplay.from_estimator(constructor, X, y, sizes=[...]) to "
                "fit any constructor at several sizes.")
        path = np.asarray(coreset.kl_path_, dtype=float)
        if len(path) == 0:
            raise ValueError(
                "The coreset holds every row of positive weight (stop_reason_="
                f"{getattr(coreset, 'stop_reason_', 'whole data')!r}): it is exact and "
                "has no growth path to plot.")
        auto = isinstance(coreset.get_params(deep=False).get("M"), str)
        display = cls(sizes=path[:, 0], kl=path[:, 1],
                      target_kl=coreset.target_kl if auto else None,
                      name=type(coreset).__name__ if name is None else name)
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(cls, constructor, X, y, *, sizes, sample_weight=None,
                       target_kl=None, name=None, ax=None, **kwargs):
        """Fit a coreset constructor at several sizes and plot its accuracy.

        A clone of ``constructor`` is fitted with ``M`` set to each of ``sizes``; each
        coreset is measured by :func:`~skcoreset.metrics.coreset_quality` (the full
        posterior is fitted once) and plotted at the number of distinct rows it kept (a
        greedy constructor may stop below its budget).

        Parameters
        ----------
        constructor : coreset constructor
            An unfitted or fitted skcoreset coreset constructor with an ``M`` parameter;
            it is not modified.
        X : array-like of shape (n_samples, n_features)
            The data.
        y : array-like of shape (n_samples,)
            The targets.
        sizes : array-like of int
            The values of ``M`` to try.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights, for the coresets and the full posterior.
        target_kl : float or None, default=None
            Target accuracy in nats to mark; None: none.
        name : str or None, default=None
            Legend label; None: the constructor's class name.
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the curve.

        Returns
        -------
        display : CoresetAccuracyDisplay
            The display, drawn.
        """
        if not hasattr(constructor, "get_params") or "M" not in constructor.get_params():
            raise TypeError(f"constructor must be a skcoreset coreset constructor with an M "
                            f"parameter, got {type(constructor).__name__}.")
        sizes = _check_sizes(sizes)
        kept, kl, full = [], [], None
        for size in sizes:
            coreset = clone(constructor).set_params(M=int(size))
            with warnings.catch_warnings():  # an inaccurate small coreset is what is shown
                warnings.simplefilter("ignore", CoresetAccuracyWarning)
                coreset.fit(X, y, sample_weight=sample_weight)
            quality = coreset_quality(coreset, X, y, sample_weight, full_posterior=full)
            full = quality.full_posterior
            kept.append(quality.size)
            kl.append(quality.kl)
        display = cls(sizes=np.array(kept), kl=np.array(kl), target_kl=target_kl,
                      name=type(constructor).__name__ if name is None else name)
        return display.plot(ax=ax, **kwargs)

"""Posterior means and credible intervals of the coefficients of several fits, side by
side."""

from collections.abc import Mapping

import numpy as np

from .._posterior import check_level
from .._summary import parameter_names, steps_feature_names
from ._base import axes, final_estimator


class PosteriorComparisonDisplay:
    """Coefficient posteriors of several fits, side by side.

    One row per parameter (the coefficients, then the intercept; not the negative binomial
    ``alpha``, whose scale differs), one marker per fit: the
    posterior mean with its equal-tailed credible interval (``credible_interval``) as an
    error bar. Reads at a glance whether a coreset fit (or a cheaper method) recovers the
    posterior of the fit on all rows, in location and in width.

    Build it with :meth:`from_estimators`.

    Parameters
    ----------
    means : array-like of shape (n_fits, n_params)
        Posterior means, one row per fit.
    lower, upper : array-like of shape (n_fits, n_params)
        Bounds of the credible intervals.
    parameter_names : array-like of str of shape (n_params,)
        Names of the parameters.
    fit_names : array-like of str of shape (n_fits,)
        Legend labels of the fits.
    level : float, default=0.95
        Posterior probability inside each interval (for the axis label).

    Attributes
    ----------
    errorbars_ : dict of str to matplotlib ErrorbarContainer
        The markers and interval bars of each fit, by fit name.
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
    >>> from skcoreset.plotting import PosteriorComparisonDisplay
    >>> X, y = make_logistic_regression(2000, n_features=3, random_state=0)
    >>> fits = {"all rows": BayesianLogisticRegression().fit(X, y),
    ...         "500 rows": BayesianLogisticRegression().fit(X[:500], y[:500])}
    >>> display = PosteriorComparisonDisplay.from_estimators(fits)
    >>> sorted(display.errorbars_)
    ['500 rows', 'all rows']
    """

    def __init__(self, *, means, lower, upper, parameter_names, fit_names, level=0.95):
        self.means = means
        self.lower = lower
        self.upper = upper
        self.parameter_names = parameter_names
        self.fit_names = fit_names
        self.level = level

    def plot(self, *, ax=None, **kwargs):
        """Draw the error bars on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar`, for every fit.

        Returns
        -------
        display : PosteriorComparisonDisplay
            This display, with ``errorbars_``, ``ax_`` and ``figure_`` set.
        """
        means = np.atleast_2d(np.asarray(self.means, dtype=float))
        lower = np.atleast_2d(np.asarray(self.lower, dtype=float))
        upper = np.atleast_2d(np.asarray(self.upper, dtype=float))
        names = [str(name) for name in self.parameter_names]
        fits = [str(name) for name in self.fit_names]
        if not (means.shape == lower.shape == upper.shape == (len(fits), len(names))):
            raise ValueError(f"means, lower and upper must have shape (n_fits, n_params) = "
                             f"({len(fits)}, {len(names)}), got {means.shape}, "
                             f"{lower.shape} and {upper.shape}.")
        self.figure_, self.ax_ = axes(ax)
        rows = np.arange(len(names), dtype=float)
        # the fits of one parameter spread over 60 % of its row, first fit on top
        offsets = (np.linspace(-0.3, 0.3, len(fits)) if len(fits) > 1 else np.zeros(1))
        self.errorbars_ = {}
        for k, fit in enumerate(fits):
            xerr = np.vstack([means[k] - lower[k], upper[k] - means[k]])
            self.errorbars_[fit] = self.ax_.errorbar(
                means[k], rows + offsets[k], xerr=xerr,
                **{"fmt": "o", "capsize": 3, "label": fit, **kwargs})
        self.ax_.axvline(0.0, color="0.6", linewidth=0.8, zorder=0)
        self.ax_.set_yticks(rows, names)
        self.ax_.set_ylim(len(names) - 0.5, -0.5)  # first parameter at the top
        self.ax_.set_xlabel(f"posterior mean and {self.level:.0%} credible interval")
        self.ax_.legend()
        return self

    @classmethod
    def from_estimators(cls, estimators, *, feature_names=None, level=0.95,
                        include_intercept=True, ax=None, **kwargs):
        """Compare the posteriors of fitted Bayesian GLM estimators.

        Parameters
        ----------
        estimators : dict of str to estimator
            Fitted skcoreset Bayesian GLM estimators (or pipelines ending in one, a
            coreset pipeline for instance) by legend label, all with the same parameters.
        feature_names : array-like of str or None, default=None
            One name per coefficient; None: the estimators' ``feature_names_in_`` (all
            must agree), else ``x0``, ``x1``, ...
        level : float, default=0.95
            Posterior probability inside each credible interval.
        include_intercept : bool, default=True
            Draw the intercept too (its scale can dwarf the coefficients').
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure's.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar`, for every fit.

        Returns
        -------
        display : PosteriorComparisonDisplay
            The display, drawn.
        """
        if not isinstance(estimators, Mapping) or len(estimators) == 0:
            raise TypeError("estimators must be a non-empty dict of {label: fitted "
                            f"estimator}}, got {type(estimators).__name__}.")
        level = check_level(level)
        means, lower, upper, names = [], [], [], None
        for label, estimator in estimators.items():
            final = final_estimator(estimator, f"estimators[{label!r}]")
            these = parameter_names(final, steps_feature_names(estimator)
                                    if feature_names is None else feature_names)
            if names is None:
                names = these
            elif len(these) != len(names) or np.any(these != names):
                raise ValueError(
                    f"estimators[{label!r}] has parameters {list(these)}, unlike the first "
                    f"estimator's {list(names)}: only fits of the same model compare.")
            means.append(final.posterior_.mean)
            bounds = final.credible_interval(level)
            lower.append(bounds[0])
            upper.append(bounds[1])
        keep = np.ones(len(names), dtype=bool)
        if not include_intercept and final.fit_intercept:
            keep[-1] = False
        display = cls(means=np.array(means)[:, keep], lower=np.array(lower)[:, keep],
                      upper=np.array(upper)[:, keep], parameter_names=names[keep],
                      fit_names=list(estimators), level=level)
        return display.plot(ax=ax, **kwargs)

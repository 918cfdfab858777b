"""The chains of an MCMC fit, per parameter: trace and rank plots with R-hat and ESS."""

import numpy as np
from scipy.stats import rankdata

from .._arviz import posterior_draws
from .._posterior import SamplePosterior
from .._summary import parameter_names, steps_feature_names
from ._base import final_estimator

# At most this many parameters by default: a figure of more rows is unreadable.
_DEFAULT_MAX_PARAMETERS = 8


def _grid(ax, n_rows):
    """``(figure, axes of shape (n_rows, 2))``: new ones, ``ax`` itself (an array of that
    shape), or a grid in the place of one Axes ``ax`` (as scikit-learn's
    ``PartialDependenceDisplay`` divides it)."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.gridspec import GridSpecFromSubplotSpec
    except ImportError as exc:  # the optional ``plot`` extra
        raise ImportError('The skcoreset displays need matplotlib: pip install '
                          '"skcoreset[plot]" (or pip install matplotlib).') from exc
    if ax is None:
        figure, grid = plt.subplots(n_rows, 2, figsize=(9, 1.8 * n_rows + 0.6),
                                    squeeze=False, constrained_layout=True)
        return figure, grid
    if hasattr(ax, "get_subplotspec") and hasattr(ax, "plot"):  # one Axes: divided
        figure = ax.figure
        spec = GridSpecFromSubplotSpec(n_rows, 2, subplot_spec=ax.get_subplotspec(),
                                       hspace=0.6, wspace=0.25)
        ax.set_axis_off()
        return figure, np.array([[figure.add_subplot(spec[i, j]) for j in range(2)]
                                 for i in range(n_rows)])
    grid = np.asarray(ax, dtype=object)
    if grid.shape != (n_rows, 2) or not all(hasattr(a, "plot") for a in grid.ravel()):
        raise ValueError(f"ax must be None, one matplotlib Axes, or an array of Axes of "
                         f"shape ({n_rows}, 2) (a trace and a rank plot per parameter); "
                         f"got {type(ax).__name__} of shape {grid.shape}.")
    return grid[0, 0].figure, grid


class MCMCDiagnosticsDisplay:
    """The chains of an MCMC posterior, one row per parameter: trace and rank plots.

    For each parameter, on the left the draws of each chain in order (a trace: chains
    that converged overlap and wander over the same range), on the right the histogram of
    each chain's ranks among all draws (a rank plot, Vehtari et al., 2021: flat when the
    chains sample the same distribution; a chain above the others at one end sits higher
    or lower than they do). The title gives the parameter's R-hat and effective sample
    size, as in the fit's ``summary()``. Parameters are named as ``summary()`` names
    them.

    Build it with :meth:`from_estimator`.

    Parameters
    ----------
    draws : array-like of shape (n_chains, n_draws, n_params)
        The draws of each chain, in order.
    parameter_names : array-like of str of shape (n_params,)
        Names of the parameters.
    r_hat : array-like of shape (n_params,) or None, default=None
        R-hat of each parameter, for the titles.
    ess : array-like of shape (n_params,) or None, default=None
        Effective sample size of each parameter, for the titles.
    n_bins : int, default=20
        Bins of the rank histograms.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes of shape (n_params, 2)
        The trace (column 0) and rank (column 1) plot of each parameter.
    trace_lines_ : ndarray of matplotlib Line2D of shape (n_params, n_chains)
        The trace of each chain.
    rank_lines_ : ndarray of matplotlib Line2D of shape (n_params, n_chains)
        The rank histogram of each chain, as a step line.
    figure_ : matplotlib Figure
        The figure drawn on.

    References
    ----------
    A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Bürkner. Rank-normalization,
    folding, and localization: an improved R-hat for assessing convergence of MCMC.
    Bayesian Analysis, 16(2):667-718, 2021.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcoreset import BayesianLogisticRegression
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.plotting import MCMCDiagnosticsDisplay
    >>> X, y = make_logistic_regression(500, n_features=2, random_state=0)
    >>> clf = BayesianLogisticRegression(method="mcmc", n_draws=200, n_burnin=200,
    ...                                  n_chains=2, random_state=0).fit(X, y)
    >>> display = MCMCDiagnosticsDisplay.from_estimator(clf)
    >>> display.axes_.shape
    (3, 2)
    """

    def __init__(self, *, draws, parameter_names, r_hat=None, ess=None, n_bins=20):
        self.draws = draws
        self.parameter_names = parameter_names
        self.r_hat = r_hat
        self.ess = ess
        self.n_bins = n_bins

    def plot(self, *, ax=None, **kwargs):
        """Draw the trace and rank plot of each parameter.

        Parameters
        ----------
        ax : matplotlib Axes, array of Axes of shape (n_params, 2), or None, default=None
            Where to draw: None, a new figure; one Axes, divided into a grid of
            ``n_params`` rows of two plots; an array, one Axes per plot.
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the traces.

        Returns
        -------
        display : MCMCDiagnosticsDisplay
            This display, with ``axes_``, ``trace_lines_``, ``rank_lines_`` and
            ``figure_`` set.
        """
        draws = np.asarray(self.draws, dtype=float)
        names = [str(name) for name in self.parameter_names]
        if draws.ndim != 3 or draws.shape[2] != len(names):
            raise ValueError(f"draws must have shape (n_chains, n_draws, n_params) with one "
                             f"name per parameter; got shape {draws.shape} and "
                             f"{len(names)} names.")
        n_chains, n_draws, n_params = draws.shape
        if not isinstance(self.n_bins, (int, np.integer)) or self.n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer, got {self.n_bins!r}.")
        self.figure_, self.axes_ = _grid(ax, n_params)
        self.trace_lines_ = np.empty((n_params, n_chains), dtype=object)
        self.rank_lines_ = np.empty((n_params, n_chains), dtype=object)
        edges = np.linspace(0.5, n_chains * n_draws + 0.5, self.n_bins + 1)
        for j, name in enumerate(names):
            trace, rank = self.axes_[j]
            ranks = rankdata(draws[:, :, j], axis=None).reshape(n_chains, n_draws)
            for c in range(n_chains):
                self.trace_lines_[j, c], = trace.plot(
                    draws[c, :, j], **{"linewidth": 0.6, "label": f"chain {c}", **kwargs})
                counts, _ = np.histogram(ranks[c], bins=edges)
                self.rank_lines_[j, c], = rank.step(
                    edges, np.r_[counts, counts[-1]], where="post",
                    color=self.trace_lines_[j, c].get_color(), label=f"chain {c}")
            # the count of a bin if every chain's ranks were uniform
            rank.axhline(n_draws / self.n_bins, color="0.4", linestyle="--", linewidth=1)
            rank.set_ylim(bottom=0)
            title = name
            if self.r_hat is not None:
                title += f"   R-hat {np.asarray(self.r_hat)[j]:.3f}"
            if self.ess is not None:
                title += f"   ESS {np.asarray(self.ess)[j]:.0f}"
            trace.set_title(title, fontsize="medium", loc="left")
            trace.set_ylabel("value")
            rank.set_ylabel("draws per bin")
        self.axes_[-1, 0].set_xlabel("draw")
        self.axes_[-1, 1].set_xlabel("rank among all draws")
        if n_chains > 1:
            self.axes_[0, 1].legend(fontsize="small")
        return self

    @classmethod
    def from_estimator(cls, estimator, *, parameters=None, feature_names=None, n_bins=20,
                       ax=None, **kwargs):
        """The chains of a fitted MCMC estimator (``method="mcmc"``), or of the final
        step of a pipeline.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A skcoreset Bayesian GLM fitted with ``method="mcmc"``, alone or as the last
            step of a pipeline (whose steps name its features, as in ``summary()``; not
            after an exact correction, whose draws are not chains).
        parameters : list of str or int, or None, default=None
            The parameters to show, by name (as in ``summary()``) or position in
            ``[coef..., intercept]``; None: the first 8.
        feature_names : array-like of str, default=None
            Names of the features, instead of those of ``summary()``.
        n_bins : int, default=20
            Bins of the rank histograms.
        ax : matplotlib Axes, array of Axes of shape (n_params, 2), or None, default=None
            Where to draw (see :meth:`plot`).
        **kwargs : dict
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the traces.

        Returns
        -------
        display : MCMCDiagnosticsDisplay
            The display, drawn.
        """
        final = final_estimator(estimator)
        if getattr(estimator, "exact_corrected_", False):
            raise ValueError(
                "The pipeline's posterior was corrected to the exact one (exact_correction, "
                "by default after a coreset step and MCMC): its draws are resampled by "
                "importance weights, not chains, and r_hat_ describes the run before the "
                "correction. Show the chains of a pipeline fitted with "
                "exact_correction=False.")
        if not isinstance(final.posterior_, SamplePosterior) or not hasattr(final, "r_hat_"):
            raise TypeError(
                f"MCMCDiagnosticsDisplay shows the chains of an MCMC fit; this "
                f"{type(final).__name__} was fitted with method={final.method!r}, whose "
                "posterior has no chains. Fit it with method='mcmc'.")
        names = parameter_names(final, steps_feature_names(estimator)
                                if feature_names is None else feature_names)
        chains, _ = posterior_draws(final, None, None, np.random.RandomState(0))
        if parameters is None:
            keep = np.arange(min(len(names), _DEFAULT_MAX_PARAMETERS))
        else:
            keep = np.array([_position(parameter, names) for parameter in parameters],
                            dtype=int)
        display = cls(draws=chains[:, :, keep], parameter_names=names[keep],
                      r_hat=np.asarray(final.r_hat_)[keep],
                      ess=np.asarray(final.effective_sample_size_)[keep], n_bins=n_bins)
        return display.plot(ax=ax, **kwargs)


def _position(parameter, names):
    """The position of ``parameter`` (a name or an index) in ``names``."""
    if isinstance(parameter, (int, np.integer)) and not isinstance(parameter, bool):
        if not -len(names) <= parameter < len(names):
            raise ValueError(f"parameter index {parameter} is out of range for "
                             f"{len(names)} parameters.")
        return int(parameter) % len(names)
    found = np.flatnonzero(names == str(parameter))
    if len(found) == 0:
        raise ValueError(f"Unknown parameter {parameter!r}; the parameters are "
                         f"{list(names)}.")
    return int(found[0])

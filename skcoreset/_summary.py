"""The posterior table of the fitted GLM estimators' ``summary()``: fixed-width text with
a header, as statsmodels prints its results, and a DataFrame on demand (pandas is optional
and imported here, lazily)."""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._posterior import SamplePosterior

# fitted attributes set by method="mcmc" only: the keys of InferenceResult.extra they copy
MCMC_DIAGNOSTICS = ("acceptance_fraction", "autocorr_time", "effective_sample_size", "r_hat",
                    "n_divergences", "sample_stats", "n_gradients", "n_max_tree_depth")


def parameter_names(estimator, feature_names=None):
    """Names of ``theta = [coef..., intercept]``: ``feature_names`` when given (checked),
    else ``feature_names_in_``, else the columns of a dask DataFrame fitted on (else ``x0``,
    ``x1``, ...), then ``"intercept"`` when one is fitted."""
    if feature_names is not None:
        names = [str(name) for name in np.asarray(feature_names, dtype=object).ravel()]
        if len(names) != estimator.n_features_in_:
            raise ValueError(
                f"feature_names has {len(names)} names but the estimator was fitted on "
                f"{estimator.n_features_in_} features.")
    elif hasattr(estimator, "feature_names_in_"):
        names = [str(name) for name in estimator.feature_names_in_]
    elif getattr(estimator, "_column_names", None) is not None:  # a dask DataFrame's
        names = list(estimator._column_names)
    else:
        names = [f"x{j}" for j in range(estimator.n_features_in_)]
    if estimator.fit_intercept:
        names.append("intercept")
    return np.asarray(names, dtype=object)


def steps_feature_names(pipeline):
    """The names of the features the final step of ``pipeline`` sees: the
    ``get_feature_names_out()`` of the steps before it (coreset steps pass names through),
    or None when one of them gives none (or ``pipeline`` is not a pipeline of several
    steps). The names of ``summary``, ``credible_interval``, ``to_arviz`` and the displays
    of a pipeline."""
    if len(getattr(pipeline, "steps", ())) < 2:
        return None
    try:
        return pipeline[:-1].get_feature_names_out()
    except (AttributeError, ValueError, TypeError):  # a step without names
        return None


class CredibleIntervals(tuple):
    """Equal-tailed marginal credible intervals of the parameters, named.

    A pair ``(lower, upper)`` of arrays over ``[coef..., intercept]`` (it unpacks as
    ``lower, upper = est.credible_interval()``) that also carries the parameters' names, as
    :meth:`~skcoreset.BayesianLogisticRegression.summary` names its rows. Returned by the
    estimators' ``credible_interval``.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_params,)
        The bounds.
    names : array-like of str of shape (n_params,)
        The parameters' names.
    level : float
        The posterior probability inside each interval.

    Attributes
    ----------
    lower, upper : ndarray of shape (n_params,)
        The bounds.
    names : ndarray of str of shape (n_params,)
        The parameters' names.
    level : float
        As given.
    """

    names: np.ndarray
    level: float

    def __new__(cls, lower: Any, upper: Any, names: Any, level: float) -> "CredibleIntervals":
        pair = super().__new__(cls, (np.asarray(lower), np.asarray(upper)))
        pair.names = np.asarray(names, dtype=object)
        pair.level = float(level)
        return pair

    def __getnewargs__(self):  # pickling: the arguments of __new__
        return (self[0], self[1], self.names, self.level)

    @property
    def lower(self) -> np.ndarray:
        """The lower bounds."""
        return self[0]

    @property
    def upper(self) -> np.ndarray:
        """The upper bounds."""
        return self[1]

    def to_frame(self) -> Any:
        """The intervals as a pandas DataFrame: columns ``lower`` and ``upper``, one row
        per parameter, indexed by name.

        Returns
        -------
        frame : pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame({"lower": self[0], "upper": self[1]},
                            index=pd.Index(self.names, name="parameter"))

    def __repr__(self) -> str:
        return (f"CredibleIntervals(level={self.level:g}, "
                + ", ".join(f"{name}=[{low:.4g}, {high:.4g}]"
                            for name, low, high in zip(self.names, *self)) + ")")


def summary_table(estimator, level, feature_names=None):
    """``estimator.summary(level, feature_names)``: a :class:`PosteriorSummary`."""
    posterior = estimator.posterior_
    lower, upper = posterior.credible_interval(level)
    columns = {"mean": posterior.mean, "sd": posterior.std, "lower": lower, "upper": upper}
    if isinstance(posterior, SamplePosterior) and hasattr(estimator, "r_hat_"):
        # per-parameter diagnostics; those of the whole run are in the header
        columns["ess"] = estimator.effective_sample_size_
        columns["r_hat"] = estimator.r_hat_
    names = parameter_names(estimator, feature_names)
    extra = getattr(estimator, "_summary_rows", lambda level: {})(level)
    if extra:  # e.g. the negative binomial overdispersion, after the coefficients
        names = np.append(names, list(extra))
        columns = {key: np.append(value, [row.get(key, np.nan) for row in extra.values()])
                   for key, value in columns.items()}
    return PosteriorSummary([(name,) for name in names], ("parameter",), columns,
                            summary_header(estimator), level)


def _format_column(name, values):
    """A column's numbers as text: effective sample sizes as integers, R-hat to 3
    decimals, others to 4 decimals (or 4 in scientific notation when some are below 1e-4
    or above 1e6 in size)."""
    values = np.asarray(values, dtype=float)
    if name == "ess":
        return [f"{v:.0f}" if np.isfinite(v) else "" for v in values]
    if name == "r_hat":
        return [f"{v:.3f}" if np.isfinite(v) else "" for v in values]
    sizes = np.abs(values[np.isfinite(values) & (values != 0)])
    fixed = sizes.size == 0 or (sizes.min() >= 1e-4 and sizes.max() < 1e6)
    return [("" if np.isnan(v) else f"{v:.4f}" if fixed else f"{v:.4e}") for v in values]


class PosteriorSummary:
    """The posterior table of a fit, printed as fixed-width text like statsmodels' results
    summaries: a header of the fit, then one row per parameter with every column shown.
    Returned by the estimators' ``summary()``.

    Parameters
    ----------
    index : list of tuple
        The rows' names: ``(parameter,)``, or ``(class, parameter)`` for one-vs-rest.
    index_names : tuple of str
        The names of the parts of ``index``.
    columns : dict of array-like
        The table's columns by name, in order.
    header : dict
        The fit at a glance, ``{label: text}`` (the lines above the table).
    level : float
        The probability inside the credible intervals ``lower``, ``upper``.

    Attributes
    ----------
    index, index_names, header, level
        As given.
    columns : dict of ndarray
        The columns as float arrays.
    """

    def __init__(self, index: Sequence[tuple[Any, ...]], index_names: Sequence[str],
                 columns: Mapping[str, Any], header: Mapping[str, str],
                 level: float) -> None:
        self.index = list(index)
        self.index_names = tuple(index_names)
        self.columns = {name: np.asarray(values, dtype=float)
                        for name, values in columns.items()}
        self.header = dict(header)
        self.level = level

    def to_frame(self) -> Any:
        """The table as a pandas DataFrame (needs pandas), indexed by parameter (by class
        and parameter for one-vs-rest); ``attrs`` holds ``level`` and ``header``.

        Returns
        -------
        frame : pandas.DataFrame
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("PosteriorSummary.to_frame needs pandas, which is not "
                              "installed: pip install pandas; str(summary) prints the "
                              "table, and summary.columns holds its arrays.") from exc
        if len(self.index_names) == 1:
            index = pd.Index([key[0] for key in self.index], name=self.index_names[0])
        else:
            index = pd.MultiIndex.from_tuples(self.index, names=self.index_names)
        frame = pd.DataFrame(self.columns, index=index)
        frame.attrs["level"] = self.level
        frame.attrs["header"] = dict(self.header)
        return frame

    def as_text(self) -> str:
        """The header and the table as fixed-width text, every column shown.

        Returns
        -------
        text : str
        """
        labels = [[str(part) for part in key] for key in self.index]
        label_widths = [max([len(name)] + [len(row[i]) for row in labels])
                        for i, name in enumerate(self.index_names)]
        cells = {name: _format_column(name, values) for name, values in self.columns.items()}
        widths = {name: max([len(name)] + [len(cell) for cell in column]) + 2
                  for name, column in cells.items()}

        def line(parts, values):
            left = "  ".join(part.ljust(width) for part, width in zip(parts, label_widths))
            return (left + "".join(value.rjust(widths[name])
                                   for name, value in zip(cells, values))).rstrip()

        rows = [line(self.index_names, list(cells))]
        body = [line(parts, [cells[name][i] for name in cells])
                for i, parts in enumerate(labels)]
        width = max(len(text) for text in rows + body)
        head = format_header(self.header, width) if self.header else ""
        rule_width = max(width, len(head.split("\n", 1)[0]) if head else 0)
        footer = (f"lower, upper: equal-tailed {100 * self.level:g}% credible interval"
                  if {"lower", "upper"} <= set(cells) else "")
        parts = [head, *rows, "-" * rule_width, *body, "=" * rule_width]
        return "\n".join(part for part in parts if part) + ("\n" + footer if footer else "")

    def __str__(self):
        return self.as_text()

    def __repr__(self):
        return self.as_text()


def _family_description(family):
    link = getattr(family.link, "name", None)
    text = family.name.replace("_", " ")
    if text == link:  # a binary family of any link is named after its link
        text = "binary"
    return f"{text} ({link} link)" if link else text


def summary_header(estimator):
    """The fit at a glance, as statsmodels' results summaries give it: ``{label: text}``.

    Model and method, the rows fitted (their total weight when weighted), the number of
    parameters, the method's measure of fit (log evidence, ELBO) or MCMC diagnostics, and
    whether the fit converged."""
    info = getattr(estimator, "_fit_info", {})
    header = {"Estimator": type(estimator).__name__,
              "Model": _family_description(estimator.family_),
              "Method": estimator._fitted_method}
    if estimator._fitted_method == "mcmc":
        header["Method"] += f" ({estimator.sampler})"
    if "rows" in info:
        header["Rows"] = f"{info['rows']:,}"
        if info.get("weighted"):
            header["Total weight"] = f"{info['total_weight']:.6g}"
    extra = getattr(estimator, "_summary_rows", lambda level: {})(0.95)
    header["Parameters"] = str(len(estimator.posterior_.mean) + len(extra))
    if hasattr(estimator, "loglik_"):
        header["Log-likelihood"] = f"{estimator.loglik_:.6g}"
        header["AIC"] = f"{estimator.aic_:.6g}"
        header["BIC"] = f"{estimator.bic_:.6g}"
    if hasattr(estimator, "log_evidence_"):
        header["Log evidence"] = f"{estimator.log_evidence_:.6g}"
    if hasattr(estimator, "elbo_"):
        header["ELBO"] = f"{estimator.elbo_:.6g}"
    if isinstance(estimator.posterior_, SamplePosterior):
        header["Draws"] = f"{estimator.posterior_.n_samples:,}"
        if hasattr(estimator, "r_hat_"):
            header["Max R-hat"] = f"{np.max(estimator.r_hat_):.4f}"
            header["Min ESS"] = f"{np.min(estimator.effective_sample_size_):.0f}"
        if hasattr(estimator, "acceptance_fraction_"):
            header["Acceptance"] = f"{estimator.acceptance_fraction_:.3f}"
        if hasattr(estimator, "n_divergences_"):
            header["Divergences"] = str(estimator.n_divergences_)
        if hasattr(estimator, "sample_stats_"):  # NUTS
            header["Mean tree depth"] = f"{np.mean(estimator.sample_stats_['tree_depth']):.2f}"
    if "converged" in info:
        header["Converged"] = (f"{'yes' if info['converged'] else 'no'} "
                               f"({estimator.n_iter_} iterations)")
    return header


def format_header(header, width=78):
    """The header as two columns of ``label: value`` lines under a rule."""
    items = [f"{label + ':':<17}{value}" for label, value in header.items()]
    half = (len(items) + 1) // 2
    column = max(len(item) for item in items[:half]) + 4 if items else 0
    lines = [(left.ljust(column) + right).rstrip()
             for left, right in zip(items[:half], items[half:] + [""])]
    rule = "=" * max(width, max((len(line) for line in lines), default=0))
    return "\n".join([rule, *lines, rule])

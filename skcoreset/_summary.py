"""The posterior table of the fitted GLM estimators' ``summary()``. pandas is optional and
imported here, lazily."""

import numpy as np

from ._posterior import SamplePosterior

# fitted attributes set by method="mcmc" only: the keys of InferenceResult.extra they copy
MCMC_DIAGNOSTICS = ("acceptance_fraction", "autocorr_time", "effective_sample_size", "r_hat",
                    "n_divergences", "sample_stats", "n_gradients", "n_max_tree_depth")


def parameter_names(estimator):
    """Names of ``theta = [coef..., intercept]``: ``feature_names_in_`` (else ``x0``,
    ``x1``, ...), then ``"intercept"`` when one is fitted."""
    if hasattr(estimator, "feature_names_in_"):
        names = [str(name) for name in estimator.feature_names_in_]
    else:
        names = [f"x{j}" for j in range(estimator.n_features_in_)]
    if estimator.fit_intercept:
        names.append("intercept")
    return np.asarray(names, dtype=object)


def summary_table(estimator, level):
    """The columns of ``estimator.summary(level)``, as a DataFrame or a dict of arrays."""
    posterior = estimator.posterior_
    lower, upper = posterior.credible_interval(level)
    columns = {"mean": posterior.mean, "sd": posterior.std, "lower": lower, "upper": upper}
    if isinstance(posterior, SamplePosterior) and hasattr(estimator, "r_hat_"):
        p = len(posterior.mean)
        columns["ess"] = estimator.effective_sample_size_
        columns["r_hat"] = estimator.r_hat_
        # figures of the whole run, repeated on every row
        columns["acceptance"] = np.full(p, estimator.acceptance_fraction_)
        if hasattr(estimator, "sample_stats_"):  # NUTS
            columns["divergences"] = np.full(p, estimator.n_divergences_)
            columns["tree_depth"] = np.full(p, np.mean(estimator.sample_stats_["tree_depth"]))
    names = parameter_names(estimator)
    extra = getattr(estimator, "_summary_rows", lambda level: {})(level)
    if extra:  # e.g. the negative binomial overdispersion, after the coefficients
        names = np.append(names, list(extra))
        columns = {key: np.append(value, [row.get(key, np.nan) for row in extra.values()])
                   for key, value in columns.items()}
    header = summary_header(estimator)
    try:
        import pandas as pd
    except ImportError:
        return {"parameter": names, **{key: np.asarray(value, dtype=float)
                                       for key, value in columns.items()}, "header": header}
    table = _summary_frame_class()(columns, index=pd.Index(names, name="parameter"))
    table.attrs["level"] = level
    table.attrs["header"] = header
    return table


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
    if hasattr(estimator, "log_evidence_"):
        header["Log evidence"] = f"{estimator.log_evidence_:.6g}"
    if hasattr(estimator, "elbo_"):
        header["ELBO"] = f"{estimator.elbo_:.6g}"
    if isinstance(estimator.posterior_, SamplePosterior):
        header["Draws"] = f"{estimator.posterior_.n_samples:,}"
        if hasattr(estimator, "r_hat_"):
            header["Max R-hat"] = f"{np.max(estimator.r_hat_):.4f}"
            header["Min ESS"] = f"{np.min(estimator.effective_sample_size_):.0f}"
        if hasattr(estimator, "n_divergences_"):
            header["Divergences"] = str(estimator.n_divergences_)
    if "converged" in info:
        header["Converged"] = (f"{'yes' if info['converged'] else 'no'} "
                               f"({estimator.n_iter_} iterations)")
    return header


def format_header(header, width=78):
    """The header as two columns of ``label: value`` lines under a rule."""
    items = [f"{label + ':':<15}{value}" for label, value in header.items()]
    half = (len(items) + 1) // 2
    column = max(len(item) for item in items[:half]) + 4 if items else 0
    lines = [(left.ljust(column) + right).rstrip()
             for left, right in zip(items[:half], items[half:] + [""])]
    rule = "=" * max(width, max((len(line) for line in lines), default=0))
    return "\n".join([rule, *lines, rule])


_SUMMARY_FRAME = None


def _summary_frame_class():
    """A DataFrame that prints the header above the table (created once pandas is imported;
    derived frames, e.g. ``table[["mean"]]``, are plain DataFrames)."""
    global _SUMMARY_FRAME
    if _SUMMARY_FRAME is None:
        import pandas as pd

        class PosteriorSummary(pd.DataFrame):
            @property
            def _constructor(self):
                return pd.DataFrame

            def __repr__(self):
                header = self.attrs.get("header")
                table = super().__repr__()
                return table if not header else format_header(header) + "\n" + table

            def __reduce__(self):  # pickled as the plain table
                return pd.DataFrame(self).__reduce__()

        _SUMMARY_FRAME = PosteriorSummary
    return _SUMMARY_FRAME

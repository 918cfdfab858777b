"""The posterior table of the fitted GLM estimators' ``summary()``. pandas is optional and
imported here, lazily."""

import numpy as np

from ._posterior import SamplePosterior

# fitted attributes set by method="mcmc" only: the keys of InferenceResult.extra they copy
MCMC_DIAGNOSTICS = ("acceptance_fraction", "autocorr_time", "effective_sample_size", "r_hat",
                    "n_divergences", "sample_stats")


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
    try:
        import pandas as pd
    except ImportError:
        return {"parameter": names, **{key: np.asarray(value, dtype=float)
                                       for key, value in columns.items()}}
    table = pd.DataFrame(columns, index=pd.Index(names, name="parameter"))
    table.attrs["level"] = level
    return table

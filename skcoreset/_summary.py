"""Posterior summaries of the fitted GLM estimators: the table of ``summary()`` and the
ArviZ export of ``to_arviz()``. pandas and arviz are optional and imported here, lazily."""

import inspect

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


def _draws_by_chain(estimator, n_draws, random_state):
    """Posterior draws of theta as ``(n_chains, n_draws, p)``: the MCMC draws by walker (the
    latest ``n_draws // n_walkers`` steps of every walker; all draws in one chain when there
    are fewer draws than walkers), else independent draws from ``posterior_`` in one chain."""
    posterior = estimator.posterior_
    if isinstance(posterior, SamplePosterior):
        n_walkers = getattr(estimator, "_mcmc_n_chains", posterior.n_samples)
        # draws are stored step by step (all walkers of a step together), latest last
        steps = posterior.n_samples // n_walkers
        if steps == 0:
            return posterior.samples[None]
        draws = posterior.samples[posterior.n_samples - steps * n_walkers:]
        return draws.reshape(steps, n_walkers, -1).transpose(1, 0, 2)
    return posterior.sample(n_draws, random_state=random_state)[None]


def inference_data(estimator, n_draws, random_state):
    """``estimator.to_arviz``: the posterior group with ``coef`` (dimension ``feature``) and
    ``intercept``; after NUTS also the sample_stats group (``sample_stats_``)."""
    try:
        import arviz as az
    except ImportError as exc:
        raise ImportError(
            f"{type(estimator).__name__}.to_arviz needs ArviZ, which is not installed (it is "
            "an optional dependency of skcoreset): pip install arviz") from exc
    draws = _draws_by_chain(estimator, n_draws, random_state)
    names = parameter_names(estimator)
    n_coef = draws.shape[-1] - int(estimator.fit_intercept)
    groups = {"posterior": {"coef": draws[..., :n_coef]}}
    if estimator.fit_intercept:
        groups["posterior"]["intercept"] = draws[..., -1]
    if hasattr(estimator, "sample_stats_"):  # NUTS: (chain, draw) arrays, ArviZ's names
        groups["sample_stats"] = dict(estimator.sample_stats_)
    coords = {"feature": list(names[:n_coef])}
    dims = {"coef": ["feature"]}
    if "posterior" in inspect.signature(az.from_dict).parameters:  # ArviZ < 1: InferenceData
        return az.from_dict(**groups, coords=coords, dims=dims)
    return az.from_dict(groups, coords=coords, dims=dims)  # a DataTree

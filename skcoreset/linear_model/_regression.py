"""The regressors: a real-valued mean, predicted with its posterior predictive spread.

:class:`_BaseRegression` is what every regressor shares whatever its family (Gaussian,
Gamma, counts): coefficients of shape ``(n_features,)``, :meth:`~_BaseRegression.predict`
with ``return_std``, R^2 scores, posterior predictive draws and ArviZ data. The count
regressions (``_count``) add exposures and offsets on top; a regressor of another family
derives from this class and sets its family, without their semantics.
"""

from typing import Any, Literal, Self

import numpy as np
from sklearn.base import RegressorMixin

from .._warnings import warn
from .._atomic import fit_context
from .._backend import is_dask_collection
from .._dask_predict import predict_lazily, r2
from .._typing import MatrixLike, Prediction, RandomStateLike, VectorLike
from ._base import BaseBayesianGLM


def _std_kind(return_std):
    """The standard deviation ``predict`` returns: None, "predictive" (``True``) or
    "mean"."""
    if isinstance(return_std, str) and return_std in ("predictive", "mean"):
        return return_std
    if isinstance(return_std, (bool, np.bool_)):
        return "predictive" if return_std else None
    raise ValueError(f"return_std must be True, False, 'predictive' or 'mean', got "
                     f"{return_std!r}.")


class _BaseRegression(RegressorMixin, BaseBayesianGLM):
    """The regressors: a real-valued mean ``E[y | x]``, its posterior predictive mean and
    spread; subclasses fix the family."""

    def _set_coef(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None) -> Self:
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets, in the family's range.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    def predict(self, X: MatrixLike,
                return_std: bool | Literal["predictive", "mean"] = False) -> Prediction:
        """Posterior predictive mean, and optionally a standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        return_std : bool, "predictive" or "mean", default=False
            Also return a standard deviation: ``"predictive"`` (or ``True``), that of the
            posterior predictive distribution of y, the family's noise plus the posterior
            uncertainty of the mean; ``"mean"``, the posterior standard deviation of the
            mean itself (statsmodels' ``mean_se`` of ``get_prediction``, to first order
            under a wide prior).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data]``, the mean over the posterior of the linear predictor.
        std : ndarray of shape (n_samples,)
            Only returned with ``return_std``: the standard deviation it names.
        """
        return self._predict_mean(X, return_std)

    def score(self, X: MatrixLike, y: VectorLike,
              sample_weight: VectorLike | None = None) -> float:
        """Coefficient of determination R^2 of :meth:`predict` against y.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Test data.
        y : array-like or dask array of shape (n_samples,)
            Observed targets.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in R^2.

        Returns
        -------
        score : float
            For dask arrays, computed by passes over their blocks where they live.
        """
        return self._r2_score(X, y, sample_weight)

    def sample_y(self, X: MatrixLike, n_draws: int = 1000,
                 random_state: RandomStateLike = None) -> Prediction:
        """Draw from the posterior predictive distribution of y at each row of X.

        Each draw takes parameters from ``posterior_`` (Gaussian draws, or for
        ``method="mcmc"`` draws resampled from the chain), then a target at every row from
        the likelihood, so the draws include both the posterior uncertainty and the noise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows at which to draw targets.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and target draws.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            One row per draw; a lazy dask array for a dask X.
        """
        return self._sample_y(X, n_draws, random_state)

    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None,
                 feature_names: VectorLike | None = None) -> Any:
        """The fit as ArviZ data (see :meth:`BayesianLogisticRegression.to_arviz
        <skcoreset.BayesianLogisticRegression.to_arviz>` for the groups).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups, with ``y``; ``None``: the training rows, when kept.
        y : array-like of shape (n_samples,), default=None
            Their targets.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features, the ``feature`` coordinates of ``coef`` (by default
            those of :meth:`summary`).

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.
        """
        return self._to_arviz(X, y, None, n_draws, n_chains, random_state, feature_names)

    def _r2_score(self, X, y, sample_weight, log_exposure=None):
        if is_dask_collection(X):
            rows = () if log_exposure is None else (("log_exposure", log_exposure),)
            return r2(self, X, y, sample_weight, rows=rows, method="_predict_mean")
        from sklearn.metrics import r2_score

        return r2_score(y, self._predict_mean(X, False, log_exposure),
                        sample_weight=sample_weight)

    def _predict_mean(self, X, return_std=False, log_exposure=None):
        """Predictive mean (and the std ``return_std`` names: the predictive one for
        ``True`` or "predictive", that of the mean for "mean") of targets whose mean is
        ``exp(log_exposure) * mu`` (count models, :meth:`_linear_offset`; None for 1): its
        posterior mean scales by the exposure and its variance by its square, in log
        space with the log link. On a dask X, lazily block by block (``log_exposure`` a
        lazy array of its rows)."""
        kind = _std_kind(return_std)
        if is_dask_collection(X):
            rows = () if log_exposure is None else (("log_exposure", log_exposure),)
            out = predict_lazily(self, "_predict_mean", X, rows=rows,
                                 return_std=kind or False, columns=2 if kind else None)
            return (out[:, 0], out[:, 1]) if kind else out
        mean, mean_var, exponent = self._scaled_predictive_moments(X, log_exposure)
        scaled = bool(exponent.any())
        std = None
        if kind == "mean":
            std = np.sqrt(mean_var)
        elif kind == "predictive":
            # in the units 2**exponent: the variance of rates beyond 1e154 overflows
            std = np.sqrt(self.family_.predictive_variance(mean, mean_var, exponent)
                          if scaled else self.family_.predictive_variance(mean, mean_var))
        if not scaled:
            return mean if kind is None else (mean, std)
        largest = np.maximum(mean, std) if kind else mean
        with np.errstate(over="ignore"):
            beyond = ~np.isfinite(np.ldexp(largest, exponent))
            mean = np.ldexp(mean, exponent)
            std = np.ldexp(std, exponent) if kind else None
        if beyond.any():
            log10 = np.max(np.log10(largest[beyond]) + exponent[beyond] * np.log10(2.0))
            size = f"up to about 1e{log10:.0f}" if np.isfinite(log10) else "far beyond it"
            warn(
                f"{beyond.sum()} of {len(mean)} predicted means or standard deviations are "
                f"beyond float64 ({size}) and are returned as inf. "
                "Predict over the exposure the counts are observed on (exposure= or "
                "offset=), or fit on a scale where the rates are representable.",
                RuntimeWarning)
        return (mean, std) if kind else mean

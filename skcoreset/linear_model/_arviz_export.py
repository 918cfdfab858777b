"""The ArviZ export and PSIS-LOO of a fitted estimator: the posterior by chain, the data
groups of the training rows (kept by the fit) or of rows passed, and leave-one-out
cross-validation computed block of rows by block of rows."""

from numbers import Integral
from typing import Any

from sklearn.utils.validation import check_is_fitted

from .._warnings import warn
from .._arviz import MAX_DRAW_ROWS, chunked_loo, fits_draw_groups, inference_data
from .._inference import effective_sample_size_of_means
from .._numbers import is_number
from .._typing import MatrixLike, RandomStateLike, VectorLike
from ._results import KEPT_VALUES, KeptRows, kept_rows


class ArvizExportMixin:
    """``to_arviz`` and ``loo`` of the estimators (mixed into their shared base)."""

    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None,
                 feature_names: VectorLike | None = None) -> Any:
        """The fit as ArviZ data, for ArviZ's diagnostics, model comparison and plots.

        Needs ArviZ (``pip install arviz``, or the ``arviz`` extra of skcoreset). Groups:

        - ``posterior``: ``coef`` (dimension ``feature``, named as in :meth:`summary`) and
          ``intercept`` (when fitted), by chain. A Gaussian posterior (``method="laplace"``,
          ``"kl_proximal"``, ``"pass_glm"``) gives ``n_chains`` independent chains of
          ``n_draws`` independent draws, so ArviZ's R-hat is defined (and about 1). With
          ``method="mcmc"``, the run's own draws: one chain per NUTS chain, or per emcee
          walker (its latest ``len(posterior_samples_) // n_walkers`` draws; the walkers of
          an ensemble are not independent chains, so R-hat across them checks mixing rather
          than convergence).
        - ``sample_stats`` (``sampler="nuts"``): ``sample_stats_`` (divergences, tree depth,
          acceptance, leapfrog steps, energy, log posterior, step size).
        - ``log_likelihood``, ``posterior_predictive``, ``observed_data``: variable ``y``
          (dimension ``obs_id``) for the rows ``X``, ``y`` (by default the training rows):
          the log-likelihood of each row under each posterior draw (for ``az.loo`` and
          ``az.waic``), one predictive draw of each row per posterior draw (for
          ``az.plot_ppc``), and the targets. Binary targets are exported as 0/1 (1 for
          ``classes_[1]``). A weighted row's log-likelihood is multiplied by its weight
          (what the posterior conditions on; for a coreset's rows, evaluate all rows
          instead: :meth:`skcoreset.pipeline.Pipeline.to_arviz`).

        The fit keeps its training rows up to ``2**24`` values (``rows x (features + 3)``:
        128 MB): private copies up to ``2**20`` values (changing the arrays passed to
        ``fit`` afterwards changes nothing), above that X by reference with a checksum (a
        change in place is refused with an error, never read). Beyond, for a stream
        (``partial_fit``) and for dask arrays (whose rows stay on the cluster), the data
        groups need ``X`` and ``y``, and are left out with a warning; they are also left
        out, with a warning pointing to :meth:`loo`, when the training rows times the draws
        exceed ``5e7`` values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups; with ``y``. ``None``: the training rows, when kept.
        y : array-like of shape (n_samples,), default=None
            Their targets.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``, which
            exports its own draws.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws of a Gaussian posterior and of the predictive draws.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features, the ``feature`` coordinates of ``coef`` (by default
            those of :meth:`summary`).

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.

        Raises
        ------
        ImportError
            When ArviZ is not installed.
        """
        return self._to_arviz(X, y, None, n_draws, n_chains, random_state, feature_names)

    def _to_arviz(self, X, y, n_trials, n_draws, n_chains, random_state, feature_names=None,
                  offset=None):
        self._check_draws(n_draws, n_chains)
        rows = self._arviz_rows(X, y, n_trials, "to_arviz", offset)
        if X is None and rows is not None and not fits_draw_groups(rows, n_draws, n_chains,
                                                                   self):
            warn(
                f"{type(self).__name__}.to_arviz() has no log_likelihood, "
                "posterior_predictive or observed_data group: its "
                f"{rows.X.shape[0]:,} training rows times the draws would exceed "
                f"{MAX_DRAW_ROWS:,} values. Use loo(), which computes PSIS-LOO over them "
                "in blocks, or pass fewer rows, e.g. to_arviz(X_test, y_test).",
                UserWarning)
            rows = None
        return inference_data(self, rows, n_draws, n_chains, random_state, feature_names)

    def _check_draws(self, n_draws, n_chains):
        check_is_fitted(self)
        for name, value in (("n_draws", n_draws), ("n_chains", n_chains)):
            if not is_number(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")

    def loo(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
            n_draws: int = 1000, n_chains: int = 4, reff: float | None = None,
            random_state: RandomStateLike = None) -> Any:
        """PSIS-LOO cross-validation of the fit, over rows of any number.

        The expected log pointwise predictive density of leaving each row out, estimated by
        Pareto-smoothed importance sampling (Vehtari, Gelman and Gabry, 2017) from the
        posterior draws: ArviZ 0.x's ``az.loo(self.to_arviz(...))`` (ArviZ 1.x smooths
        the tail its own way: elpd within about 1e-5 relative, k-hat within about 0.1, its
        ``se`` with ``n - 1``), computed block of rows by block of rows, so that the
        draws-by-rows log-likelihood of all the rows is never held (temporaries of a few
        blocks of ``2**20`` values besides the rows) and ArviZ is not needed. The rows
        are the training rows (kept by the fit, see :meth:`to_arviz`), or those passed.
        A fit on dask arrays keeps a reference to them (not pickled) and evaluates their
        chunks where they live, in tasks: only three values per row (the pointwise elpd,
        lppd and k-hat) reach this process. Costs ``rows x draws`` evaluations of the
        log-likelihood and a sort of each row's draws (1e6 rows and 1,000 draws: about 4
        minutes on one core).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows to evaluate, with ``y``; ``None``: the training rows.
        y : array-like of shape (n_samples,), default=None
            Their targets.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior (as :meth:`to_arviz`); unused for
            ``method="mcmc"``, whose own draws are used.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        reff : float, default=None
            Relative effective sample size of the draws. ``None``: 1 for the independent
            draws of a Gaussian posterior; for MCMC, ArviZ's default (the mean
            effective sample size of the parameters' means over the number of draws).
        random_state : int, RandomState instance or None, default=None
            Seed of the draws of a Gaussian posterior (the same draws as
            :meth:`to_arviz` with the same seed).

        Returns
        -------
        loo : LooResult
            ``elpd_loo``, its standard error ``se``, ``p_loo``, the pointwise ``loo_i``
            and ``pareto_k``, and ``warning`` (a Pareto k above ``good_k``): the fields
            of ArviZ's result.
        """
        return self._loo(X, y, None, n_draws, n_chains, reff, random_state)

    def _loo(self, X, y, n_trials, n_draws, n_chains, reff, random_state, offset=None):
        self._check_draws(n_draws, n_chains)
        rows = self._arviz_rows(X, y, n_trials, "loo", offset)
        if rows is None:
            raise ValueError(
                f"{type(self).__name__}.loo() has no rows to evaluate: the training rows are "
                f"kept up to {KEPT_VALUES:,} values (rows x (features + 3)), and this fit "
                "had more, was streamed, ran on dask arrays with the Poisson model's "
                "exposure, or was unpickled after a fit on dask arrays (the reference to "
                "them is not pickled). Pass the rows, e.g. loo(X, y).")
        return chunked_loo(self, rows, n_draws, n_chains, reff, random_state,
                           effective_sample_size_of_means)

    def _arviz_rows(self, X, y, n_trials, caller, offset=None):
        """:class:`~skcoreset.linear_model._results.KeptRows` of the data groups of
        :meth:`to_arviz` and :meth:`loo`: the training rows, those passed (with their
        ``n_trials`` or validated ``offset``), or None."""
        if X is None and y is None:
            rows = kept_rows(self)
            if caller == "to_arviz" and getattr(rows, "chunked", False):  # dask rows
                warn(
                    f"{type(self).__name__}.to_arviz() has no log_likelihood, "
                    "posterior_predictive or observed_data group: this fit ran on dask "
                    "arrays, whose rows stay on the cluster. Use loo(), which sums over "
                    "their chunks where they live, or pass rows in memory, e.g. "
                    "to_arviz(X_test, y_test).", UserWarning)
                return None
            if rows is None and caller == "to_arviz":
                warn(
                    f"{type(self).__name__}.to_arviz() has no log_likelihood, "
                    "posterior_predictive or observed_data group: the training rows are "
                    f"kept up to {KEPT_VALUES:,} values (rows x (features + 3)), and this "
                    "fit had more, was streamed, or ran on dask arrays with the Poisson "
                    "model's exposure. "
                    "Pass the rows to evaluate, e.g. to_arviz(X_test, y_test).",
                    UserWarning)
            return rows
        if X is None or y is None:
            raise ValueError(f"{caller} needs both X and y for the rows of its "
                             "log_likelihood, posterior_predictive and observed_data groups.")
        X = self._check_predict_input(X)
        return KeptRows(X, *self._arviz_targets(y, n_trials, X.shape[0]), None, offset)

    def _arviz_targets(self, y, n_trials, n_rows):
        """The encoded targets of ``n_rows`` rows passed to :meth:`to_arviz` or
        :meth:`loo`, and their numbers of trials (binomial cells; None here)."""
        y = self._family().encode_target(y, getattr(self, "classes_", None))
        if len(y) != n_rows:
            raise ValueError(f"X has {n_rows} rows but y has {len(y)} entries.")
        return y, None

    def _observed(self, y):
        """Encoded targets as ArviZ sees them (the binary models: 0/1)."""
        return y

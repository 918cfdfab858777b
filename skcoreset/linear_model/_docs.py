"""The fitted attributes every Bayesian GLM documents (its docstring section)."""

COMMON_ATTRS_DOC = """
    posterior_ : GaussianPosterior or SamplePosterior
        Posterior over ``theta = [coef..., intercept]`` (intercept last when fitted), with
        ``mean``, ``cov``, ``sample(n, random_state)``, ``logpdf`` and ``kl`` (a
        ``SamplePosterior`` of the draws for ``method="mcmc"``).

    family_ : Family
        The likelihood family of the fit (:mod:`skcoreset.families`).

    n_iter_ : int
        Number of iterations run by the fitting method.

    log_evidence_ : float
        Estimate of the log marginal likelihood ``log p(y | X)`` (including the weights):
        the Laplace estimate, or for ``method="pass_glm"`` the evidence of the polynomial
        surrogate. Not set by ``method="kl_proximal"``, which gives ``elbo_`` instead.

    elbo_ : float
        Evidence lower bound of the fitted Gaussian ``q`` (``method="kl_proximal"`` only).

    loglik_ : float
        Log-likelihood of the training rows (weighted) at the posterior mean of the
        parameters, ``sum_n w_n log p(y_n | theta_mean)``; counts over an exposure are
        those counts. Under a wide prior the posterior mean is the maximum-likelihood
        estimate and this is statsmodels' ``llf``; it is a plug-in value, not a Bayesian
        predictive score (for that, ``az.loo`` on :meth:`to_arviz`). Not set by
        ``partial_fit``, whose earlier chunks are not kept.

    deviance_ : float
        Twice the log-likelihood of the saturated model (each row's mean at its target)
        minus ``loglik_``: statsmodels' ``deviance``, the sum of the squared deviance
        :meth:`residuals`.

    aic_ : float
        ``-2 loglik_ + 2 k`` with ``k`` the number of fitted parameters (coefficients,
        intercept, and ``alpha`` when estimated): statsmodels' ``aic``, an information
        criterion at the posterior mean rather than a Bayesian one.

    bic_ : float
        ``-2 loglik_ + k log n`` with ``n`` the total sample weight (the number of rows
        when unweighted): statsmodels' ``bic_llf``.

    posterior_samples_ : ndarray of shape (n_draws, n_params)
        Posterior draws of ``[coef..., intercept]`` (``method="mcmc"`` only); ``posterior_``
        is then a ``SamplePosterior`` whose ``mean`` and ``cov`` are their moments.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has feature names that are all strings.

    acceptance_fraction_ : float
        ``method="mcmc"`` only. NUTS: the mean acceptance statistic of the iterations after
        the warm-up (the step size is adapted to make it about 0.8). Ensemble: the mean
        acceptance fraction of the walkers' production steps, healthy between about 0.2
        and 0.8.

    effective_sample_size_ : ndarray of shape (n_params,)
        Effective sample size of each parameter's draws (``method="mcmc"`` only). NUTS: the
        bulk effective sample size over the chains (Vehtari et al., 2021; ArviZ's
        ``ess(method="bulk")``), at least ``n_draws`` unless the run warned. Ensemble:
        ``n_walkers * n_steps / autocorr_time_`` over the production steps, at most the
        number of draws kept. The Monte Carlo standard error of a posterior mean is about
        ``sd / sqrt(effective_sample_size_)``.

    r_hat_ : ndarray of shape (n_params,)
        R-hat of each parameter (``method="mcmc"`` only): about 1 when every half-chain
        samples the same distribution. NUTS: the rank-normalized split-R-hat over the
        chains (Vehtari et al., 2021; ArviZ's ``rhat``), at most 1.01 unless the run warned.
        Ensemble: the classic split-R-hat over the walkers (Gelman et al., 2013); each
        walker is a short chain, so values up to about 1.02 are usual at the default run
        length.

    n_divergences_ : int
        Number of divergent NUTS transitions after the warm-up (``sampler="nuts"`` only);
        any warns, since the draws may then miss part of the posterior.

    n_gradients_ : int
        Gradient evaluations of the NUTS run, warm-up included (``sampler="nuts"`` only):
        its cost, in passes over the rows; at most ``max_gradients``.

    n_max_tree_depth_ : int
        Number of NUTS transitions after the warm-up that reached ``max_tree_depth``
        (``sampler="nuts"`` only); any warns, and a run whose trees keep reaching it spends
        its ``max_gradients`` quickly: the posterior is flat in some direction.

    sample_stats_ : dict of ndarray of shape (n_chains, n_draws_per_chain)
        Per-draw statistics of the NUTS chains (``sampler="nuts"`` only), under ArviZ's
        names (the ``sample_stats`` group of :meth:`to_arviz`): ``lp`` (log posterior, up to
        a constant), ``energy`` (Hamiltonian), ``acceptance_rate``, ``n_steps`` (leapfrog
        steps), ``tree_depth`` (Stan's count of trajectory doublings), ``diverging`` and
        ``step_size``.

    autocorr_time_ : ndarray of shape (n_params,)
        Integrated autocorrelation time of each parameter, in steps of the unthinned
        production chain (``sampler="ensemble"`` only): emcee's estimate, the walkers'
        autocorrelation functions averaged and summed up to Sokal's automatic window.
"""

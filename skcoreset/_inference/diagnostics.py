"""Convergence diagnostics of MCMC chains: autocorrelation time, effective sample size, R-hat.

Every function takes the chain as an array of shape ``(n_steps, n_chains, p)`` -- emcee's
``get_chain()`` layout, one chain per walker -- and returns one value per parameter.
"""

import numpy as np
from emcee.autocorr import integrated_time


def _as_chain(chain):
    chain = np.asarray(chain, dtype=float)
    if chain.ndim == 2:
        chain = chain[:, :, None]
    if chain.ndim != 3 or chain.shape[0] < 1:
        raise ValueError("chain must have shape (n_steps, n_chains, p) or (n_steps, n_chains) "
                         f"with at least one step, got shape {chain.shape}.")
    return chain


def autocorr_time(chain):
    """Integrated autocorrelation time of each parameter, in steps.

    emcee's estimator (Goodman and Weare, 2010; Foreman-Mackey et al., 2013): the
    autocorrelation function of each chain, averaged over the chains, summed up to Sokal's
    automatic window (the first lag ``M >= 5 tau(M)``). Each chain is centred on its own
    mean, so chains that sit at different places are not detected here (see
    :func:`split_r_hat`).

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    tau : ndarray of shape (p,)
        About 1 for independent draws, ``(1 + rho) / (1 - rho)`` for an AR(1) chain with
        lag-one correlation ``rho``.
    """
    # tol=0: always return the estimate; mcmc() warns itself when the chain is short
    return integrated_time(_as_chain(chain), tol=0, quiet=True)


def effective_sample_size(chain):
    """Effective sample size of each parameter's mean: ``n_steps * n_chains / tau``.

    ``tau`` is :func:`autocorr_time`, so the effective sample size is the number of
    independent draws that would estimate the posterior mean as precisely as the chain
    does: about ``n_steps * n_chains`` for independent draws, ``n (1 - rho) / (1 + rho)``
    for AR(1) chains with lag-one correlation ``rho``.

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    ess : ndarray of shape (p,)
    """
    chain = _as_chain(chain)
    return chain.shape[0] * chain.shape[1] / autocorr_time(chain)


def split_r_hat(chain):
    """Split-R-hat of each parameter (Gelman et al., 2013, section 11.4).

    Each chain is cut into halves, and R-hat compares the variance between the ``2 m``
    half-chains' means with the variance within them:
    ``sqrt(((n - 1) / n W + B / n) / W)``, with ``n`` the half-chain length, ``W`` the mean
    within-half-chain variance and ``B / n`` the variance of the half-chain means. It is
    close to 1 when every half-chain samples the same distribution and exceeds it when
    chains sit in different places or drift; its excess over 1 also grows as the
    half-chains get shorter (fewer effective draws each). The walkers of an ensemble
    sampler are not independent chains, so for emcee's walkers it is a check of
    stationarity and mixing, not a formal test.

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    r_hat : ndarray of shape (p,)
        NaN for a parameter that does not vary within any half-chain, and for chains of
        fewer than 4 steps.
    """
    chain = _as_chain(chain)
    half = chain.shape[0] // 2
    if half < 2:
        return np.full(chain.shape[2], np.nan)
    # drop the middle step of an odd-length chain, as Gelman et al. do
    halves = np.concatenate([chain[:half], chain[-half:]], axis=1)
    within = halves.var(axis=0, ddof=1).mean(axis=0)
    between_over_n = halves.mean(axis=0).var(axis=0, ddof=1)
    pooled = (half - 1) / half * within + between_over_n
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(np.where(within > 0, pooled / within, np.nan))


def chain_diagnostics(chain, n_draws):
    """The diagnostics that :func:`~skcoreset._inference.mcmc.mcmc` reports, from the
    unthinned production chain.

    Parameters
    ----------
    chain : ndarray of shape (n_steps, n_walkers, p)
        The production steps of every walker, before thinning.
    n_draws : int
        The number of draws kept from it (after thinning).

    Returns
    -------
    dict
        ``autocorr_time`` (steps), ``effective_sample_size`` and ``r_hat``, each of shape
        (p,). The effective sample size is that of the kept draws: the chain's
        ``n_steps * n_walkers / tau``, capped at ``n_draws`` (thinning a chain to draws
        further apart than ``tau`` leaves them nearly independent, and never more
        informative than that many independent draws).
    """
    tau = autocorr_time(chain)
    ess = np.minimum(float(n_draws), chain.shape[0] * chain.shape[1] / tau)
    return {"autocorr_time": tau, "effective_sample_size": ess, "r_hat": split_r_hat(chain)}

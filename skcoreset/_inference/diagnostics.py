"""Convergence diagnostics of MCMC chains: autocorrelation time, effective sample size, R-hat.

Every function takes the chain as an array of shape ``(n_steps, n_chains, p)`` -- emcee's
``get_chain()`` layout, one chain per walker -- and returns one value per parameter.

Two families of estimates live here: emcee's integrated autocorrelation time (Sokal's
window) with the classic split-R-hat, which the ensemble sampler reports; and the
rank-normalized split-R-hat and bulk effective sample size of Vehtari, Gelman, Simpson,
Carpenter and Buerkner (2021), the diagnostics of Stan and ArviZ, which the NUTS sampler
reports and stops on.
"""

import numpy as np
from emcee.autocorr import integrated_time
from scipy import fft
from scipy.special import ndtri
from scipy.stats import rankdata

from ..exceptions import MCMCDiagnosticWarning  # noqa: F401 (its former home)


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
    return _ess_of_steps(chain, autocorr_time(chain))


def _ess_of_steps(chain, tau):
    """``n_steps * n_walkers / tau``: the draws of every chain, one per ``tau`` steps."""
    return chain.shape[0] * chain.shape[1] / tau


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
    ess = np.minimum(float(n_draws), _ess_of_steps(chain, tau))
    return {"autocorr_time": tau, "effective_sample_size": ess, "r_hat": split_r_hat(chain)}


# --- Vehtari et al. (2021): rank-normalized split-R-hat and bulk effective sample size --------

def split_chains(chain):
    """Each chain cut into its first and second halves: ``(n_steps // 2, 2 n_chains, p)``.

    The middle step of an odd-length chain is dropped. Splitting makes R-hat and the
    effective sample size see a chain that drifts, whose halves disagree.
    """
    chain = _as_chain(chain)
    half = chain.shape[0] // 2
    return np.concatenate([chain[:half], chain[chain.shape[0] - half:]], axis=1)


def rank_normalize(chain):
    """Normal scores of the pooled ranks: ``Phi^-1((r - 3/8) / (S + 1/4))`` per parameter.

    ``r`` are the ranks of each parameter's draws over all steps and chains (ties averaged)
    and ``S`` their number (Blom's offsets, as in Vehtari et al., 2021, eq. 14). The scores
    have the same ranks as the draws and a normal marginal, so R-hat and the effective
    sample size computed from them exist for heavy-tailed posteriors and do not depend on
    monotone transformations of the parameters.
    """
    chain = _as_chain(chain)
    n_steps, n_chains, p = chain.shape
    ranks = rankdata(chain.reshape(-1, p), method="average", axis=0)
    return ndtri((ranks - 0.375) / (ranks.shape[0] + 0.25)).reshape(chain.shape)


def _r_hat(chain):
    """R-hat of chains already split: ``sqrt(((n - 1) / n W + B / n) / W)``; NaN where a
    parameter does not vary within the chains or they have fewer than two steps."""
    n = chain.shape[0]
    if n < 2:
        return np.full(chain.shape[2], np.nan)
    within = chain.var(axis=0, ddof=1).mean(axis=0)
    between_over_n = chain.mean(axis=0).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(np.where(within > 0, ((n - 1) / n * within + between_over_n) / within,
                                np.nan))


def _folded(halves):
    """Distances of split chains' draws to each parameter's pooled median."""
    return np.abs(halves - np.median(halves.reshape(-1, halves.shape[2]), axis=0))


def rank_r_hat(chain):
    """Rank-normalized split-R-hat of each parameter (Vehtari et al., 2021, section 4.1).

    The larger of the split-R-hat of the rank-normalized draws (differences in location)
    and of the rank-normalized distances to the pooled median (differences in scale).
    Values above 1.01 mean the chains have not mixed, or are too short to tell.

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    r_hat : ndarray of shape (p,)
        NaN for a constant parameter and for chains of fewer than 4 steps.
    """
    halves = split_chains(chain)
    if halves.shape[0] < 2:
        return np.full(halves.shape[2], np.nan)
    with np.errstate(invalid="ignore"):  # a constant parameter: both are NaN
        return np.fmax(_r_hat(rank_normalize(halves)),
                       _r_hat(rank_normalize(_folded(halves))))


def _autocovariance(chain):
    """``(1 / n) sum_i (x_i - mean)(x_{i+t} - mean)`` of every chain and parameter at every
    lag ``t < n``, by FFT: shape ``(n, n_chains, p)``."""
    n = chain.shape[0]
    centred = chain - chain.mean(axis=0)
    size = fft.next_fast_len(2 * n)
    spectrum = fft.rfft(centred, n=size, axis=0)
    return fft.irfft(spectrum * np.conj(spectrum), n=size, axis=0)[:n] / n


def _effective_sample_size(chain):
    """Effective sample size of chains already split (Vehtari et al., 2021, section 3.2).

    The autocorrelations ``rho_t = 1 - (W - mean_m acov_{t,m}) / var+`` combine the chains'
    autocovariances with the between-chain variance (``var+``), so chains that disagree
    lower it. Their sum is truncated by Geyer's initial monotone sequence: the sums of
    consecutive pairs ``P_k = rho_2k + rho_2k+1`` are added up to the first one that is not
    positive and made non-increasing; ``tau = -1 + 2 sum_k P_k`` (plus the first dropped
    even lag when positive), at least ``1 / log10(S)`` (at most ``S log10 S`` effective
    draws from ``S`` draws).
    """
    n, n_chains, p = chain.shape
    if n < 4:
        return np.full(p, np.nan)
    acov = _autocovariance(chain)
    within = acov[0].mean(axis=0) * n / (n - 1)
    var_plus = within * (n - 1) / n
    if n_chains > 1:
        var_plus = var_plus + chain.mean(axis=0).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (within - acov.mean(axis=1)) / var_plus  # (n, p)
    rho[0] = 1.0  # by definition (the formula's lag 0 is var+ -> W (n - 1) / n short of it)
    n_pairs = (n - 1) // 2  # pairs 0 .. n_pairs - 1 are within the chain (n_pairs >= 1)
    pairs = rho[0:2 * n_pairs:2] + rho[1:2 * n_pairs:2]  # (n_pairs, p)
    # the first pair k >= 1 that is not positive ends the sum (the last pair otherwise)
    stops = pairs[1:] <= 0
    last = n_pairs - 1
    if n_pairs > 1:
        last = np.where(stops.any(axis=0), stops.argmax(axis=0) + 1, last)
    monotone = np.minimum.accumulate(pairs, axis=0)
    kept = np.arange(n_pairs)[:, None] < last
    columns = np.arange(p)
    even = rho[2 * last, columns]
    tail = np.where((even > 0) | (pairs[last, columns] >= 0), even, 0.0)
    tau = -1.0 + 2.0 * np.sum(np.where(kept, monotone, 0.0), axis=0) + tail
    total = n * n_chains
    tau = np.maximum(tau, 1.0 / np.log10(total))
    with np.errstate(invalid="ignore"):
        return np.where(within > 0, total / tau, np.nan)


def bulk_effective_sample_size(chain):
    """Bulk effective sample size of each parameter (Vehtari et al., 2021, section 4.2).

    The effective sample size of the rank-normalized split chains: how many independent
    draws would locate the centre of the posterior as precisely as these do. It counts
    every chain, and falls when chains disagree (through ``var+``) or drift (through the
    split), so a run is long enough when its smallest value reaches the number of draws
    the user wants; Stan and ArviZ report the same estimate.

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    ess : ndarray of shape (p,)
        NaN for a constant parameter and for chains of fewer than 8 steps.
    """
    return _effective_sample_size(rank_normalize(split_chains(chain)))


def folded_effective_sample_size(chain):
    """Effective sample size of the rank-normalized distances to the median (Vehtari et al.,
    2021, section 4.1): how precisely the chains locate each parameter's spread, the
    quantity the folded half of :func:`rank_r_hat` compares.

    NUTS's draws are often anticorrelated in location (a bulk ESS above the number of
    draws) but positively correlated in spread, so this is the smaller of the two and sets
    the Monte Carlo noise of R-hat.

    Parameters
    ----------
    chain : array-like of shape (n_steps, n_chains, p) or (n_steps, n_chains)

    Returns
    -------
    ess : ndarray of shape (p,)
    """
    return _effective_sample_size(rank_normalize(_folded(split_chains(chain))))


def effective_sample_size_of_means(chain):
    """Effective sample size of each parameter's mean from the split chains, without rank
    normalisation: ArviZ's ``ess(method="mean")``, from which ``az.loo`` takes its relative
    effective sample size."""
    return _effective_sample_size(split_chains(chain))

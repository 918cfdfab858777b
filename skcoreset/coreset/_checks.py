"""What a fitted coreset checks about itself and says: whether rows are its training data,
both classes kept, weight not lost, its distance to the full posterior, a coreset that
keeps every row, the uniform fallback when a constructor selects none, and merge-reduce
blocks that come in order of their outcome."""

import numpy as np
from scipy import sparse

from .._warnings import warn
from .._backend import float_rows, take_rows, uniform_subset
from .._sklearn_compat import _num_samples
from ..exceptions import CoresetAccuracyWarning


def is_training_data(coreset, X):
    """Whether ``X`` is the data the fitted ``coreset`` was built from.

    A cheap recognition, for the metrics that compare a coreset with its data: the same
    number of rows, and the coreset's rows in place at ``sample_indices_``.
    """
    if _num_samples(X) != coreset._n_samples_fit:
        return False
    rows, stored = float_rows(take_rows(X, coreset.sample_indices_)), coreset._coreset_rows
    if rows is stored:  # the whole training data, kept without a copy
        return True
    if rows.shape != stored.shape:
        return False
    if sparse.issparse(rows) or sparse.issparse(stored):
        return sparse.issparse(rows) and sparse.issparse(stored) and (rows != stored).nnz == 0
    return np.array_equal(rows, stored)


def check_both_classes(data, part, fix):
    """A binary model's coreset of rows with both classes (±1 encoded y, positive weight) must
    hold both, or no model can be fitted on it; ``fix`` tells the user what to change.
    (One-class input, such as a block of a stream, is left alone.)"""
    if len(np.unique(part.y)) < 2 and data.has_both_classes():
        raise ValueError(
            f"The coreset holds rows of only one class, so no binary model can be fitted "
            f"on it; {fix}")


# A coreset keeping less than this fraction of the data's total weight gets a warning.
_MIN_WEIGHT_FRACTION = 0.5


def warn_if_weight_lost(coreset, kept, total):
    """Warn when a coreset keeps less than half of the data's total weight ``total``.

    The weights of most constructors are rescaled to fit the log-likelihood (Hilbert
    coresets' optimal scaling, sparse VI, quasi-Newton); a total far below the data's means
    the coreset's log-likelihood is a poor stand-in for the data's (on the papers' data,
    GIGA coresets with a fourth of the weight are tens of nats off).
    """
    if not total > 0 or kept >= _MIN_WEIGHT_FRACTION * total:
        return
    error = getattr(coreset, "error_", None)
    error = "" if error is None else f" (relative error error_={error:.2f})"
    warn(
        f"{type(coreset).__name__}'s coreset weights sum to {kept / total:.2%} of the data's "
        f"total weight ({kept:.4g} of {total:.4g}){error}: its log-likelihood is a poor "
        "stand-in for the data's, and a posterior fitted on it is likely too wide and off "
        "centre. Increase M, or use QuasiNewtonCoreset, whose weights fit the posterior "
        "directly. A far too small total also comes from y that does not fit the model "
        "(scaled or overdispersed counts under model='poisson': fit the raw counts, or use "
        "model='negative_binomial') and from sample weights so small that the data hardly "
        "inform the parameters. Check the result with skcoreset.metrics.coreset_quality.",
        UserWarning)


# A coreset further than this from the posterior it stands in for gets a warning (nats).
MAX_KL = 1.0


def warn_if_far(coreset, kl, mean_error=None):
    """Warn (:class:`~skcoreset.exceptions.CoresetAccuracyWarning`) when ``kl``, the
    coreset's estimated distance to the full data's posterior in nats, exceeds
    :data:`MAX_KL`; ``mean_error`` is the largest posterior-mean error in sds, when known.
    The constructor's ``_far_advice()`` says what to change."""
    if not kl > MAX_KL:
        return
    means = ("" if mean_error is None else
             f", with posterior means up to {mean_error:.2g} standard deviations off")
    advice = coreset._far_advice()
    warn(
        f"{type(coreset).__name__}: the coreset posterior is an estimated {kl:.3g} nats "
        f"from the full data's (KL between their Laplace approximations under the "
        f"{coreset.model_} model, kl_estimate_){means}; a posterior fitted on it stands in "
        f"poorly for the full data's. {advice}.", CoresetAccuracyWarning)


def warn_if_all_rows(coreset, data):
    """Warn when the budget ``M`` is at least the number of rows available (rows of positive
    weight), or the coreset holds all of them: it then saves nothing over the data.

    A constructor that chose every row on purpose sets ``_all_rows_reason`` to the two
    sentences of the warning, what happened and what to do, which replace the generic ones
    (one warning per fit).
    """
    n_available = (data.n if data.chunked
                   else int(np.count_nonzero(data.sample_weight > 0)))
    budget = coreset._budget()
    size = len(coreset.sample_indices_)
    if n_available <= 1 or (size < n_available
                            and (budget is None or budget < n_available)):
        return
    if coreset._all_rows_reason is not None:
        what, advice = coreset._all_rows_reason
        warn(f"{type(coreset).__name__}: {what}. {advice}", UserWarning)
        return
    if budget is not None and budget >= n_available:
        what = (f"M={budget} is at least the {n_available} rows of positive weight in the "
                f"data, so the budget does not limit the coreset (it has {size} rows) and "
                "a coreset of M rows would save nothing over fitting on all rows")
    else:
        what = (f"the coreset keeps all {n_available} rows of positive weight in the data, "
                "so it saves nothing over fitting on all rows")
    warn(
        f"{type(coreset).__name__}: {what}. Choose M below {n_available}, or fit the "
        "estimator on the data directly.", UserWarning)


def uniform_fallback(coreset, why, sample_weight, rng):
    """A uniform coreset of ``coreset.M`` rows, with a warning saying ``why`` the
    constructor selected no row (a coreset is never empty)."""
    warn(
        f"{type(coreset).__name__}: {why} Returning a uniform coreset of the same budget "
        "instead.", UserWarning)
    return uniform_subset(coreset.M, sample_weight, rng)


# Rows whose blocks hold more than this share of the outcome's variance between them (and
# ten times what blocks of rows in random order hold, (B - 1) / (N - 1)) are told to shuffle.
_ORDERED_SHARE = 0.5


def block_outcomes(y, sample_weight):
    """``(rows, sum y, sum y^2)`` of a block's rows of positive weight."""
    y = np.asarray(y, dtype=float)[sample_weight > 0]
    return (len(y), float(y.sum()), float(y @ y))


def _ordered_outcomes(outcome_sums):
    """The share of the variance of the outcomes that lies between the blocks, when it is
    far above that of rows in random order (None otherwise): the rows came sorted or
    grouped by their outcome (all y = 0, then all y = 1).

    Merge-reduce with a base constructor that fits the log-likelihood then compresses
    poorly: a block of one outcome does not locate the posterior (a logistic block of only
    y = 0 has no finite mode), so each block's coreset fits a log-likelihood unlike that of
    all rows, and merges keep its error (20,000 logistic rows in 10 blocks: sorted,
    QuasiNewtonCoreset's KL to the all-rows posterior is 0.7 nats, shuffled 0.00006)."""
    sums = np.array([block for block in outcome_sums if block[0] > 0]).reshape(-1, 3)
    n_blocks, n = len(sums), sums[:, 0].sum()
    if n_blocks < 2 or n <= n_blocks:
        return None
    mean = sums[:, 1].sum() / n
    total = sums[:, 2].sum() - n * mean**2
    if not total > 1e-12 * sums[:, 2].sum():
        return None
    share = float((sums[:, 1]**2 / sums[:, 0]).sum() - n * mean**2) / total
    random_order = (n_blocks - 1) / (n - 1)
    return share if share > max(_ORDERED_SHARE, 10 * random_order) else None


def warn_if_ordered(name, outcome_sums, where, advice):
    """Warn when the blocks of a merge-reduce tree came in order of their outcome.

    ``outcome_sums`` holds :func:`block_outcomes` of every block; ``where`` names the
    blocks (e.g. "its 10 blocks") and ``advice`` says how to shuffle the rows. Returns
    whether it warned.
    """
    share = _ordered_outcomes(outcome_sums)
    if share is None:
        return False
    n_blocks = sum(block[0] > 0 for block in outcome_sums)
    n = sum(block[0] for block in outcome_sums)
    warn(f"{name}: {share:.0%} of the variance of y lies between {where} (rows in random "
         f"order: about {100 * (n_blocks - 1) / max(n - 1, 1):.2g}%): the rows come sorted "
         "or grouped by their outcome, so each block's coreset fits a log-likelihood unlike "
         "that of all the rows, and the merged coreset can stand in for them far less "
         f"well. {advice}",
         UserWarning)
    return True

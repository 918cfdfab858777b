"""Merge-reduce coresets for streams and parallel construction (paper 002, §3.4).

Two observations make any coreset construction streaming and parallel: the union of coresets
of disjoint blocks is a coreset of the union of the blocks, and a coreset of a coreset is a
coreset of the original data (with the errors compounding as ``(1 + eps)(1 + eps') - 1``).
Coresets of consecutive blocks are therefore merged pairwise in a binary tree, each union
compressed again by the base constructor, so only ``O(log B)`` block coresets of ``B`` blocks
are alive at once. The same tree runs in memory (:class:`StreamingCoreset`, leaves optionally
built in parallel with joblib) and on a dask cluster (:mod:`._dask`).
"""

import copy
from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._inference._common import LogPosterior
from .._inference.laplace import initial_theta, laplace, newton_map
from .._newton import warn_not_converged
from .._posterior import GaussianPosterior
from .._sklearn_compat import HasMethods, Interval, _fit_context
from .._validation import check_sample_weight
from ._base import COMMON_ATTRS_DOC, BaseCoreset, _float_dtypes, resolve_model
from .._docstrings import fill_doc
from ._hilbert import project_loglik, relative_weights
from ._sensitivity import row_chunks
from ._uniform import UniformCoreset


# --------------------------------------------------------------------------------------------
# Weighted parts of the data and the merge-reduce tree
# --------------------------------------------------------------------------------------------
class Part(NamedTuple):
    """A weighted coreset of some rows: global row numbers, weights, rows and encoded targets.

    ``target`` is, for Hilbert constructors, the exact projected log-likelihood sum of all
    the rows the part stands in for (additive over blocks, so every compression approximates
    the data itself rather than the previous coreset and errors do not compound); ``error``
    the relative error ``||target - sum_n w_n L_n|| / ||target||`` of the part in the
    projected space (Hilbert constructors only, else ``None``).
    """

    indices: np.ndarray
    weights: np.ndarray
    X: np.ndarray
    y: np.ndarray
    target: np.ndarray = None
    error: float = None

    @property
    def size(self):
        """Number of rows (not ``len``: a part must stay a plain tuple of its six fields
        for dask's ``sizeof``)."""
        return len(self.indices)

    def take(self, rows, weights, error=None):
        """The sub-part of the given local rows, with new weights, for the same data."""
        return Part(self.indices[rows], weights, self.X[rows], self.y[rows], self.target,
                    error)

    def union(self, other):
        """Paper 002, §3.4 observation (1): the union of coresets of disjoint blocks."""
        target = None if self.target is None else self.target + other.target
        return Part(*(np.concatenate([a, b]) for a, b in zip(self[:4], other[:4])), target)


def projected_sum(X, y, sample_weight, family, thetas, fit_intercept):
    """Sum of the rows' projected log-likelihood vectors (paper 001, eq. 39), in chunks."""
    total = np.zeros(len(thetas))
    for rows in row_chunks(X.shape[0], len(thetas)):
        total += project_loglik(X[rows], y[rows], sample_weight[rows], family, thetas,
                                fit_intercept).sum(axis=0)
    return total


def block_rng(seed, *key):
    """The random state of one node of the tree, fixed by the root seed and the node's key,
    so the result depends neither on the order nor on the place tasks run in."""
    return np.random.RandomState([seed, *key])


@dataclass
class BlockContext:
    """What every leaf and merge task needs: the base constructor and the shared likelihood.

    Parameters
    ----------
    builder : BaseCoreset
        A clone of the base constructor with ``model_`` set (its ``_build`` is called).
    family : Family
        Likelihood family of the encoded targets.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision.
    seed : int
        Root seed; node ``key`` draws from ``block_rng(seed, *key)``.
    thetas : ndarray of shape (J, p) or None
        Shared projection draws for Hilbert constructors (``None`` for the others).
    """

    builder: BaseCoreset
    family: object
    prior_prec: np.ndarray
    seed: int
    thetas: np.ndarray = None

    def compress(self, part, key):
        """Coreset of a weighted part by the base constructor (observation (2)).

        A part with at most M rows of positive weight is already as small as the budget:
        compressing it could only add error, so it is returned as it is.
        """
        keep = np.flatnonzero(part.weights > 0)
        if len(keep) <= self.builder.M:
            return part.take(keep, part.weights[keep], self._error(part))
        X, y, w = part.X[keep], part.y[keep], part.weights[keep]
        builder = copy.copy(self.builder)  # _build sets attributes: one copy per task/thread
        if self.thetas is not None:  # Hilbert: every block projected under the same pi-hat
            rows, weights = builder._build_projected(X, y, w, self.family, self.thetas,
                                                     part.target, block_rng(self.seed, *key))
        else:
            rows, weights = builder._build(X, y, w, self.family, self.prior_prec,
                                           block_rng(self.seed, *key))
        positive = weights > 0
        return part.take(keep[rows[positive]], weights[positive],
                         getattr(builder, "error_", None))

    def _error(self, part):
        """Relative error of a Hilbert part against its exact target, else ``None``."""
        if self.thetas is None:
            return None
        vectors = project_loglik(part.X, part.y, part.weights, self.family, self.thetas,
                                 self.builder.fit_intercept)
        # relative to the target's largest entry, so that tiny weights do not underflow
        top = np.max(np.abs(part.target))
        if not top > 0:
            return 0.0
        residual = np.linalg.norm((part.target - vectors.sum(axis=0)) / top)
        return residual / np.linalg.norm(part.target / top)

    def leaf(self, X, y, sample_weight, offset, block):
        """Coreset of one block of rows ``offset, offset + 1, ...``."""
        X, w = np.asarray(X, dtype=float), np.asarray(sample_weight, dtype=float)
        target = None
        if self.thetas is not None:
            target = projected_sum(X, y, w, self.family, self.thetas,
                                   self.builder.fit_intercept)
        whole = Part(np.arange(offset, offset + X.shape[0]), w, X, np.asarray(y), target)
        return self.compress(whole, (0, block))

    def merge(self, left, right, first, last):
        """Union of two parts covering blocks ``first..last``, compressed again."""
        return self.compress(left.union(right), (1, first, last))


def _leaf_task(context, X, y, sample_weight, offset, block):
    return context.leaf(X, y, sample_weight, offset, block)


class MergeTree:
    """Binary-counter merge-reduce tree over consecutive blocks (paper 002, §3.4).

    ``levels[k]`` holds ``(first, last, part)`` covering ``2**k`` blocks or ``None``: pushing a
    block merges equal levels like a carry in binary addition, so ``B`` blocks leave at most
    ``log2(B) + 1`` parts alive. ``merge(left, right, first, last)`` may return a value now
    (in memory) or a ``dask.delayed`` object (on a cluster): the tree is the same.
    """

    def __init__(self, merge):
        self.merge = merge
        self.levels = []

    def _combine(self, left, right):
        return (left[0], right[1], self.merge(left[2], right[2], left[0], right[1]))

    def push(self, block, part):
        """Add the coreset of block ``block`` (blocks arrive in order)."""
        node, k = (block, block, part), 0
        while k < len(self.levels) and self.levels[k] is not None:
            node = self._combine(self.levels[k], node)
            self.levels[k] = None
            k += 1
        if k == len(self.levels):
            self.levels.append(None)
        self.levels[k] = node
        return node[2]

    def root(self):
        """Fold the live parts, smallest first, into one coreset (the tree is unchanged)."""
        acc = None
        for node in self.levels:
            if node is not None:
                acc = node if acc is None else self._combine(node, acc)
        return acc[2]

    def n_alive(self):
        return sum(node is not None for node in self.levels)


# --------------------------------------------------------------------------------------------
# The shared weighting distribution of Hilbert coresets: Laplace computed chunk by chunk
# --------------------------------------------------------------------------------------------
def loglik_sums(X, y, sample_weight, family, theta, fit_intercept):
    """Weighted log-likelihood, its gradient and minus its Hessian summed over the rows.

    Runs over row chunks, so ``X`` (an ndarray, a memmap or one dask chunk) is never copied
    whole.

    Returns
    -------
    sums : tuple of (float, ndarray of shape (p,), ndarray of shape (p, p))
    """
    zero_prior = np.zeros(len(theta))
    total = None
    for rows in row_chunks(X.shape[0], X.shape[1] + 1):
        log_post = LogPosterior(np.asarray(X[rows], dtype=float), y[rows], family,
                                sample_weight[rows], zero_prior, fit_intercept)
        eta = log_post.eta(theta)
        sums = (log_post.loglik(theta, eta), log_post.grad(theta, eta),
                log_post.neg_hessian(eta))
        total = sums if total is None else tuple(a + b for a, b in zip(total, sums))
    return total


class _SummedLogPosterior:
    """The interface :func:`newton_map` needs, with the sums over rows delegated.

    ``eta(theta)`` returns the sums at ``theta`` (one pass over the data) in place of the
    ``n`` linear predictors, which are never held.
    """

    def __init__(self, row_sums, prior_prec, total_weight):
        self.row_sums = row_sums
        self.prior_prec = prior_prec
        # newton_map reads the total weight (its Hessian-reuse scale) from sample_weight
        self.sample_weight = np.array([total_weight])

    def eta(self, theta):
        return self.row_sums(theta)

    def value(self, theta, sums):
        return sums[0] - 0.5 * np.sum(self.prior_prec * theta**2)

    def grad(self, theta, sums):
        return sums[1] - self.prior_prec * theta

    def neg_hessian(self, sums):
        precision = sums[2].copy()
        precision[np.diag_indices_from(precision)] += self.prior_prec
        return precision


def summed_laplace(row_sums, weighted_target, total_weight, family, prior_prec, fit_intercept):
    """Laplace posterior of all the data from ``row_sums(theta)`` (see :func:`loglik_sums`).

    The Newton iterations of :func:`skcoreset._inference.laplace.laplace` (same mode to the
    same tolerance, precision at the mode), with every sum over rows computed by
    ``row_sums``: in memory chunk by chunk, or by a tree reduction on a dask cluster (one
    pass over the data per Newton trial).

    Parameters
    ----------
    row_sums : callable
        ``theta -> (loglik, grad, neg_hessian)`` of the weighted data.
    weighted_target : float
        ``sum_n w_n y_n`` of the encoded targets (starts the intercept at their mean).
    total_weight : float
        ``sum_n w_n``.
    family : Family
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool

    Returns
    -------
    GaussianPosterior
    """
    theta0 = initial_theta(np.array([weighted_target / total_weight]), family, np.ones(1),
                           len(prior_prec), fit_intercept)
    theta, _, precision, n_iter, converged = newton_map(
        _SummedLogPosterior(row_sums, prior_prec, total_weight), theta0)
    if not converged:
        warn_not_converged("Newton's method for the Laplace weighting distribution", n_iter)
    return GaussianPosterior(theta, precision=precision)


def draw_shared_projection(builder, n_samples, family, prior_prec, rng, *, full_laplace,
                           subsample):
    """Draw a Hilbert constructor's J projection parameters once for all blocks.

    Every block is then projected under the same weighting distribution pi-hat, so the block
    coresets and their merges approximate the same vector (paper 001, eq. 39). The
    distribution follows ``builder.weighting``: ``"laplace"`` is the Laplace posterior of all
    the data, computed without holding it (``full_laplace()``); ``"laplace-subsample"`` the
    Laplace posterior of a uniform subsample of ``n_subsample`` (default ``sqrt(N)``) rows,
    ``subsample(size) -> (X, y, w)``; ``"prior"`` the prior. As in memory, the Laplace fits
    see the sample weights divided by their mean (``full_laplace`` must do so itself). Sets
    ``builder.weighting_posterior_`` and ``builder.projection_dim_``.

    Returns
    -------
    thetas : ndarray of shape (projection_dim, p)
    """
    if builder.weighting == "laplace":
        posterior = full_laplace()
    elif builder.weighting == "laplace-subsample":
        X, y, w = subsample(max(builder.n_subsample or int(np.sqrt(n_samples)), 1), rng)
        posterior = laplace(X, y, family, sample_weight=relative_weights(w),
                            prior_prec=prior_prec,
                            fit_intercept=builder.fit_intercept).posterior
    else:
        posterior = GaussianPosterior(np.zeros(len(prior_prec)), np.diag(1.0 / prior_prec))
    builder.weighting_posterior_ = posterior
    # blocks are bounded, so "auto" needs no memory cap here
    builder.projection_dim_ = builder._resolve_projection_dim()
    return posterior.sample(builder.projection_dim_, random_state=rng)


def uses_shared_projection(builder):
    """Whether the constructor projects on draws of a weighting distribution (Hilbert)."""
    return hasattr(builder, "_draw_projection")


def block_builder(base, model):
    """A quiet clone of the base constructor ready for ``_build`` on encoded data."""
    builder = clone(base)
    if "verbose" in builder.get_params():
        builder.set_params(verbose=0)
    builder.model_ = model
    return builder


def make_context(base, model, n_samples, family, prior_prec, rng, *, full_laplace, subsample):
    """The :class:`BlockContext` of a new tree: root seed, builder and shared projection.

    ``full_laplace()`` and ``subsample(size, rng)`` give access to the data for the weighting
    distribution of Hilbert constructors (see :func:`draw_shared_projection`); they are not
    called for the others.
    """
    seed = rng.randint(np.iinfo(np.int32).max)
    builder = block_builder(base, model)
    thetas = None
    if uses_shared_projection(builder):
        thetas = draw_shared_projection(builder, n_samples, family, prior_prec,
                                        block_rng(seed, 2), full_laplace=full_laplace,
                                        subsample=subsample)
    return BlockContext(builder, family, prior_prec, seed, thetas)


def in_memory_access(X, y, sample_weight, family, prior_prec, fit_intercept):
    """``full_laplace`` and ``subsample`` callables of :func:`make_context` for arrays (or
    memmaps) in this process, reading X in row chunks."""
    def full_laplace():
        unit = relative_weights(sample_weight)  # scale-free pi-hat, as in memory

        def row_sums(theta):
            return loglik_sums(X, y, unit, family, theta, fit_intercept)
        return summed_laplace(row_sums, unit @ y, unit.sum(), family, prior_prec,
                              fit_intercept)

    def subsample(size, rng):
        rows = np.flatnonzero(sample_weight > 0)
        rows = np.sort(rng.choice(rows, size=min(size, len(rows)), replace=False))
        return np.asarray(X[rows], dtype=float), y[rows], sample_weight[rows]

    return dict(full_laplace=full_laplace, subsample=subsample)


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------
@dataclass
class _Stream:
    """State carried between ``partial_fit`` calls."""

    context: BlockContext
    tree: MergeTree
    n_blocks: int = 0
    n_samples: int = 0


_STREAMING_ATTRS_DOC = """
    n_samples_seen_ : int
        Number of rows consumed (the stream's row numbering of ``sample_indices_``).
    n_blocks_ : int
        Number of blocks (leaves of the merge-reduce tree) consumed.
    weighting_posterior_ : GaussianPosterior
        The weighting distribution shared by all blocks. Only for Hilbert base coresets.
    error_ : float
        Relative error of the coreset against the exact projected log-likelihood of all
        rows seen (paper 001, eq. 39). Only for Hilbert base coresets.
"""


@fill_doc(common_attrs=COMMON_ATTRS_DOC, streaming_attrs=_STREAMING_ATTRS_DOC)
class StreamingCoreset(BaseCoreset):
    """Merge-reduce coreset of any constructor, for streams and parallel construction.

    The rows are cut into blocks of ``block_size``; each block gets a coreset from a clone of
    ``base_coreset`` (its incoming ``sample_weight`` included); coresets of consecutive
    blocks are united with their weights and compressed again by the base constructor,
    pairwise in a binary tree (paper 002, §3.4). With ``B`` blocks only ``O(log B)`` block
    coresets are alive at once, and each compression sees at most ``max(block_size, 2 M)``
    rows, so memory is bounded whatever the number of rows. The result follows the coreset
    contract of every constructor: ``sample_indices_`` index the full data (or the stream),
    ``transform`` on the training data returns the weighted subset.

    Parameters
    ----------
    base_coreset : coreset constructor, default=None
        The constructor applied to every block and to every merged pair, with its own budget
        ``M``, likelihood (``model``, ``link``, prior, ``fit_intercept``) and method
        parameters. ``None`` means ``UniformCoreset()``. Its ``random_state`` is not used:
        every block and merge draws from a seed derived from ``random_state`` below.
    block_size : int, default=10_000
        Rows per block (the leaves of the tree). A block or a union with at most ``M`` rows
        of positive weight is kept as it is.
    n_jobs : int, default=None
        Number of block coresets built in parallel by :class:`joblib.Parallel` (``None``
        means 1 unless in a :func:`joblib.parallel_config` context; -1 means all cores).
        Blocks are consumed in order as they finish, so at most about ``2 n_jobs`` blocks
        are in flight.
    random_state : int, RandomState instance or None, default=None
        Seed of the tree: block ``b`` and the merge of blocks ``i..j`` draw from
        independent streams derived from it, so the result does not depend on ``n_jobs``,
        on the scheduler or on how a stream is split into ``partial_fit`` calls.
    verbose : int, default=0
        Print one line per block: blocks and rows consumed, live block coresets, size of
        the newest merged coreset and, for Hilbert base coresets, its relative error
        against the exact projected log-likelihood of the rows it stands for.

    Attributes
    ----------
    {streaming_attrs}
    {common_attrs}
    See Also
    --------
    UniformCoreset, SensitivityCoreset, GIGACoreset, FrankWolfeCoreset : Base constructors.

    Notes
    -----
    **Hilbert base coresets** (:class:`GIGACoreset`, :class:`FrankWolfeCoreset`) project every
    block under one shared weighting distribution, drawn once from the data of the first
    ``fit`` or ``partial_fit`` call: with ``weighting="laplace"`` the Laplace posterior of
    that data, computed in row chunks (one pass per Newton step; X is never copied); with
    ``"laplace-subsample"`` that of a uniform subsample; or the prior. In a stream that
    starts with a small first call, prefer ``"prior"`` or a representative first call.

    **Memory.** ``fit`` reads a float ``np.memmap`` block by block (a float32 memmap is not
    converted whole): besides a few length-``n_samples`` vectors (targets, weights), the peak
    is about ``n_jobs`` blocks and the base constructor's working memory on one block (for a
    Hilbert coreset ``block_size * projection_dim`` floats). Measured by
    ``benchmarks/bench_scale.py`` on a 1e7 x 10 float64 memmap (800 MB) with
    ``GIGACoreset(M=100, projection_dim=100)`` and ``block_size=100_000``: 310 MB of
    anonymous memory above the interpreter's (170 MB of it the targets and weights), 70 s on
    one core; the kernel also keeps the file's pages mapped as page cache, which counts in
    the process's RSS.

    **Dask.** ``fit`` accepts dask arrays (``X``, ``y`` and ``sample_weight``): ``X`` is
    rechunked to ``block_size`` rows, every leaf and merge is a task on the cluster and only
    the final coreset rows are gathered; the result equals the in-memory ``fit`` on the same
    data (same tree, same seeds). ``partial_fit`` after a dask ``fit`` continues with the
    gathered coreset as the coreset of all blocks seen.

    References
    ----------
    J. H. Huggins, T. Campbell and T. Broderick, "Coresets for scalable Bayesian logistic
    regression", NeurIPS 2016, §3.4 (paper 002).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import GIGACoreset, StreamingCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=4000) > 0).astype(int)
    >>> stream = StreamingCoreset(GIGACoreset(M=50, projection_dim=100), block_size=500,
    ...                           random_state=0)
    >>> for start in range(0, 4000, 1000):
    ...     stream = stream.partial_fit(X[start:start + 1000], y[start:start + 1000])
    >>> stream.n_blocks_, len(stream.sample_indices_) <= 50
    (8, True)
    """

    _parameter_constraints = {
        "base_coreset": [HasMethods(["fit_coreset", "_build"]), None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, base_coreset=None, block_size=10_000, *, n_jobs=None,
                 random_state=None, verbose=0):
        self.base_coreset = base_coreset
        self.block_size = block_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _base(self):
        return UniformCoreset() if self.base_coreset is None else self.base_coreset

    def _validate_params(self):
        """Validate this estimator's parameters and those of the base constructor, whose
        ``M``, likelihood and method parameters every block and merge uses."""
        super()._validate_params()
        base = self._base()
        if hasattr(base, "_validate_params"):
            try:
                base._validate_params()
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"Invalid base_coreset of StreamingCoreset: {exc}") from None

    def set_params(self, **params):
        """Set the parameters of this estimator (and, with ``base_coreset__<name>``, of the
        base constructor).

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : StreamingCoreset
        """
        if "M" in params:
            raise ValueError(
                "StreamingCoreset has no parameter M: the budget is the base constructor's. "
                "Use set_params(base_coreset__M=...) (in a pipeline or a grid search: "
                "'<step>__base_coreset__M').")
        return super().set_params(**params)

    def _likelihood_params(self):
        return self._base()

    @property
    def M(self):
        """The budget of the base constructor (the size bound of the coreset)."""
        return self._base().M

    # -- building ------------------------------------------------------------------------
    def _start_stream(self, context):
        """A new tree whose blocks are built and merged by ``context``."""
        if context.thetas is not None:
            self.weighting_posterior_ = context.builder.weighting_posterior_
        self._stream = _Stream(context, MergeTree(context.merge))

    def _in_memory_context(self, X, y, sample_weight, family, prior_prec, rng):
        access = in_memory_access(X, y, sample_weight, family, prior_prec,
                                  self._base().fit_intercept)
        return make_context(self._base(), self.model_, X.shape[0], family, prior_prec, rng,
                            **access)

    def _consume(self, X, y, sample_weight):
        """Cut validated, encoded rows into blocks; build their coresets; push them."""
        stream = self._stream
        blocks = [slice(s, min(s + self.block_size, X.shape[0]))
                  for s in range(0, X.shape[0], self.block_size)]
        offset, first_block = stream.n_samples, stream.n_blocks
        tasks = (delayed(_leaf_task)(stream.context, X[rows], y[rows], sample_weight[rows],
                                     offset + rows.start, first_block + b)
                 for b, rows in enumerate(blocks))
        # a generator: leaves are merged as they arrive, so few are alive at once
        parts = Parallel(n_jobs=self.n_jobs, return_as="generator")(tasks)
        for rows, part in zip(blocks, parts):
            merged = stream.tree.push(stream.n_blocks, part)
            stream.n_blocks += 1
            stream.n_samples = offset + rows.stop
            self._report(stream, merged)

    def _report(self, stream, merged):
        if self.verbose:
            error = "" if merged.error is None else f", error {merged.error:.3e}"
            print(f"[StreamingCoreset] block {stream.n_blocks}: {stream.n_samples} rows, "
                  f"{stream.tree.n_alive()} live coresets, coreset size {merged.size}"
                  f"{error}")

    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        self._start_stream(
            self._in_memory_context(X, y, sample_weight, family, prior_prec, rng))
        self._consume(X, y, sample_weight)
        root = self._finish_stream()
        return root.indices, root.weights

    def _finish_stream(self):
        self.n_samples_seen_ = self._stream.n_samples
        self.n_blocks_ = self._stream.n_blocks
        root = self._stream.tree.root()
        if root.error is not None:
            self.error_ = root.error
        return root

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Consume the next rows of a stream.

        The rows are cut into blocks of ``block_size`` (a call with fewer rows is one
        block); their coresets enter the merge-reduce tree and the fitted attributes
        describe the coreset of all rows seen so far, indexed in the stream's row
        numbering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next rows.
        y : array-like of shape (n_samples,)
            Their targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows.
        classes : array-like of shape (2,), default=None
            The two labels of a logistic model, needed on the first call when its rows may
            not show both; ignored afterwards and for other models.

        Returns
        -------
        self : object
            The updated constructor.
        """
        first_call = not hasattr(self, "_stream")
        X, y = validate_data(self, X, y, dtype=_float_dtypes(X), y_numeric=False,
                             reset=first_call)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if first_call:
            # a first block of 0/1 may be counts: warn unless classes declares labels
            self.model_ = resolve_model(self._base().model, y, first_block=classes is None)
            if classes is not None and self.model_ == "logistic":
                self.classes_ = np.unique(classes)
                if len(self.classes_) != 2:
                    raise ValueError(f"classes must hold the two labels of the logistic "
                                     f"model, got {self.classes_.tolist()}.")
                y_encoded = self._encode_more(y)
            else:
                y_encoded = self._encode_target(y)
            family, prior_prec = self._family_and_prior(X.shape[1])
            self._start_stream(self._in_memory_context(
                X, y_encoded, sample_weight, family, prior_prec,
                check_random_state(self.random_state)))
        else:
            y_encoded = self._encode_more(y)
        self._consume(X, y_encoded, sample_weight)
        root = self._finish_stream()
        self._set_coreset(root.indices, root.weights, root.X, self.n_samples_seen_)
        return self

    def _encode_more(self, y):
        """Encode the targets of a later block with the model fixed by the first."""
        if self.model_ != "logistic":
            return self._encode_target(y)
        unseen = np.setdiff1d(np.unique(y), self.classes_)
        if len(unseen):
            raise ValueError(f"y contains labels {unseen.tolist()} not in classes_ "
                             f"{self.classes_.tolist()}.")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

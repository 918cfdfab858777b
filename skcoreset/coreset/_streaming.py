"""Merge-reduce coresets for streams and parallel construction (Huggins, Campbell & Broderick
2016, §3.4): the estimator over the tree of :mod:`._merge_reduce`."""

from dataclasses import dataclass, replace
from numbers import Integral
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from joblib import Parallel, delayed
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._backend import InMemoryRows, float_dtypes
from .._inference import resolve_family
from ..families import make_family
from .._atomic import fit_context
from .._sklearn_compat import HasMethods, Interval
from .._validation import ACCEPT_SPARSE, check_sample_weight, linear_offset
from ._base import BaseCoreset, order_matters
from ._model import resolve_model
from ._checks import block_outcomes, warn_if_ordered, warn_if_weight_lost
from ._docs import COMMON_ATTRS_DOC
from .._docstrings import fill_doc
from ._merge_reduce import BlockContext, MergeTree, chunk_tree, make_context
from ._uniform import UniformCoreset
from .._typing import MatrixLike, RandomStateLike, VectorLike


def _leaf_task(context, X, y, sample_weight, start, block, offset=None):
    return context.leaf(X, y, sample_weight, start, block, offset)


def _same(a, b):
    """Whether two parameter values are equal (arrays elementwise, others by ``==``)."""
    if a is b:
        return True
    try:
        return bool(np.all(np.asarray(a == b)))
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------
@dataclass
class _Stream:
    """State carried between ``partial_fit`` calls, with the settings it was started with."""

    context: BlockContext
    tree: MergeTree
    settings: dict
    n_blocks: int = 0
    n_samples: int = 0
    total_weight: float = 0.0
    # whether the rows have offsets in their linear predictors (all blocks or none)
    has_offset: bool = False
    # the overdispersion estimates of the partial_fit calls, pooled (see _PooledDispersion)
    dispersion: "_PooledDispersion | None" = None
    # (rows, sum of y, sum of y^2) of each block's rows of positive weight, to tell rows
    # that come in order of their outcome (see warn_if_ordered); whether it was told
    outcome_sums: tuple = ()
    told_order: bool = False

    def copy(self):
        """A copy to add blocks to (the parts of the tree are shared, never changed), with
        its own context, whose family a call may update (the pooled overdispersion) and
        which a failed call then leaves unchanged in this stream."""
        context = replace(self.context)
        tree = self.tree.copy()
        tree.merge = context.merge
        return _Stream(context, tree, self.settings, self.n_blocks, self.n_samples,
                       self.total_weight, self.has_offset, self.dispersion,
                       self.outcome_sums, self.told_order)


@dataclass(frozen=True)
class _PooledDispersion:
    """The negative binomial overdispersion of all the rows a stream has seen, from the
    estimates of its ``partial_fit`` calls (each on the call's rows): their ``log alpha``
    weighted by its precision, the inverse variance of its Laplace sd (a fixed-effect
    pooling; calls at the Poisson limit, of undefined sd, enter only while no call has
    more). The rows are not kept, and the overdispersion has no finite sufficient
    statistics, so this is the estimate of all rows up to the pooling."""

    precision: float = 0.0
    weighted: float = 0.0  # sum of precision * log alpha
    last: Any = None  # the latest call's estimate (a Dispersion)

    def add(self, estimate):
        sd = estimate.log_alpha_sd
        if not np.isfinite(sd) or sd <= 0:
            return self if self.precision > 0 else _PooledDispersion(last=estimate)
        precision = 1.0 / sd**2
        return _PooledDispersion(self.precision + precision,
                                 self.weighted + precision * np.log(estimate.alpha), estimate)

    def estimate(self):
        if self.precision == 0:
            return self.last
        return self.last._replace(alpha=float(np.exp(self.weighted / self.precision)),
                                  log_alpha_sd=float(1.0 / np.sqrt(self.precision)))


_STREAMING_ATTRS_DOC = """
    n_samples_seen_ : int
        Number of rows consumed (the stream's row numbering of ``sample_indices_``).
    n_blocks_ : int
        Number of blocks (leaves of the merge-reduce tree) consumed.
    weighting_posterior_ : GaussianPosterior
        The weighting distribution shared by all blocks. Only for Hilbert base coresets.
    error_ : float
        Relative error of the coreset against the exact projected log-likelihood of all
        rows seen (Campbell & Broderick 2018, eq. 39). Only for Hilbert base coresets.
"""


@fill_doc(common_attrs=COMMON_ATTRS_DOC, streaming_attrs=_STREAMING_ATTRS_DOC)
class StreamingCoreset(BaseCoreset):
    """Merge-reduce coreset of any constructor, for streams and parallel construction.

    The rows are cut into blocks of ``block_size``; each block gets a coreset from a clone of
    ``base_coreset`` (its incoming ``sample_weight`` included); coresets of consecutive blocks
    are united with their weights and compressed again by the base constructor, pairwise in a
    binary tree (Huggins, Campbell & Broderick 2016, §3.4). With ``B`` blocks only ``O(log B)``
    block coresets are alive at once, and each compression sees at most ``max(block_size, 2 M)``
    rows, so memory is bounded whatever the number of rows. The result follows the coreset
    contract of every constructor: ``sample_indices_`` index the full data (or the stream),
    ``fit_transform`` returns the weighted subset.

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

    **Row order.** Feed the rows in random order: with a base constructor that fits the
    log-likelihood, blocks of one outcome (rows sorted or grouped by y) make a far less
    accurate coreset, and a warning says so when more than half of the variance of y lies
    between the blocks.

    **Overdispersion.** Under the negative binomial model with ``alpha="auto"``, every
    ``partial_fit`` call estimates alpha on its rows, and the stream pools the estimates
    by their precision (``family_``; later blocks are built under the pooled estimate).

    **Offsets.** With the negative binomial model's ``exposure`` and ``offset`` the rows'
    offsets travel with them into every block, merge and shared weighting distribution,
    and the base constructor builds every block under them (``sample_offset_``).

    **Memory.** ``fit`` reads a float ``np.memmap`` block by block (a float32 memmap is not
    converted whole): besides a few length-``n_samples`` vectors (targets, weights), the peak
    is about ``n_jobs`` blocks and the base constructor's working memory on one block (for a
    Hilbert coreset ``block_size * projection_dim`` floats). Measured by
    ``benchmarks/bench_scale.py`` on a 1e7 x 10 float64 memmap (800 MB) with
    ``GIGACoreset(M=100, projection_dim=100)`` and ``block_size=100_000``: 310 MB of
    anonymous memory above the interpreter's (170 MB of it the targets and weights), 70 s on
    one core; the kernel also keeps the file's pages mapped as page cache, which counts in
    the process's RSS.

    **Dask.** ``fit`` accepts dask arrays (``X``, ``y`` and ``sample_weight``, and the
    negative binomial model's ``exposure`` and ``offset``): ``X`` is rechunked to
    ``block_size`` rows, every leaf and merge is a task on the cluster and only the final
    coreset rows are gathered; the result equals the in-memory ``fit`` on the same data
    (same tree, same seeds). ``partial_fit`` after a dask ``fit`` continues with the
    gathered coreset as the coreset of all blocks seen.

    References
    ----------
    J. H. Huggins, T. Campbell and T. Broderick, "Coresets for scalable Bayesian logistic
    regression", NeurIPS 2016, §3.4.

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

    def __init__(self, base_coreset: Any = None, block_size: int = 10_000, *,
                 n_jobs: int | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.base_coreset = base_coreset
        self.block_size = block_size
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _base(self):
        return UniformCoreset() if self.base_coreset is None else self.base_coreset

    def _budget(self):
        return self._base()._budget()

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

    def set_params(self, **params: Any) -> Self:
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

    def _own_likelihood_params(self):
        return self._base()

    # the base constructor's, read-only (the coreset constructors store their own M)
    @property
    def M(self) -> int:  # type: ignore[override]
        """The budget of the base constructor (the size bound of the coreset)."""
        return self._base().M

    # -- building ------------------------------------------------------------------------
    def _stream_settings(self):
        """The parameters a stream's blocks and merges are built with: those of the base
        constructor (but its unused ``random_state`` and ``verbose``), ``block_size`` and
        ``random_state``."""
        base = self._base()
        settings = {f"base_coreset__{name}": value
                    for name, value in base.get_params(deep=False).items()
                    if name not in ("random_state", "verbose")}
        settings.update(base_coreset=type(base).__name__, block_size=self.block_size,
                        random_state=self.random_state)
        return settings

    def _check_stream_settings(self):
        """Refuse a ``partial_fit`` after ``set_params`` changed how the stream's blocks are
        built: the blocks seen so far were built with the old values."""
        started, now = self._stream.settings, self._stream_settings()
        changed = [name for name in now if not _same(started.get(name), now[name])]
        if changed:
            described = ", ".join(f"{name} from {started.get(name)!r} to {now[name]!r}"
                                  for name in changed)
            raise ValueError(
                f"StreamingCoreset parameters changed since the stream started: "
                f"{described}. The coreset of the rows seen so far was built with the old "
                "values; restore them to continue the stream, or call fit (or partial_fit on "
                "an unfitted clone, sklearn.base.clone) to start a new one.")

    def _start_stream(self, context, has_offset=False):
        """A new tree whose blocks are built and merged by ``context`` (of rows with offsets
        in their linear predictors, or of rows without), with the overdispersion estimated
        on its first rows as the start of the pooled estimate of later calls."""
        if context.thetas is not None:
            self.weighting_posterior_ = context.builder.weighting_posterior_
        dispersion = (_PooledDispersion().add(self._dispersion)
                      if self._dispersion_estimated and self._dispersion is not None
                      else None)
        return _Stream(context, MergeTree(context.merge), self._stream_settings(),
                       has_offset=has_offset, dispersion=dispersion)

    def _in_memory_context(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        return make_context(self._base(), self.model_,
                            InMemoryRows(X, y, sample_weight, offset), family, prior_prec,
                            rng, self._dispersion_estimated)

    def _consume(self, stream, X, y, sample_weight, offset=None):
        """Cut validated, encoded rows (with their offsets, or None) into blocks; build
        their coresets; push them into ``stream``."""
        stream.total_weight += float(np.sum(sample_weight))
        blocks = [slice(s, min(s + self.block_size, X.shape[0]))
                  for s in range(0, X.shape[0], self.block_size)]
        start, first_block = stream.n_samples, stream.n_blocks
        tasks = (delayed(_leaf_task)(stream.context, X[rows], y[rows], sample_weight[rows],
                                     start + rows.start, first_block + b,
                                     None if offset is None else offset[rows])
                 for b, rows in enumerate(blocks))
        # a generator: leaves are merged as they arrive, so few are alive at once
        parts = Parallel(n_jobs=self.n_jobs, return_as="generator")(tasks)
        for rows, part in zip(blocks, parts):
            merged = stream.tree.push(stream.n_blocks, part)
            stream.n_blocks += 1
            stream.n_samples = start + rows.stop
            stream.outcome_sums += (block_outcomes(y[rows], sample_weight[rows]),)
            self._report(stream, merged)
        self._tell_order(stream)

    def _tell_order(self, stream):
        """Warn, once a stream, when its blocks come in order of their outcome."""
        if stream.told_order or not order_matters(self._base()):
            return
        stream.told_order = warn_if_ordered(
            "StreamingCoreset", stream.outcome_sums, f"its {stream.n_blocks} blocks",
            "Shuffle the rows before streaming them (e.g. sklearn.utils.shuffle(X, y, "
            "random_state=0), or a random permutation of the row order), or use one "
            "constructor on all rows.")

    def _report(self, stream, merged):
        if self.verbose:
            error = "" if merged.error is None else f", error {merged.error:.3e}"
            print(f"[StreamingCoreset] block {stream.n_blocks}: {stream.n_samples} rows, "
                  f"{stream.tree.n_alive()} live coresets, coreset size {merged.size}"
                  f"{error}")

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        stream = self._start_stream(
            self._in_memory_context(X, y, sample_weight, family, prior_prec, rng, offset),
            offset is not None)
        self._consume(stream, X, y, sample_weight, offset)
        root = self._finish_stream(stream)
        return root.indices, root.weights

    def _fit_rows(self, data, family, prior_prec, rng):
        if not data.chunked:
            return super()._fit_rows(data, family, prior_prec, rng)
        # the same tree with one task per leaf and merge; a stream then continues from the
        # gathered root, placed at the level of the whole tree as the coreset of all blocks
        data = data.rechunk(self.block_size)
        # the blocks' outcome sums come from their leaf tasks, gathered with the root
        context, tree = chunk_tree(self._base(), self.model_, data, family, prior_prec, rng,
                                   self._dispersion_estimated, per_chunk=block_outcomes)
        root, outcome_sums = data.gather(tree.root())
        stream = self._start_stream(context, data.has_offset)
        stream.n_blocks, stream.n_samples = data.n_chunks, data.n
        stream.total_weight = data.total_weight()
        stream.outcome_sums = outcome_sums
        stream.tree.levels = [None] * (len(tree.levels) - 1) + [(0, stream.n_blocks - 1, root)]
        self._tell_order(stream)
        return self._finish_stream(stream)

    def _finish_stream(self, stream):
        """Publish ``stream`` and the attributes that describe it."""
        self._stream = stream
        self.n_samples_seen_ = stream.n_samples
        self.n_blocks_ = stream.n_blocks
        root = stream.tree.root()
        if root.error is not None:
            self.error_ = root.error
        elif hasattr(self, "error_"):
            del self.error_
        return root

    def _stream_offset(self, exposure, offset, n_samples, has_offset=None):
        """The offsets ``offset + log(exposure)`` of a block of a negative binomial stream,
        or None; ``has_offset``: whether the blocks before had them (None: a first block)."""
        given = exposure is not None or offset is not None
        if given and hasattr(self.family_, "exposure_as_weight"):
            raise ValueError(
                f"exposure and offset of StreamingCoreset.partial_fit with the {self.model_} "
                "model: pass the rates y / exposure with sample_weight=exposure (times any "
                "weights), the same likelihood, or fit the whole data with fit.")
        offset = linear_offset(exposure, offset, n_samples, self.family_.link.name)
        if has_offset is not None and has_offset != (offset is not None):
            raise ValueError(
                "The rows of a stream have offsets in their linear predictors in every "
                "block or in none: the stream started {}, this block {}. Pass exposure or "
                "offset with every partial_fit call, or with none.".format(
                    *(("with them", "without") if has_offset else ("without them", "with"))))
        return offset

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: VectorLike, classes: ArrayLike | None = None,
                    sample_weight: VectorLike | None = None,
                    exposure: VectorLike | None = None,
                    offset: VectorLike | None = None) -> Self:
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
        classes : array-like of shape (2,), default=None
            The two labels of a logistic model, needed on the first call when its rows may
            not show both; ignored afterwards and for other models. Same position as in
            scikit-learn's ``partial_fit`` and in the estimators'.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows.
        exposure, offset : float or array-like of shape (n_samples,), default=None
            Of the negative binomial model's counts, as in :meth:`fit`: the rows' offsets
            ``offset + log(exposure)`` travel with them into their blocks and merges
            (``sample_offset_``). Given with every call of a stream or with none.

        Returns
        -------
        self : object
            The updated constructor.
        """
        first_call = not hasattr(self, "_stream")
        self.__dict__.pop("kl_estimate_", None)  # a stream's rows are not kept to measure it
        if not first_call:
            self._check_stream_settings()
        X, y = validate_data(self, X, y, dtype=float_dtypes(X), y_numeric=False,
                             reset=first_call, accept_sparse=ACCEPT_SPARSE)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if first_call:
            self._fit_likelihood = None  # a stream is built under its own parameters
            # a first block of 0/1 may be counts: warn unless classes declares labels
            self._set_family(resolve_model(self._likelihood_params().model, y,
                                           first_block=classes is None))
            y_encoded = self._encode_target(y, classes)
            offset = self._stream_offset(exposure, offset, X.shape[0])
            self._resolve_family(X, y_encoded, sample_weight, offset)
            family, prior_prec = self._family_and_prior(X.shape[1])
            stream = self._start_stream(self._in_memory_context(
                X, y_encoded, sample_weight, family, prior_prec,
                check_random_state(self.random_state), offset), offset is not None)
        else:
            y_encoded = self._encode_more(y)
            offset = self._stream_offset(exposure, offset, X.shape[0],
                                         self._stream.has_offset)
            stream = self._stream.copy()  # the block is added completely or not at all
        self._consume(stream, X, y_encoded, sample_weight, offset)
        if not first_call and stream.dispersion is not None:
            self._pool_dispersion(stream, X, y_encoded, sample_weight, offset)
        root = self._finish_stream(stream)
        self._set_coreset(root.indices, root.weights, root.X, self.n_samples_seen_,
                          offset=root.offset)
        warn_if_weight_lost(self, float(np.sum(self.sample_weight_)), stream.total_weight)
        return self

    def _pool_dispersion(self, stream, X, y, sample_weight, offset):
        """Estimate the overdispersion (``alpha="auto"``) on the rows of this call and pool
        it with those of the calls before: the estimate of all rows seen, which ``family_``
        and a skcoreset Pipeline's estimator then hold, and under which the later blocks and
        merges are built (a first call of a few hundred rows alone is tens of standard
        errors off). Called once the call's blocks are in ``stream``, so that a failing
        call leaves the stream as it was."""
        params = self._likelihood_params()
        # the family as given, alpha="auto" (not "auto" the model: that is never this one)
        unresolved = make_family(params.model, **params._family_params())
        _, estimate = resolve_family(
            unresolved, X, y, sample_weight,
            prior_prec=self._prior_precision(X.shape[1]), fit_intercept=params.fit_intercept,
            offset=offset, return_dispersion=True,
            rows=InMemoryRows(X, y, sample_weight, offset))
        stream.dispersion = stream.dispersion.add(estimate)
        self._dispersion = stream.dispersion.estimate()
        self.family_ = self.family_.with_alpha(self._dispersion.alpha)
        stream.context.family = self.family_  # this call's copy: from the next block on

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

"""Fitting rows that live on a dask cluster: Laplace, KL-proximal, PASS-GLM, NUTS and the
quasi-Newton coreset, against the in-memory fit of the same rows.

Run by hand: ``python benchmarks/bench_dask.py [--quick] [--n N] [--d D] [--chunk-rows R]
[--methods ...] [--qnc | --nuts | --pass-glm | --passes | --mixed-passes | --nuts-fits]``. A
``distributed.LocalCluster`` of two worker processes (one thread each, BLAS included;
``--memory-limit`` per worker, default 4 GiB) generates N = 1e7 rows (``--quick``: 1e6) of
d = 20 features chunk by chunk on the workers, where they stay (persisted; the client never
holds them): AR(0.5)-correlated Gaussian features and logistic labels with about 15 %
positives, in chunks of 250,000 rows (40 MB). Then, on the cluster:

* ``BayesianLogisticRegression(method=...).fit(X, y)`` for ``"laplace"``,
  ``"kl_proximal"``, ``"pass_glm"`` and ``"mcmc"`` (NUTS, a short run: 2 chains in turn,
  ``--nuts-draws`` effective draws after ``--nuts-burnin`` warm-up iterations), and
  ``QuasiNewtonCoreset(M=1000).fit(X, y)``: wall time; the passes over the rows (each a
  task per worker over the chunks it holds, the client adding their sums; "full" passes
  read all N rows,
  "thinned" ones the every-8th-row start on the cluster) and the wall time per pass;
* peak memory: of the client process (``RssAnon``, sampled every 10 ms, above its level
  before the fit) and of each worker (``RssAnon`` sampled every 50 ms, above its level with
  the persisted rows);
* the graph-size warnings dask raised during the fits (``Sending large graph``).

``--pass-glm`` instead measures PASS-GLM's pilot rows (``pass_radius="auto"``): on
``make_logistic_regression`` data (d = 10) it compares, in Laplace posterior sds, the fit of
N = 4e5 rows in 8 dask chunks on the cluster with the in-memory fit, ten ``partial_fit``
blocks of 2,000 rows with ``fit`` on the 20,000, and the accuracy estimate (with its bound,
two standard errors above) with the actual error at N = 2e4, 1e5 and 4e5.

``--qnc`` instead compares ``QuasiNewtonCoreset`` on the cluster with the same constructor
in memory (the same ``random_state``) on the rows generated as above (``--quick``: N = 1e6):
``M=1000`` and ``M="auto"`` (``target_kl=0.01``), and merge-reduce over the chunks
(``StreamingCoreset(QuasiNewtonCoreset(M=1000), block_size=<chunk rows>)``, what a dask
array got before the exact algorithm) against the in-memory ``M=1000``: wall times,
whether the same rows were drawn, ``kl_estimate_``, and the true KL(coreset Laplace || full
Laplace) in nats with the largest posterior-mean error in sds, the full Laplace fit being
that of the rows in memory.

``--nuts`` measures what a gradient of NUTS on all rows costs (one pass over the rows): the
log posterior's value and gradient at the Laplace mode plus small perturbations, in memory
(one BLAS thread) and as one reduction over the chunks on the cluster, in turn (medians of
``--gradients`` calls each); then short NUTS runs (4 chains, ``--nuts-draws`` effective
draws, ``--nuts-burnin`` warm-up iterations) in memory and on the cluster, with the chains
one after the other and (on the cluster) in 4 threads: wall time, gradients, milliseconds
per gradient, minimum bulk ESS per second, and the largest difference between the draws of
the sequential runs (the same seed: the same chains up to rounding).

``--passes`` instead times single passes (the log posterior's value and gradient, and with
its Hessian) in memory and on the cluster with the pass changes off (chunks prepared in
every task, a task per chunk and a tree, the workers' allocator as started), with the
chunks prepared once and a task per worker, and with the package's allocator change too,
in turn (``--rounds`` times): wall time, its paired median ratio to in memory, and the CPU
time of this process and the workers.

``--mixed-passes`` times NUTS' gradient pass with float64 products and with
single-precision products about a reference point (the in-memory sampler's float32 copy of
X; on the cluster the workers' float32 copies of the chunks they hold), in memory and on the
cluster, in turn (``--rounds`` times): paired median ratio of dask over memory per
precision. ``--nuts-fits`` times whole ``BayesianLogisticRegression(method="mcmc")`` fits
(2 chains, ``--nuts-draws``, ``--nuts-burnin``) in memory and on the cluster with
single-precision and with float64 passes, in turn (``--repeats`` times). With
``--graph-passes`` both also time the cluster's passes built as a graph each (the code
before passes over held chunks were submitted as futures) in turn with the rest.

``--paired`` instead fits the ``--methods`` (default PASS-GLM and Laplace) in memory and
on the cluster in turn, ``--rounds`` times (the order alternating): the paired median (and
range) of the wall-time ratios, the CPU time (this process and both workers) and the load
average; then, with ``--one-worker``, the same after every chunk has been gathered on one
worker (what computing X into this process once did: the cluster keeps a chunk fetched by
the concatenating task only there) and the prepared chunks released, as a fresh fit meets
such rows.

The rows are then gathered and fitted in this process with one BLAS thread (the baseline:
what a user with the memory for them would run), in turn with the cluster fits
(``--repeats`` times each, best time; NUTS once), and each dask fit is compared with it:
wall time ratio, time per pass (each fit's wall time over the cluster's passes, thinned
ones counted as 1/8: the same steps in memory), and the largest difference of the
posterior means in posterior sds (the coreset: the same rows, and the largest relative
weight difference). The machine has 2 cores, shared with other work (the load average is
printed): timings are noisy, and the cluster has at most twice the in-memory fit's cores.
"""

import argparse
import os
import threading
import time
import warnings

import numpy as np
from sklearn.base import clone

from skcoreset._backend import _dask, _dask_held

D = 20
CHUNK_ROWS = 250_000  # 40 MB of float64 features per chunk
_MIXED_PRECISION = None  # ChunkedLogPosterior.mixed_precision, set by main
_SUBMITTED_PASS = None  # skcoreset._backend._dask._submitted_pass, set by main


def anon_rss():
    """Resident anonymous memory of this process, bytes (allocations, not mapped files)."""
    with open(f"/proc/{os.getpid()}/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


class PeakSampler:
    """Peak of ``measure()`` sampled every ``interval`` seconds in a thread."""

    def __init__(self, measure, interval):
        self.measure, self.interval = measure, interval
        self.peak = None
        self._stop = threading.Event()

    def __enter__(self):
        self.start = self.measure()
        self.peak = self.start
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval):
            self._merge(self.measure())

    def _merge(self, value):
        if isinstance(value, dict):
            self.peak = {k: max(self.peak.get(k, 0), v) for k, v in value.items()}
        else:
            self.peak = max(self.peak, value)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._merge(self.measure())


def make_rows(n, d=D, chunk_rows=CHUNK_ROWS, seed=0):
    """Lazy dask arrays of correlated features and logistic labels, chunk by chunk."""
    import dask.array as da

    chunk = min(chunk_rows, n)
    rng = da.random.default_rng(seed)
    # AR(0.5) correlation: x_j = 0.5 x_{j-1} + sqrt(0.75) z_j
    lag = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    chol = np.linalg.cholesky(lag)
    X = rng.standard_normal((n, d), chunks=(chunk, d)) @ chol.T
    coef = np.random.default_rng(1).normal(0.0, 1.0, d) / np.sqrt(d)
    proba = 1.0 / (1.0 + da.exp(-(X @ coef - 2.0)))
    y = (rng.random(n, chunks=chunk) < proba).astype(np.int8)
    return X, y


class PassLog:
    """The passes over rows on the cluster: rows read and wall time of each tree reduction
    (wraps ``DaskRows._reduce`` and ``DaskRows._sum``, where every pass ends)."""

    NAMES = ("_reduce", "_sum")

    def __init__(self):
        from skcoreset._backend import _dask

        self.module, self.entries = _dask, []
        self.originals = {name: getattr(_dask.DaskRows, name) for name in self.NAMES}

    def __enter__(self):
        log = self.entries

        def logged(original):
            def reduce(rows, *args, **kwargs):
                start = time.perf_counter()
                out = original(rows, *args, **kwargs)
                log.append((rows.n, time.perf_counter() - start))
                return out
            return reduce
        for name, original in self.originals.items():
            setattr(self.module.DaskRows, name, logged(original))
        return self

    def __exit__(self, *exc):
        for name, original in self.originals.items():
            setattr(self.module.DaskRows, name, original)

    def summary(self, n):
        full = [t for rows, t in self.entries if rows == n]
        thinned = [t for rows, t in self.entries if rows < n]
        return len(full), len(thinned), float(np.median(full)) if full else np.nan


def chunks_held(client, X):
    """The number of chunks of X each worker holds."""
    held = {worker: 0 for worker in client.scheduler_info(n_workers=-1)["workers"]}
    for workers in client.who_has(X).values():
        for worker in workers:
            held[worker] += 1
    return list(held.values())


def worker_anon_rss(client):
    return client.run(anon_rss)


def warm_up(client, X, y):
    """Import the package on the workers and fit once, untimed."""
    from skcoreset import BayesianLogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = X.chunks[0][0]
        BayesianLogisticRegression(method="pass_glm").fit(X[:rows], y[:rows])


def methods(nuts_draws, nuts_burnin):
    """What the table fits, by name: a function making the unfitted estimator."""
    from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset

    # NUTS: a short run (2 chains one after the other, so the passes are those of one
    # chain at a time, as in memory)
    nuts = dict(method="mcmc", n_draws=nuts_draws, n_burnin=nuts_burnin, n_chains=2,
                random_state=0)
    return {"laplace": lambda: BayesianLogisticRegression(method="laplace"),
            "kl_proximal": lambda: BayesianLogisticRegression(method="kl_proximal"),
            "pass_glm": lambda: BayesianLogisticRegression(method="pass_glm"),
            "qnc M=1000": lambda: QuasiNewtonCoreset(M=1000, random_state=0),
            "nuts": lambda: BayesianLogisticRegression(**nuts)}


def agreement(on_cluster, in_memory):
    """How far the cluster's fit is from the in-memory one: the largest difference of the
    posterior means in posterior sds; for a coreset, the largest relative difference of
    the weights (infinite unless the same rows were drawn)."""
    if hasattr(on_cluster, "sample_weight_"):
        if not np.array_equal(on_cluster.sample_indices_, in_memory.sample_indices_):
            return np.inf
        return float(np.max(np.abs(on_cluster.sample_weight_ - in_memory.sample_weight_)
                            / in_memory.sample_weight_))
    return float(np.max(np.abs(on_cluster.posterior_.mean - in_memory.posterior_.mean)
                        / in_memory.posterior_.std))


def fit_on_cluster(client, X, y, make, n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PeakSampler(anon_rss, 0.01) as here, \
                PeakSampler(lambda: worker_anon_rss(client), 0.05) as workers, \
                PassLog() as passes:
            start = time.perf_counter()
            est = make().fit(X, y)
            seconds = time.perf_counter() - start
    graphs = sum("Sending large graph" in str(w.message) for w in caught)
    worker_peak = max(workers.peak[w] - workers.start[w] for w in workers.start)
    return dict(est=est, seconds=seconds, first_seconds=seconds, passes=passes.summary(n),
                client=here.peak - here.start, worker=worker_peak, graphs=graphs)


def _sd(a, b, sd):
    return float(np.max(np.abs(a.posterior_.mean - b.posterior_.mean) / sd))


def pass_glm_pilot(client, seeds=(0, 1, 2)):
    """PASS-GLM with pass_radius="auto": dask vs memory, stream vs fit, estimate vs error."""
    import dask.array as da
    from threadpoolctl import threadpool_limits

    from skcoreset import BayesianLogisticRegression
    from skcoreset._inference.pass_glm import PILOT_ROWS, mean_error_estimate
    from skcoreset.datasets import make_logistic_regression

    pg = dict(method="pass_glm")
    print("PASS-GLM, pass_radius='auto', make_logistic_regression(d = 10); in Laplace sds")
    print(f"{'seed':>4} {'dask vs memory (4e5, 8 chunks)':>31} {'memory vs Laplace':>17} "
          f"{'stream vs fit (10 x 2,000)':>26}")
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            X, y = make_logistic_regression(400_000, n_features=10, random_state=seed)
            sd = BayesianLogisticRegression().fit(X, y).posterior_.std
            laplace = BayesianLogisticRegression().fit(X, y)
            memory = BayesianLogisticRegression(**pg).fit(X, y)
            Xd, yd = client.persist([da.from_array(X, chunks=(50_000, 10)),
                                     da.from_array(y, chunks=50_000)])
            on_cluster = BayesianLogisticRegression(**pg).fit(Xd, yd)
            stream = BayesianLogisticRegression(**pg)
            for rows in np.array_split(np.arange(20_000), 10):
                stream.partial_fit(X[rows], y[rows], classes=[0, 1])
            fit = BayesianLogisticRegression(**pg).fit(X[:20_000], y[:20_000])
            small_sd = BayesianLogisticRegression().fit(X[:20_000], y[:20_000]).posterior_.std
            print(f"{seed:4d} {_sd(on_cluster, memory, sd):31.2e} "
                  f"{_sd(memory, laplace, sd):17.3f} {_sd(stream, fit, small_sd):26.2e}",
                  flush=True)
        print()
        print(f"{'N':>8} {'seed':>4} {'actual error':>12} {'estimate':>8} {'bound':>6} "
              f"{'warns':>5}")
        for n in (20_000, 100_000, 400_000):
            for seed in seeds:
                X, y = make_logistic_regression(n, n_features=10, random_state=seed)
                laplace = BayesianLogisticRegression().fit(X, y)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    est = BayesianLogisticRegression(**pg).fit(X, y)
                warned = any("PASS-GLM posterior mean" in str(w.message) for w in caught)
                actual = _sd(est, laplace, laplace.posterior_.std)
                # what the warning reports: the largest estimate, and it plus two se
                held_out = est._pass_stream.sample.split(PILOT_ROWS, True)[1]
                offset, se = mean_error_estimate(est._pass_stream.statistics, est.posterior_.mean,
                                                 est._prior(10), held_out, return_se=True)
                print(f"{n:8d} {seed:4d} {actual:12.2f} {np.max(np.abs(offset)):8.2f} "
                      f"{np.max(np.abs(offset) + 2 * se):6.2f} {str(warned):>5}", flush=True)


def _local(client, X, y):
    """The rows gathered into this process (the in-memory baselines), chunk by chunk from
    the workers holding them. (Computing X would concatenate the chunks in a task on one
    worker, and the cluster then keeps every chunk there alone: later fits would read them
    all on that worker.)"""
    from dask.core import flatten

    def gather(array):
        graph = dict(array.__dask_graph__())
        return np.concatenate(client.gather([graph[key] for key in
                                             flatten(array.__dask_keys__())]))
    return gather(X), gather(y)


def _timed(fit):
    start = time.perf_counter()
    out = fit()
    return out, time.perf_counter() - start


def qnc_on_cluster(client, X, y, repeats):
    """QuasiNewtonCoreset on the cluster against in memory: time, rows, KL."""
    from threadpoolctl import threadpool_limits

    from skcoreset import QuasiNewtonCoreset, StreamingCoreset
    from skcoreset.metrics import coreset_quality

    X_local, y_local = _local(client, X, y)
    cases = [("M=1000", QuasiNewtonCoreset(M=1000, random_state=0), None),
             ("M='auto', target 0.01", QuasiNewtonCoreset(target_kl=0.01, random_state=0),
              None),
             ("merge-reduce, M=1000", StreamingCoreset(QuasiNewtonCoreset(M=1000),
                                                       block_size=X.chunks[0][0],
                                                       random_state=0),
              "M=1000")]
    rows, full = {}, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, coreset, reference in cases:
            times = {"dask": [], "memory": []}
            for _ in range(repeats):  # in turn: the machine's load changes
                on_cluster, seconds = _timed(lambda: clone(coreset).fit(X, y))
                times["dask"].append(seconds)
                if reference is None:
                    with threadpool_limits(limits=1):
                        in_memory, seconds = _timed(
                            lambda: clone(coreset).fit(X_local, y_local))
                    times["memory"].append(seconds)
            if reference is not None:
                in_memory = rows[reference]["memory"]
            quality = {}
            for key, fitted in (("dask", on_cluster), ("memory", in_memory)):
                q = coreset_quality(fitted, X_local, y_local, full_posterior=full)
                full = q.full_posterior
                quality[key] = (q.kl, q.max_mean_error_sd)
            rows[label] = dict(dask=on_cluster, memory=in_memory, quality=quality,
                               seconds={k: min(v) if v else np.nan for k, v in times.items()})
            print(f"  {label}: {rows[label]['seconds']['dask']:.2f} s on the cluster",
                  flush=True)
    print()
    print(f"QuasiNewtonCoreset, N = {len(y_local):,}, d = {X.shape[1]}, {X.numblocks[0]} "
          f"chunks: dask "
          f"(2 workers x 1 thread) against in memory (1 thread, same random_state); load "
          f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'coreset':>22} {'dask [s]':>9} {'memory [s]':>10} {'rows':>5} {'same rows':>9} "
          f"{'KL dask':>9} {'KL memory':>9} {'KL ratio':>8} {'sd dask':>7} {'sd memory':>9} "
          f"{'estimate dask':>13} {'estimate memory':>15}")
    for label, r in rows.items():
        dask_fit, memory_fit = r["dask"], r["memory"]
        same = np.array_equal(dask_fit.sample_indices_, memory_fit.sample_indices_)
        (kl_dask, sd_dask), (kl_memory, sd_memory) = r["quality"]["dask"], r["quality"]["memory"]
        estimate = getattr(dask_fit, "kl_estimate_", np.nan)
        print(f"{label:>22} {r['seconds']['dask']:9.2f} {r['seconds']['memory']:10.2f} "
              f"{len(dask_fit.sample_indices_):5d} {str(same):>9} {kl_dask:9.2e} "
              f"{kl_memory:9.2e} {kl_dask / kl_memory:8.3f} {sd_dask:7.1e} {sd_memory:9.1e} "
              f"{estimate:13.2e} {memory_fit.kl_estimate_:15.2e}")
    print("KL: KL(coreset Laplace || full Laplace) in nats; sd: largest posterior-mean error "
          "in full-posterior sds; merge-reduce is compared with the in-memory M=1000")


def _gradient_times(log_post, thetas):
    times = []
    for theta in thetas:
        start = time.perf_counter()
        log_post.value_and_grad(theta)
        times.append(time.perf_counter() - start)
    return times


def nuts_on_cluster(client, X, y, n_gradients, n_draws, n_burnin):
    """What a NUTS gradient on all rows costs on the cluster and in memory."""
    from functools import partial

    from threadpoolctl import threadpool_limits

    from skcoreset._backend import DaskRows
    from skcoreset._inference import prior_precision
    from skcoreset._inference._common import ChunkedLogPosterior, LogPosterior
    from skcoreset._inference.laplace import laplace
    from skcoreset._inference.nuts import nuts
    from skcoreset.families import LogisticFamily

    family = LogisticFamily()
    d = X.shape[1]
    prior = prior_precision(d, prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    X_local, y_local = _local(client, X, y)
    y_enc = family.encode_target(y_local, np.array([0, 1]))
    rows = DaskRows.from_arrays(X, y).encoded(
        partial(family.encode_target, classes=np.array([0, 1])))
    in_memory = LogPosterior(X_local, y_enc, family, np.ones(len(y_enc)), prior, True)
    on_cluster = ChunkedLogPosterior(rows, family, prior, True)
    with threadpool_limits(limits=1):
        posterior = laplace(X_local, y_enc, family, sample_weight=np.ones(len(y_enc)),
                            prior_prec=prior, fit_intercept=True).posterior
    rng = np.random.default_rng(0)
    z = rng.standard_normal((n_gradients, d + 1))
    thetas = posterior.mean + z @ posterior.cov_cholesky.T
    times = {"memory": [], "dask": []}
    for theta in thetas:  # in turn
        with threadpool_limits(limits=1):
            times["memory"] += _gradient_times(in_memory, [theta])
        times["dask"] += _gradient_times(on_cluster, [theta])
    print(f"a gradient (value and gradient of the log posterior, one pass over N = "
          f"{len(y_enc):,} rows, d = {d}), median of {n_gradients}: in memory "
          f"{1e3 * np.median(times['memory']):.1f} ms, on the cluster "
          f"{1e3 * np.median(times['dask']):.1f} ms ({X.numblocks[0]} chunks)", flush=True)

    runs = {}
    common = dict(family=family, sample_weight=None, prior_prec=prior, fit_intercept=True,
                  n_draws=n_draws, n_burnin=n_burnin, n_chains=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with threadpool_limits(limits=1):
            runs["memory, chains in turn"] = _timed(lambda: nuts(
                X_local, y_enc, **{**common, "sample_weight": np.ones(len(y_enc))}))
        print(f"  NUTS in memory: {runs['memory, chains in turn'][1]:.1f} s", flush=True)
        for label, n_jobs in (("dask, chains in turn", None), ("dask, 4 chains in threads", 4)):
            runs[label] = _timed(lambda: nuts(rows, None, **common, n_jobs=n_jobs))
            print(f"  NUTS on the cluster ({label}): {runs[label][1]:.1f} s", flush=True)
    reference = runs["memory, chains in turn"][0].posterior.samples
    print()
    print(f"NUTS on all rows, N = {len(y_enc):,}, d = {d}: 4 chains, n_draws={n_draws}, "
          f"{n_burnin} warm-up iterations; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"{'run':>26} {'wall [s]':>9} {'gradients':>9} {'ms / gradient':>13} "
          f"{'min ESS / s':>11} {'max |draw - memory|':>19}")
    for label, (result, seconds) in runs.items():
        draws = result.posterior.samples
        diff = (np.max(np.abs(draws - reference)) if draws.shape == reference.shape
                else np.nan)
        gradients = result.extra["n_gradients"]
        print(f"{label:>26} {seconds:9.1f} {gradients:9d} {1e3 * seconds / gradients:13.1f} "
              f"{np.min(result.extra['effective_sample_size']) / seconds:11.1f} "
              f"{diff:19.1e}")
    print("ms / gradient: wall time over all gradients of the run (warm-up included), the "
          "chains' bookkeeping and the Laplace start included")


def _switch_allocator(on):
    """On a worker: the package's tasks with (on) or without the allocator change."""
    import contextlib

    from skcoreset._backend import _allocator, _dask

    _dask.reusing_memory = _allocator.reusing_memory if on else contextlib.nullcontext


def _cpu_seconds(pids):
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def _logistic_posteriors(client, X, y):
    """The logistic log posterior of the benchmark's rows in memory, and what makes it on
    the cluster: ``(family, prior, encode, in_memory)``."""
    from functools import partial

    from skcoreset._inference import prior_precision
    from skcoreset._inference._common import LogPosterior
    from skcoreset.families import LogisticFamily

    family = LogisticFamily()
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    X_local, y_local = _local(client, X, y)
    encode = partial(family.encode_target, classes=np.array([0, 1]))
    in_memory = LogPosterior(X_local, encode(y_local), family, np.ones(len(y_local)), prior,
                             True)
    return family, prior, encode, in_memory


def pass_costs(client, X, y, rounds):
    """One pass at a time: the value and gradient of the log posterior (NUTS' pass) and with
    the Hessian (a Newton pass), in memory and on the cluster with the pass changes off
    (chunks prepared in every task, a task per chunk and a tree, the allocator as the
    workers were started), with the chunks prepared once and a task per worker, and with
    the allocator change too; in turn, ``rounds`` times. Wall time (paired median ratio to
    in memory) and CPU time of this process and the workers."""
    from threadpoolctl import threadpool_limits

    from skcoreset._backend import DaskRows
    from skcoreset._inference._common import ChunkedLogPosterior

    family, prior, encode, memory = _logistic_posteriors(client, X, y)
    d = X.shape[1]
    before = DaskRows.from_arrays(X, y).encoded(encode)
    before._prepared = ()  # every task prepares its chunk: the code before the changes
    after = DaskRows.from_arrays(X, y).encoded(encode)
    cases = {"memory": (memory, False),
             "dask before": (ChunkedLogPosterior(before, family, prior, True), False),
             "prepared, task per worker": (ChunkedLogPosterior(after, family, prior, True),
                                           False),
             "+ allocator": (ChunkedLogPosterior(after, family, prior, True), True)}
    pids = [os.getpid(), *client.run(os.getpid).values()]
    theta = np.full(d + 1, 0.01)
    cases["+ allocator"][0].value_and_grad(theta)  # prepares the chunks
    wall, cpu = {}, {}
    for _ in range(rounds):
        for name, (log_post, allocator) in cases.items():
            client.run(_switch_allocator, allocator)
            for hessian in (None, np.float64):
                with threadpool_limits(limits=1):
                    start_cpu, start = _cpu_seconds(pids), time.perf_counter()
                    log_post.value_and_grad(theta, neg_hessian=hessian)
                    key = (name, hessian is not None)
                    wall.setdefault(key, []).append(time.perf_counter() - start)
                    cpu.setdefault(key, []).append(_cpu_seconds(pids) - start_cpu)
        theta = theta + 0.001
    client.run(_switch_allocator, True)
    print()
    print(f"One pass, N = {X.shape[0]:,}, d = {d}, {X.numblocks[0]} chunks, {rounds} rounds "
          f"in turn; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'pass':>9} {'case':>26} {'wall [ms]':>9} {'wall ratio':>10} {'CPU [ms]':>8} "
          f"{'CPU ratio':>9}")
    for (name, hessian), times in wall.items():
        reference = (("memory", hessian))
        print(f"{'Newton' if hessian else 'gradient':>9} {name:>26} "
              f"{1e3 * np.median(times):9.0f} "
              f"{np.median(np.array(times) / np.array(wall[reference])):10.2f} "
              f"{1e3 * np.mean(cpu[name, hessian]):8.0f} "
              f"{np.sum(cpu[name, hessian]) / np.sum(cpu[reference]):9.2f}")
    print("wall ratio: paired median over the rounds; CPU: of this process (client and "
          "scheduler) and the two workers")


def _float64_passes(on):
    """In this process: dask rows' log posteriors with (on) or without single-precision
    passes (``ChunkedLogPosterior.mixed_precision`` patched to return itself)."""
    from skcoreset._inference import _common

    if on:
        _common.ChunkedLogPosterior.mixed_precision = lambda self, theta: self
    else:
        _common.ChunkedLogPosterior.mixed_precision = _MIXED_PRECISION


def _graph_pass(name, chunks, starts, groups, group_combine, function, args, root_here,
                combine):
    """The pass over held chunks as it was before it was submitted as futures: the same
    tasks built into a graph of ``dask.delayed`` calls named by a hash of their arguments
    (the parameters among them) and computed (the baseline of ``--graph-passes``)."""
    import dask
    from dask.base import tokenize

    task = dask.delayed(_dask_held._in_prepared_group, pure=True)
    tasks = []
    for group in groups:
        inputs = (group_combine, function, args, [chunks[b] for b in group],
                  [starts[b] for b in group], list(group))
        tasks.append(task(*inputs, dask_key_name=f"{name}-{tokenize(*inputs)}"))
    if not root_here:
        return dask.delayed(combine, pure=True)(("groups", 0), *tasks).compute()
    return combine(("groups", 0), *dask.compute(*tasks))


def _graph_passes(on):
    """In this process: passes over held chunks built as graphs (on, the code before) or
    submitted as futures (off, the package's)."""
    _dask._submitted_pass = _graph_pass if on else _SUBMITTED_PASS


def mixed_pass_costs(client, X, y, rounds, graph=False):
    """NUTS' gradient pass (the log posterior's value and gradient) in memory and on the
    cluster, with float64 products and with single-precision products about a reference
    point (the in-memory sampler's ``MixedProducts``; on the cluster float32 copies of the
    chunks kept by the workers), in turn, ``rounds`` times: wall time and its paired
    median ratio to the in-memory pass of the same precision. ``graph``: the cluster's passes
    also built as graphs (the code before they were submitted as futures), in turn, and
    the paired median ratio of the package's passes to those."""
    from threadpoolctl import threadpool_limits

    from skcoreset._backend import DaskRows
    from skcoreset._inference._common import ChunkedLogPosterior

    family, prior, encode, memory = _logistic_posteriors(client, X, y)
    d = X.shape[1]
    chunked = ChunkedLogPosterior(DaskRows.from_arrays(X, y).encoded(encode), family, prior,
                                  True)
    reference = np.full(d + 1, 0.01)
    chunked.value_and_grad(reference)  # prepares the chunks
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        memory_mixed = memory.mixed_precision(reference)
    made = {"memory": time.perf_counter() - start}
    start = time.perf_counter()
    chunked_mixed = chunked.mixed_precision(reference)
    made["dask"] = time.perf_counter() - start
    assert memory_mixed is not memory and chunked_mixed is not chunked
    cases = {("memory", "float64"): memory, ("dask", "float64"): chunked,
             ("memory", "float32"): memory_mixed, ("dask", "float32"): chunked_mixed}
    if graph:
        cases.update({("graph", "float64"): chunked, ("graph", "float32"): chunked_mixed})
    wall = {key: [] for key in cases}
    theta = reference
    for _ in range(rounds):
        theta = theta + 0.001
        for key, log_post in cases.items():
            _graph_passes(key[0] == "graph")
            with threadpool_limits(limits=1):
                start = time.perf_counter()
                log_post.value_and_grad(theta)
                wall[key].append(time.perf_counter() - start)
    print()
    print(f"NUTS' gradient pass, N = {X.shape[0]:,}, d = {d}, {X.numblocks[0]} chunks, "
          f"{rounds} rounds in turn; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores (float32 copies made in {made['memory']:.2f} s in memory, "
          f"{made['dask']:.2f} s on the cluster)")
    _graph_passes(False)
    print(f"{'products':>9} {'memory [ms]':>11} {'dask [ms]':>9} {'dask / memory':>13}"
          + (f" {'graph [ms]':>10} {'graph / memory':>14} {'dask / graph':>12}" if graph
             else ""))
    for precision in ("float64", "float32"):
        here, there = (np.array(wall[where, precision]) for where in ("memory", "dask"))
        line = (f"{precision:>9} {1e3 * np.median(here):11.1f} {1e3 * np.median(there):9.1f} "
                f"{np.median(there / here):13.2f}")
        if graph:
            before = np.array(wall["graph", precision])
            line += (f" {1e3 * np.median(before):10.1f} {np.median(before / here):14.2f} "
                     f"{np.median(there / before):12.2f}")
        print(line)
    print("medians over the rounds; dask / memory (graph / memory, dask / graph): paired "
          "median ratios" + ("; graph: the cluster's passes built as graphs (before)"
                             if graph else ""))


def nuts_fits(client, X, y, repeats, n_draws, n_burnin, graph=False):
    """Whole ``BayesianLogisticRegression(method="mcmc")`` fits in memory (one BLAS thread)
    and on the cluster with single-precision passes and with float64 passes, in turn,
    ``repeats`` times: wall time, gradients, ms per gradient, and the largest difference
    of the posterior means from the in-memory fit's in posterior sds. ``graph``: the float64
    passes replaced by single-precision passes built as graphs (the code before they were
    submitted as futures)."""
    from threadpoolctl import threadpool_limits

    from skcoreset import BayesianLogisticRegression

    X_local, y_local = _local(client, X, y)
    make = dict(method="mcmc", n_draws=n_draws, n_burnin=n_burnin, n_chains=2,
                random_state=0)
    runs = {"memory": [], "dask, float32 passes": [],
            "dask, float32, graphs" if graph else "dask, float64 passes": []}
    fitted = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            for label in runs:
                _float64_passes(label == "dask, float64 passes")
                _graph_passes(label == "dask, float32, graphs")
                data = (X_local, y_local) if label == "memory" else (X, y)
                with threadpool_limits(limits=1):
                    est, seconds = _timed(
                        lambda: BayesianLogisticRegression(**make).fit(*data))
                runs[label].append(seconds)
                fitted[label] = est
                print(f"  {label}: {seconds:.1f} s", flush=True)
    _float64_passes(False)
    _graph_passes(False)
    reference = fitted["memory"]
    print()
    print(f"BayesianLogisticRegression(method='mcmc', n_draws={n_draws}, n_burnin={n_burnin}, "
          f"n_chains=2), N = {len(y_local):,}, d = {X.shape[1]}, {X.numblocks[0]} chunks, "
          f"{repeats} rounds in turn; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"{'fit':>21} {'wall [s]':>9} {'gradients':>9} {'ms / gradient':>13} "
          f"{'vs memory':>9} {'means vs memory [sd]':>20}")
    for label, seconds in runs.items():
        est = fitted[label]
        ratios = np.array(seconds) / np.array(runs["memory"])
        print(f"{label:>21} {np.median(seconds):9.1f} {est.n_gradients_:9d} "
              f"{1e3 * np.median(seconds) / est.n_gradients_:13.1f} {np.median(ratios):9.2f} "
              f"{_sd(est, reference, reference.posterior_.std):20.1e}")
    print("wall: median over the rounds; vs memory: paired median ratio of the wall times")


def paired_fits(client, X, y, names, rounds, one_worker):
    """Fits in memory and on the cluster in turn: paired median of the wall-time ratios,
    CPU time of this process and the workers, load average; with ``one_worker``, again
    after every chunk has been gathered on one worker."""
    from threadpoolctl import threadpool_limits

    table = methods(200, 100)
    X_local, y_local = _local(client, X, y)
    pids = [os.getpid(), *client.run(os.getpid).values()]
    phases = ["chunks spread", "chunks on one worker"][:1 + one_worker]
    for phase in phases:
        if phase == "chunks on one worker":
            client.gather(client.compute([X, y]))  # a task on one worker fetches them all
            time.sleep(2)  # the scheduler drops the other copies
        print(f"\n{phase}: chunks held {chunks_held(client, X)}", flush=True)
        times = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in range(rounds):
                fitted = []  # the prepared chunks are released with the fits of a round
                for where in ("memory", "dask")[::1 if r % 2 == 0 else -1]:
                    for name in names:
                        start_cpu, start = _cpu_seconds(pids), time.perf_counter()
                        if where == "memory":
                            with threadpool_limits(limits=1):
                                fitted.append(table[name]().fit(X_local, y_local))
                        else:
                            fitted.append(table[name]().fit(X, y))
                        times.setdefault((name, where), []).append(
                            (time.perf_counter() - start, _cpu_seconds(pids) - start_cpu,
                             os.getloadavg()[0]))
        print(f"{'method':>10} {'memory [s]':>10} {'dask [s]':>9} {'ratio':>6} {'range':>10} "
              f"{'CPU ratio':>9} {'load':>9}")
        for name in names:
            mem, dask = (np.array(times[name, where]) for where in ("memory", "dask"))
            ratio = dask[:, 0] / mem[:, 0]
            print(f"{name:>10} {np.median(mem[:, 0]):10.2f} {np.median(dask[:, 0]):9.2f} "
                  f"{np.median(ratio):6.2f} {ratio.min():4.2f}-{ratio.max():4.2f} "
                  f"{np.median(dask[:, 1] / mem[:, 1]):9.2f} "
                  f"{dask[:, 2].min():4.1f}-{dask[:, 2].max():4.1f}", flush=True)
    print("ratio: paired median (and range) of dask over memory wall times; CPU: this "
          "process (client and scheduler) and both workers, over the in-memory fit's")


def main():
    global _MIXED_PRECISION, _SUBMITTED_PASS
    from skcoreset._inference import _common

    _MIXED_PRECISION = _common.ChunkedLogPosterior.mixed_precision
    _SUBMITTED_PASS = _dask._submitted_pass
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e6")
    parser.add_argument("--n", type=int, default=None, help="rows (default 1e7)")
    parser.add_argument("--d", type=int, default=D, help="features")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows per chunk")
    parser.add_argument("--memory-limit", default="4GiB", help="per worker")
    parser.add_argument("--pass-glm", action="store_true",
                        help="only PASS-GLM's pilot rows: dask vs memory, stream vs fit")
    parser.add_argument("--qnc", action="store_true",
                        help="only QuasiNewtonCoreset: dask vs memory (same rows, KL, time)")
    parser.add_argument("--nuts", action="store_true",
                        help="only NUTS on all rows: the cost of a gradient, dask vs memory")
    parser.add_argument("--passes", action="store_true",
                        help="only single passes: in memory and on the cluster with the "
                        "pass changes off and on, in turn")
    parser.add_argument("--mixed-passes", action="store_true",
                        help="only NUTS' gradient pass in float64 and single precision, in "
                        "memory and on the cluster, in turn")
    parser.add_argument("--nuts-fits", action="store_true",
                        help="only whole NUTS fits in memory and on the cluster (single and "
                        "double precision passes), in turn")
    parser.add_argument("--graph-passes", action="store_true",
                        help="--mixed-passes, --nuts-fits: also the cluster's passes built "
                        "as graphs (before they were submitted as futures), in turn")
    parser.add_argument("--rounds", type=int, default=5,
                        help="--passes, --mixed-passes, --paired: rounds in turn")
    parser.add_argument("--paired", action="store_true",
                        help="only fits in memory and on the cluster in turn (--methods, "
                        "default pass_glm laplace), paired ratios")
    parser.add_argument("--one-worker", action="store_true",
                        help="--paired: again with every chunk gathered on one worker")
    parser.add_argument("--gradients", type=int, default=30,
                        help="--nuts: gradients timed in turn, median of")
    parser.add_argument("--nuts-draws", type=int, default=200,
                        help="effective draws of the NUTS runs")
    parser.add_argument("--nuts-burnin", type=int, default=100,
                        help="warm-up iterations of the NUTS runs")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="the table's methods (default: all)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="in-memory and cluster fits timed in turn, best of (NUTS: once)")
    args = parser.parse_args()
    n = args.n or (1_000_000 if args.quick else 10_000_000)

    from distributed import Client, LocalCluster, wait
    from threadpoolctl import threadpool_limits

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           memory_limit=args.memory_limit, host="127.0.0.1",
                           dashboard_address=None)
    client = Client(cluster)
    if args.pass_glm:
        pass_glm_pilot(client)
        client.close()
        cluster.close()
        return
    X, y = make_rows(n, args.d, args.chunk_rows)
    client.wait_for_workers(2)  # before the rows are computed: on both workers
    X, y = client.persist([X, y])
    wait([X, y])
    held = {w: v / 2**20 for w, v in worker_anon_rss(client).items()}
    print(f"N = {n:,}, d = {args.d}, {X.numblocks[0]} chunks of {X.chunks[0][0]:,} rows "
          f"({X.nbytes / 2**30:.2f} GiB) persisted on 2 workers (1 thread each; chunks "
          f"held: {', '.join(map(str, chunks_held(client, X)))}); worker memory with the "
          f"rows: {', '.join(f'{v:.0f}' for v in held.values())} MiB", flush=True)

    warm_up(client, X, y)
    if args.mixed_passes or args.nuts_fits:
        if args.mixed_passes:
            mixed_pass_costs(client, X, y, args.rounds, args.graph_passes)
        if args.nuts_fits:
            nuts_fits(client, X, y, args.repeats, args.nuts_draws, args.nuts_burnin,
                      args.graph_passes)
        client.close()
        cluster.close()
        return
    if args.paired:
        paired_fits(client, X, y, args.methods or ["pass_glm", "laplace"], args.rounds,
                    args.one_worker)
        client.close()
        cluster.close()
        return
    if args.passes:
        pass_costs(client, X, y, args.rounds)
        client.close()
        cluster.close()
        return
    if args.qnc or args.nuts:
        if args.qnc:
            qnc_on_cluster(client, X, y, args.repeats)
        if args.nuts:
            nuts_on_cluster(client, X, y, args.gradients, args.nuts_draws, args.nuts_burnin)
        client.close()
        cluster.close()
        return
    table = methods(args.nuts_draws, args.nuts_burnin)
    if args.methods:
        table = {name: table[name] for name in args.methods}
    on_cluster = {}
    for name, make in table.items():  # memory and passes, before the client holds any rows
        on_cluster[name] = fit_on_cluster(client, X, y, make, n)
        print(f"  {name}: {on_cluster[name]['seconds']:.2f} s on the cluster", flush=True)
    X_local, y_local = _local(client, X, y)

    # then the in-memory fit and the cluster's again, in turn (the machine's load changes)
    in_memory = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in table.items():
            seconds = []
            for repeat in range(1 if name == "nuts" else args.repeats):
                with threadpool_limits(limits=1):
                    est, elapsed = _timed(lambda: make().fit(X_local, y_local))
                seconds.append(elapsed)
                if name == "nuts":
                    continue  # minutes a run: the cluster's first run stands
                _, elapsed = _timed(lambda: make().fit(X, y))
                on_cluster[name]["seconds"] = min(on_cluster[name]["seconds"], elapsed)
            in_memory[name] = (min(seconds), est)
            print(f"  {name}: {in_memory[name][0]:.2f} s in memory, "
                  f"{on_cluster[name]['seconds']:.2f} s on the cluster (best)", flush=True)
    client.close()
    cluster.close()

    print()
    print(f"N = {n:,}, d = {args.d}, {X.numblocks[0]} chunks: dask (2 workers x 1 thread) "
          f"against in memory (1 thread); load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"{'method':>12} {'dask [s]':>9} {'memory [s]':>10} {'ratio':>6} {'full':>5} "
          f"{'thinned':>7} {'median pass':>11} {'s / pass':>8} {'mem s / pass':>12} "
          f"{'pass ratio':>10} "
          f"{'client MiB':>10} {'worker MiB':>10} {'graph warn':>10} {'vs memory':>9}")
    for name in table:
        r = on_cluster[name]
        mem_seconds, mem_est = in_memory[name]
        full, thinned, median_pass = r["passes"]
        # the same steps in memory: time per pass is each fit's time over the same passes
        passes = max(full + thinned / 8, 1)
        per_pass, mem_per_pass = r["seconds"] / passes, mem_seconds / passes
        print(f"{name:>12} {r['seconds']:9.2f} {mem_seconds:10.2f} "
              f"{r['seconds'] / mem_seconds:6.2f} {full:5d} {thinned:7d} {median_pass:11.3f} "
              f"{per_pass:8.3f} "
              f"{mem_per_pass:12.3f} {per_pass / mem_per_pass:10.2f} "
              f"{r['client'] / 2**20:10.1f} {r['worker'] / 2**20:10.1f} {r['graphs']:10d} "
              f"{agreement(r['est'], mem_est):9.1e}")
    print("full / thinned: passes over all rows / over the every-8th-row start kept on the "
          "cluster; median pass: of a full pass on the cluster; s / pass: wall time over "
          "the passes (thinned ones counted as 1/8), on the cluster and in memory (the same "
          "steps); client / worker MiB: peak anonymous memory above the level before the "
          "fit; vs memory: the largest difference of the posterior means in sds, for the "
          "coreset of its weights (relative; same rows)")


if __name__ == "__main__":
    main()

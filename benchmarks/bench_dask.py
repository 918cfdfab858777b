"""Fitting rows that live on a dask cluster: Laplace, KL-proximal and PASS-GLM, against the
in-memory fit of the same rows.

Run by hand: ``python benchmarks/bench_dask.py [--quick] [--n N]``. A
``distributed.LocalCluster`` of two worker processes (one thread each, BLAS included;
``--memory-limit`` per worker, default 4 GiB) generates N = 1e7 rows (``--quick``: 1e6) of
d = 20 features chunk by chunk on the workers, where they stay (persisted; the client never
holds them): AR(0.5)-correlated Gaussian features and logistic labels with about 15 %
positives, in chunks of 250,000 rows (40 MB). Then, on the cluster:

* ``BayesianLogisticRegression(method=...).fit(X, y)`` for ``"laplace"``,
  ``"kl_proximal"`` and ``"pass_glm"``: wall time; the passes over the rows (each a task
  per chunk and a tree of tasks adding their sums; "full" passes read all N rows, "thinned"
  ones the every-8th-row start on the cluster) and the wall time per full pass;
* peak memory: of the client process (``RssAnon``, sampled every 10 ms, above its level
  before the fit) and of each worker (``RssAnon`` sampled every 50 ms, above its level with
  the persisted rows);
* the graph-size warnings dask raised during the fits (``Sending large graph``).

``--pass-glm`` instead measures PASS-GLM's pilot rows (``pass_radius="auto"``): on
``make_logistic_regression`` data (d = 10) it compares, in Laplace posterior sds, the fit of
N = 4e5 rows in 8 dask chunks on the cluster with the in-memory fit, ten ``partial_fit``
blocks of 2,000 rows with ``fit`` on the 20,000, and the accuracy estimate (with its bound,
two standard errors above) with the actual error at N = 2e4, 1e5 and 4e5.

The rows are then gathered and fitted in this process with one BLAS thread (the baseline:
what a user with the memory for them would run), in turn with the cluster fits
(``--repeats`` times each, best time), and each dask fit is compared with it: wall time
ratio, time per full pass (the cluster's scaled from its first run's passes), and the
largest difference of the posterior means in posterior sds. The machine has 2 cores,
shared with other work (the load average is printed): timings are noisy, and the cluster
has at most twice the in-memory fit's cores.
"""

import argparse
import os
import threading
import time
import warnings

import numpy as np

D = 20
CHUNK_ROWS = 250_000  # 40 MB of float64 features per chunk
METHODS = ("laplace", "kl_proximal", "pass_glm")


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


def make_rows(n, seed=0):
    """Lazy dask arrays of correlated features and logistic labels, chunk by chunk."""
    import dask.array as da

    chunk = min(CHUNK_ROWS, n)
    rng = da.random.default_rng(seed)
    # AR(0.5) correlation: x_j = 0.5 x_{j-1} + sqrt(0.75) z_j
    lag = 0.5 ** np.abs(np.subtract.outer(np.arange(D), np.arange(D)))
    chol = np.linalg.cholesky(lag)
    X = rng.standard_normal((n, D), chunks=(chunk, D)) @ chol.T
    coef = np.random.default_rng(1).normal(0.0, 1.0, D) / np.sqrt(D)
    proba = 1.0 / (1.0 + da.exp(-(X @ coef - 2.0)))
    y = (rng.random(n, chunks=chunk) < proba).astype(np.int8)
    return X, y


class PassLog:
    """The passes over rows on the cluster: rows read and wall time of each tree reduction
    (wraps ``DaskRows._reduce``, where every pass ends)."""

    def __init__(self):
        from skcoreset._backend import _dask

        self.module, self.entries = _dask, []
        self.original = _dask.DaskRows._reduce

    def __enter__(self):
        log, original = self.entries, self.original

        def reduce(rows, tasks, combine, finish=None):
            start = time.perf_counter()
            out = original(rows, tasks, combine, finish)
            log.append((rows.n, time.perf_counter() - start))
            return out
        self.module.DaskRows._reduce = reduce
        return self

    def __exit__(self, *exc):
        self.module.DaskRows._reduce = self.original

    def summary(self, n):
        full = [t for rows, t in self.entries if rows == n]
        thinned = [t for rows, t in self.entries if rows < n]
        return len(full), len(thinned), float(np.median(full)) if full else np.nan


def worker_anon_rss(client):
    return client.run(anon_rss)


def warm_up(client, X, y):
    """Import the package on the workers and fit once, untimed."""
    from skcoreset import BayesianLogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BayesianLogisticRegression(method="pass_glm").fit(X[:CHUNK_ROWS], y[:CHUNK_ROWS])


def fit_on_cluster(client, X, y, method, n):
    from skcoreset import BayesianLogisticRegression

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PeakSampler(anon_rss, 0.01) as here, \
                PeakSampler(lambda: worker_anon_rss(client), 0.05) as workers, \
                PassLog() as passes:
            start = time.perf_counter()
            est = BayesianLogisticRegression(method=method).fit(X, y)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e6")
    parser.add_argument("--n", type=int, default=None, help="rows (default 1e7)")
    parser.add_argument("--memory-limit", default="4GiB", help="per worker")
    parser.add_argument("--pass-glm", action="store_true",
                        help="only PASS-GLM's pilot rows: dask vs memory, stream vs fit")
    parser.add_argument("--repeats", type=int, default=2,
                        help="in-memory and cluster fits timed in turn, best of")
    args = parser.parse_args()
    n = args.n or (1_000_000 if args.quick else 10_000_000)

    from distributed import Client, LocalCluster
    from threadpoolctl import threadpool_limits

    from skcoreset import BayesianLogisticRegression

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           memory_limit=args.memory_limit, host="127.0.0.1",
                           dashboard_address=None)
    client = Client(cluster)
    if args.pass_glm:
        pass_glm_pilot(client)
        client.close()
        cluster.close()
        return
    X, y = make_rows(n)
    X, y = client.persist([X, y])
    client.wait_for_workers(2)
    from distributed import wait
    wait([X, y])
    held = {w: v / 2**20 for w, v in worker_anon_rss(client).items()}
    print(f"N = {n:,}, d = {D}, {X.numblocks[0]} chunks of {X.chunks[0][0]:,} rows "
          f"({X.nbytes / 2**30:.2f} GiB) persisted on 2 workers (1 thread each); worker "
          f"memory with the rows: {', '.join(f'{v:.0f}' for v in held.values())} MiB",
          flush=True)

    warm_up(client, X, y)
    on_cluster = {}
    for method in METHODS:  # memory and passes, before the client holds any rows
        on_cluster[method] = fit_on_cluster(client, X, y, method, n)
        print(f"  {method}: {on_cluster[method]['seconds']:.2f} s on the cluster", flush=True)
    X_local, y_local = client.gather(client.compute([X, y]))

    # then the in-memory fit and the cluster's again, in turn (the machine's load changes)
    in_memory = {}
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in METHODS:
            seconds = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                est = BayesianLogisticRegression(method=method).fit(X_local, y_local)
                seconds.append(time.perf_counter() - start)
                start = time.perf_counter()
                BayesianLogisticRegression(method=method).fit(X, y)
                on_cluster[method]["seconds"] = min(on_cluster[method]["seconds"],
                                                    time.perf_counter() - start)
            in_memory[method] = (min(seconds), est)
            print(f"  {method}: {in_memory[method][0]:.2f} s in memory, "
                  f"{on_cluster[method]['seconds']:.2f} s on the cluster (best)", flush=True)
    client.close()
    cluster.close()

    print()
    print(f"N = {n:,}, d = {D}: dask (2 workers x 1 thread) against in memory (1 thread); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'method':>12} {'dask [s]':>9} {'memory [s]':>10} {'ratio':>6} {'full':>5} "
          f"{'thinned':>7} {'s / pass':>8} {'mem s / pass':>12} {'client MiB':>10} "
          f"{'worker MiB':>10} {'graph warn':>10} {'mean diff [sd]':>14}")
    for method in METHODS:
        r = on_cluster[method]
        mem_seconds, mem_est = in_memory[method]
        full, thinned, per_pass = r["passes"]
        per_pass *= r["seconds"] / r["first_seconds"]  # the best run's passes
        # the same steps in memory: its time per pass is its time over the same passes
        mem_per_pass = mem_seconds / max(full + thinned / 8, 1)
        diff = np.max(np.abs(r["est"].posterior_.mean - mem_est.posterior_.mean)
                      / mem_est.posterior_.std)
        print(f"{method:>12} {r['seconds']:9.2f} {mem_seconds:10.2f} "
              f"{r['seconds'] / mem_seconds:6.2f} {full:5d} {thinned:7d} {per_pass:8.3f} "
              f"{mem_per_pass:12.3f} {r['client'] / 2**20:10.1f} {r['worker'] / 2**20:10.1f} "
              f"{r['graphs']:10d} {diff:14.2e}")
    print("full / thinned: passes over all rows / over the every-8th-row start kept on the "
          "cluster; mem s / pass: the in-memory time over the same passes (thinned ones "
          "counted as 1/8); client / worker MiB: peak anonymous memory above the level "
          "before the fit")


if __name__ == "__main__":
    main()

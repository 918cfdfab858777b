"""Scaling out: time and peak memory of coreset construction on memmaps and dask.

Run by hand: ``python benchmarks/bench_scale.py [--quick]``. Synthetic logistic data
(d = 10 float64 features, written chunk by chunk to ``.npy`` files in the temporary
directory and deleted afterwards) of N = 1e6 and 1e7 rows (``--quick``: 1e5 and 1e6) is
opened as ``np.memmap``; every case runs in a fresh process, which reports

* ``time``: wall time of ``fit`` (best of two runs below 1e7 rows and on dask);
* ``peak RSS``: the kernel's high-water mark of the process's resident memory (``VmHWM``;
  ``ru_maxrss`` would also carry the parent's peak across ``exec``). It counts the memmap's
  file pages the kernel keeps mapped while X is read, which are page cache, not
  allocations: it grows towards the file size however little the code allocates;
* ``peak anon``: the peak of anonymous memory (``RssAnon``, sampled every 5 ms) summed over
  the process and its joblib workers: what the computation allocates, interpreter and
  imports included (their baseline is printed first).

Cases: single-pass ``UniformCoreset`` and ``SensitivityCoreset`` (X read in row chunks);
GIGA by merge-reduce, ``StreamingCoreset(GIGACoreset(M=100, projection_dim=100),
block_size=100_000)`` (a single-pass GIGA on 1e7 rows would hold N x J projections, 8 GB
at J = 100, 40 GB at the default J = 500), serially with BLAS on one thread, serially with
BLAS on all cores, and with ``n_jobs=2`` joblib worker processes (joblib gives each one BLAS
thread); then on dask arrays of N = 1e6 whose chunks (100 000 rows) are read from the same
file by the workers of a ``distributed.LocalCluster`` with 1 and with 2 worker processes
(one thread each, BLAS included): the three coresets and
``BayesianLogisticRegression(method="pass_glm")``, timed after an untimed warm-up fit.

The machine has 2 cores, possibly shared with other work: speed-ups are bounded by 2.
dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which makes the large
temporaries of GIGA's projections page-fault on every allocation (a GIGA block takes about
1.6x longer than in a plain process); set ``distributed.nanny.pre-spawn-environ`` to change it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

D = 10
BLOCK_ROWS = 100_000
M = 100
PROJECTION_DIM = 100


# --------------------------------------------------------------------------------------------
# Data on disk
# --------------------------------------------------------------------------------------------
def write_data(directory, n, seed=0):
    """X (n, D) float64 and y (n,) int8 as .npy files, written in blocks of rows."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(D) / np.sqrt(D) * 2.0
    path_X, path_y = (os.path.join(directory, f"{name}_{n}.npy") for name in "Xy")
    X = np.lib.format.open_memmap(path_X, mode="w+", dtype=np.float64, shape=(n, D))
    y = np.lib.format.open_memmap(path_y, mode="w+", dtype=np.int8, shape=(n,))
    for start in range(0, n, 1_000_000):
        rows = slice(start, min(start + 1_000_000, n))
        X[rows] = rng.standard_normal((rows.stop - rows.start, D))
        y[rows] = rng.random(rows.stop - rows.start) < expit(X[rows] @ theta + 0.3)
    X.flush()
    y.flush()
    del X, y
    return path_X, path_y


def _load_rows(path, start, stop):
    """One dask chunk, read by the worker from the file (never through the client)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def dask_data(path_X, path_y):
    import dask
    import dask.array as da

    n = np.load(path_y, mmap_mode="r").shape[0]
    load = dask.delayed(_load_rows, pure=True)
    starts = range(0, n, BLOCK_ROWS)
    X = da.concatenate([da.from_delayed(load(path_X, s, min(s + BLOCK_ROWS, n)),
                                        shape=(min(BLOCK_ROWS, n - s), D), dtype=np.float64)
                        for s in starts])
    y = da.concatenate([da.from_delayed(load(path_y, s, min(s + BLOCK_ROWS, n)),
                                        shape=(min(BLOCK_ROWS, n - s),), dtype=np.int8)
                        for s in starts])
    return X, y


# --------------------------------------------------------------------------------------------
# Memory of a process tree
# --------------------------------------------------------------------------------------------
def _status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid):
    children = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children += [int(c) for c in f.read().split()]
    except OSError:
        return []
    return children + [g for c in children for g in _descendants(c)]


class AnonPeak:
    """Peak of RssAnon over this process and its descendants, sampled in a thread."""

    def __init__(self, interval=0.005):
        self.interval, self.peak_kb, self._stop = interval, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = os.getpid()
        while not self._stop.is_set():
            total = sum(_status_kb(p, "RssAnon:") for p in [me] + _descendants(me))
            self.peak_kb = max(self.peak_kb, total)
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


# --------------------------------------------------------------------------------------------
# One case, in a fresh process
# --------------------------------------------------------------------------------------------
def _coreset(method, n_jobs=None):
    from skcoreset import GIGACoreset, SensitivityCoreset, StreamingCoreset, UniformCoreset

    if method == "uniform":
        return UniformCoreset(M=M, random_state=0)
    if method == "sensitivity":
        return SensitivityCoreset(M=M, random_state=0)
    return StreamingCoreset(GIGACoreset(M=M, projection_dim=PROJECTION_DIM),
                            block_size=BLOCK_ROWS, n_jobs=n_jobs, random_state=0)


def _dask_estimator(method):
    from skcoreset import BayesianLogisticRegression, GIGACoreset

    if method == "pass_glm":
        return BayesianLogisticRegression(method="pass_glm")
    if method == "giga":  # merge-reduce over the dask chunks, shared Laplace weighting
        return GIGACoreset(M=M, projection_dim=PROJECTION_DIM, random_state=0)
    return _coreset(method)


def run_case(case):
    """Fit one configuration; return its measurements."""
    import skcoreset  # noqa: F401  (imports are part of the baseline, not of the case)

    if case["kind"] == "baseline":
        return dict(anon_mb=_status_kb(os.getpid(), "RssAnon:") / 1024)
    if case["kind"] == "memmap":
        X = np.load(case["X"], mmap_mode="r")
        y = np.load(case["y"])
        estimator = _coreset(case["method"], case.get("n_jobs"))
        with AnonPeak() as anon:
            start = time.perf_counter()
            estimator.fit(X, y)
            elapsed = time.perf_counter() - start
        return dict(time=elapsed, rss_mb=_status_kb(os.getpid(), "VmHWM:") / 1024,
                    anon_mb=anon.peak_kb / 1024, size=len(estimator.sample_indices_))
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=case["workers"], threads_per_worker=1,
                                           processes=True, host="127.0.0.1",
                                           dashboard_address=None)
        client = distributed.Client(cluster)
    times = {}
    try:
        X, y = dask_data(case["X"], case["y"])
        for method in case["methods"]:  # warm-up: imports on the workers, not timed
            _dask_estimator(method).fit(X[:1000], y[:1000])
        for method in case["methods"]:
            times[method] = np.inf
            for _ in range(2):  # best of two: the machine may be shared
                estimator = _dask_estimator(method)
                start = time.perf_counter()
                estimator.fit(X, y)
                times[method] = min(times[method], time.perf_counter() - start)
    finally:
        client.close()
        cluster.close()
    return dict(times=times, rss_mb=_status_kb(os.getpid(), "VmHWM:") / 1024)


def in_fresh_process(case, blas_threads=None):
    env = dict(os.environ)
    if blas_threads is not None:
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(blas_threads)
    out = subprocess.run([sys.executable, __file__, "--case", json.dumps(case)],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 1e5 and 1e6")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return
    sizes = [100_000, 1_000_000] if args.quick else [1_000_000, 10_000_000]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    baseline = in_fresh_process(dict(kind="baseline"))["anon_mb"]
    print(f"d = {D} float64 features, M = {M}, GIGA projection_dim = {PROJECTION_DIM}, "
          f"blocks/chunks of {BLOCK_ROWS} rows; interpreter + imports: "
          f"{baseline:.0f} MB anonymous memory\n")
    with tempfile.TemporaryDirectory() as directory:
        files = {}
        for n in sizes:
            start = time.perf_counter()
            files[n] = write_data(directory, n)
            print(f"wrote N = {n:.0e}: X {n * D * 8 / 1e6:.0f} MB on disk "
                  f"({time.perf_counter() - start:.1f} s)")
        print(f"\n{'N':>6s} {'method (memmap X)':34s} {'time [s]':>9s} {'peak RSS [MB]':>14s} "
              f"{'peak anon [MB]':>15s} {'rows':>5s}")
        results = {}
        cases = [("uniform", None, None, "UniformCoreset"),
                 ("sensitivity", None, None, "SensitivityCoreset"),
                 ("giga", 1, 1, "Streaming(GIGA) n_jobs=1, 1 thread"),
                 ("giga", 1, None, "Streaming(GIGA) n_jobs=1"),
                 ("giga", 2, None, "Streaming(GIGA) n_jobs=2")]
        for n in sizes:
            for method, n_jobs, blas_threads, label in cases:
                # best of two fresh processes below 1e7 rows: the machine may be shared
                r = min((in_fresh_process(dict(kind="memmap", X=files[n][0], y=files[n][1],
                                               method=method, n_jobs=n_jobs), blas_threads)
                         for _ in range(2 if n < 10_000_000 else 1)),
                        key=lambda run: run["time"])
                results[n, method, n_jobs, blas_threads] = r
                print(f"{n:6.0e} {label:34s} {r['time']:9.2f} {r['rss_mb']:14.0f} "
                      f"{r['anon_mb']:15.0f} {r['size']:5d}", flush=True)
            parallel = results[n, "giga", 2, None]["time"]
            print(f"{'':6s} {'  speed-up of n_jobs=2 over n_jobs=1':34s}"
                  f" {results[n, 'giga', 1, 1]['time'] / parallel:9.2f} (1 BLAS thread), "
                  f"{results[n, 'giga', 1, None]['time'] / parallel:.2f} (BLAS on 2 cores)")
        n_dask = 1_000_000
        methods = ["uniform", "sensitivity", "giga", "pass_glm"]
        dask_times = {w: in_fresh_process(dict(kind="dask", X=files[n_dask][0],
                                               y=files[n_dask][1], workers=w,
                                               methods=methods))["times"]
                      for w in (1, 2)}
        print(f"\ndask, N = {n_dask:.0e} ({n_dask // BLOCK_ROWS} chunks read by the workers)")
        print(f"{'method':34s} {'1 worker [s]':>13s} {'2 workers [s]':>14s} {'speed-up':>9s}")
        labels = dict(uniform="UniformCoreset (reservoir)",
                      sensitivity="SensitivityCoreset (3 passes)",
                      giga="GIGACoreset (merge-reduce)",
                      pass_glm="BayesianLogisticRegression pass_glm")
        for method in methods:
            one, two = dask_times[1][method], dask_times[2][method]
            print(f"{labels[method]:34s} {one:13.2f} {two:14.2f} {one / two:9.2f}")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

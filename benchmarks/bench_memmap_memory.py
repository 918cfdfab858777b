"""Peak memory of coreset constructors on a float32 ``np.memmap``, against its row count.

Run by hand: ``python benchmarks/bench_memmap_memory.py [--N 1e6 1e7] [--d 10]
[--configs ...] [--dir DIR]``.

For every row count N a float32 memmap of N x d standard normal features is written (once,
into ``--dir``, default the system temporary directory) with logistic labels held in memory
as int64, as a user would load them. Each configuration then runs in a fresh process: the
process opens the memmap and the labels, records its anonymous resident memory
(``RssAnon`` of ``/proc/self/status``: memory the process allocated, not the file's pages,
which the kernel can drop at will), fits the constructor, and samples ``RssAnon`` every
5 ms during the fit. The table shows the memory before the fit, the peak during it, and
the peak's growth from the smaller N: bounded memory means the peak grows by the labels
and weights (16 bytes per row: the encoded targets and the unit weights) and nothing else
proportional to N. One BLAS thread.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

CONFIGS = {
    "qnc-auto": "QuasiNewtonCoreset(random_state=0)",
    "qnc-1000": "QuasiNewtonCoreset(M=1000, random_state=0)",
    "qnc-1000-uniform": "QuasiNewtonCoreset(M=1000, candidates='uniform', random_state=0)",
    "uniform-1000": "UniformCoreset(M=1000, random_state=0)",
}


def rss_anon_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no RssAnon in /proc/self/status (Linux only)")


def write_data(directory, n, d, seed=0):
    """The memmap and labels of n rows (written chunk by chunk, once)."""
    path_X = Path(directory) / f"X_{n}_{d}.f32"
    path_y = Path(directory) / f"y_{n}_{d}.npy"
    if path_X.exists() and path_y.exists():
        return path_X, path_y
    coef = np.linspace(-1.0, 1.0, d)
    X = np.memmap(path_X, dtype=np.float32, mode="w+", shape=(n, d))
    y = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for start in range(0, n, 1_000_000):
        stop = min(start + 1_000_000, n)
        chunk = rng.standard_normal((stop - start, d))
        X[start:stop] = chunk
        y[start:stop] = rng.random(stop - start) < 1.0 / (1.0 + np.exp(-(chunk @ coef - 2)))
    X.flush()
    np.save(path_y, y)
    return path_X, path_y


def child(path_X, path_y, n, d, config):
    """Fit one configuration and print its memory as JSON (runs in a fresh process)."""
    from threadpoolctl import threadpool_limits

    import skcoreset  # noqa: F401  (imports counted in the baseline)
    from skcoreset import QuasiNewtonCoreset, UniformCoreset  # noqa: F401

    X = np.memmap(path_X, dtype=np.float32, mode="r", shape=(n, d))
    y = np.load(path_y)
    estimator = eval(CONFIGS[config])
    before = rss_anon_mib()
    peak = [before]
    done = threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], rss_anon_mib())
            time.sleep(0.005)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    peak[0] = max(peak[0], rss_anon_mib())
    print(json.dumps(dict(before=before, peak=peak[0], seconds=seconds,
                          size=len(estimator.sample_indices_))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--N", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--configs", nargs="+", default=["qnc-auto", "qnc-1000"],
                        choices=list(CONFIGS))
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path_X, path_y, n, d, config = args.child
        child(path_X, path_y, int(n), int(d), config)
        return
    sizes = [int(n) for n in args.N]
    paths = {n: write_data(args.dir, n, args.d) for n in sizes}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    print(f"float32 memmap, d = {args.d}; RssAnon in MiB (file pages not counted)")
    print(f"{'constructor':>17} {'N':>8} {'file MiB':>8} {'before':>7} {'peak':>7} "
          f"{'fit growth':>10} {'bytes/row':>9} {'fit s':>6} {'size':>5}")
    for config in args.configs:
        previous = None
        for n in sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(paths[n][0]), str(paths[n][1]),
                 str(n), str(args.d), config], env=env, capture_output=True, text=True,
                check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            growth = result["peak"] - result["before"]
            per_row = ("" if previous is None
                       else f"{(growth - previous[1]) * 2**20 / (n - previous[0]):9.1f}")
            print(f"{config:>17} {n:8.0e} {n * args.d * 4 / 2**20:8.0f} "
                  f"{result['before']:7.0f} {result['peak']:7.0f} {growth:10.0f} "
                  f"{per_row:>9} {result['seconds']:6.1f} {result['size']:5d}", flush=True)
            previous = (n, growth)


if __name__ == "__main__":
    main()

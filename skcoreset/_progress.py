"""Progress lines of long loops, in one format for every verbose output of the package.

A line reads ``[name] iter   40/1000  size 35  relative error 1.2e-03  elapsed 1.2s
ETA 28.8s``: the loop's label, the steps done out of the budget, the loop's own figures,
the time since the loop started and the time the rest of the budget would take at the
average pace so far. Long loops print one line every :data:`PRINT_INTERVAL` seconds
(:meth:`Progress.due` costs one clock read per step, nothing else); loops whose steps take
seconds anyway (SparseVI, quasi-Newton) print every step.
"""

import time

# Seconds between two progress lines of a long loop at verbose >= 1 (tests set it to 0).
PRINT_INTERVAL = 5.0


def format_seconds(seconds):
    """``"42.0s"``, ``"12m05s"`` or ``"3h07m"``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m{int(seconds % 60):02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


class Progress:
    """Timer and printer of the progress lines of one loop of known length.

    Parameters
    ----------
    name : str
        Label printed in brackets at the start of every line.
    total : int
        The budget of steps; the ETA is the time the remaining ``total - done`` steps would
        take at the average pace so far.
    verbose : int
        Nothing is printed unless it is at least 1.
    unit : str, default="iter"
        Word printed before ``done/total``.
    """

    def __init__(self, name, total, verbose, *, unit="iter"):
        self.name, self.total, self.unit = name, int(total), unit
        self.width = len(str(self.total))  # of done/total, and of counts in the details
        self.enabled = bool(verbose) and verbose >= 1
        self.interval = PRINT_INTERVAL  # read at construction, so tests can patch it
        self.start = time.perf_counter()
        self._next = self.start + self.interval

    def due(self):
        """Whether a line is due: verbose and :data:`PRINT_INTERVAL` seconds since the last."""
        return self.enabled and time.perf_counter() >= self._next

    def elapsed(self):
        """Seconds since the loop started."""
        return time.perf_counter() - self.start

    def line(self, done, details=""):
        """Print ``[name] unit done/total  details  elapsed ...  ETA ...`` (if verbose)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        eta = elapsed / done * max(self.total - done, 0) if done > 0 else float("nan")
        details = f"  {details}" if details else ""
        eta_text = format_seconds(eta) if eta == eta else "?"
        print(f"[{self.name}] {self.unit} {done:{self.width}d}/{self.total}{details}  "
              f"elapsed {format_seconds(elapsed)}  ETA {eta_text}", flush=True)
        self._next = now + self.interval

    def message(self, text):
        """Print ``[name] text`` (if verbose), e.g. the line that ends the loop."""
        if self.enabled:
            print(f"[{self.name}] {text}", flush=True)

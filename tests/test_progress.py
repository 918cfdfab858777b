"""The shared progress lines of long loops (skcoreset._progress): format, timing and ETA."""

import pytest

from skcoreset import _progress
from skcoreset._progress import Progress, format_seconds


@pytest.mark.parametrize("seconds, text", [(0.04, "0.0s"), (42.04, "42.0s"), (125.0, "2m05s"),
                                           (3599.0, "59m59s"), (7384.0, "2h03m")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_line_reports_elapsed_time_and_eta_of_the_budget(monkeypatch, capsys):
    clock = _Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    progress = Progress("loop", 1000, verbose=1)
    clock.now += 20.0
    progress.line(250, "size 7")
    # 250 steps in 20 s: the remaining 750 take 60 s at that pace
    assert capsys.readouterr().out == ("[loop] iter  250/1000  size 7  elapsed 20.0s  "
                                       "ETA 1m00s\n")
    progress.line(1000)
    assert capsys.readouterr().out.endswith("elapsed 20.0s  ETA 0.0s\n")
    progress.line(0)  # no step done yet: no pace, no estimate
    assert capsys.readouterr().out.endswith("ETA ?\n")


def test_due_every_print_interval_seconds(monkeypatch, capsys):
    clock = _Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    progress = Progress("loop", 10, verbose=1)
    assert not progress.due()
    clock.now += _progress.PRINT_INTERVAL
    assert progress.due()
    progress.line(3)
    assert not progress.due()  # the interval restarts at each line
    clock.now += _progress.PRINT_INTERVAL
    assert progress.due()


def test_quiet_when_not_verbose(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "PRINT_INTERVAL", 0.0)
    progress = Progress("loop", 10, verbose=0)
    assert not progress.due()
    progress.line(3, "x")
    progress.message("done")
    assert capsys.readouterr().out == ""

"""Restart intensity (OTP-style, N restarts within T seconds) with exponential backoff:
the plain object behind the Supervisor's restart decisions."""

import pytest

from crawlfw.core.control._supervision import ChildSpec, RestartIntensity


@pytest.mark.parametrize("deaths, expected", [
    # (monotonic second of each death), (delay before its restart, None: give up)
    ([0.0, 1.0, 2.0], [0.5, 1.0, 2.0]),
    ([0.0, 1.0, 2.0, 3.0], [0.5, 1.0, 2.0, None]),
    # restarts older than the window no longer count: the backoff starts over
    ([0.0, 1.0, 2.0, 11.5], [0.5, 1.0, 2.0, 1.0]),
    ([0.0, 11.0, 22.0, 33.0, 44.0], [0.5, 0.5, 0.5, 0.5, 0.5]),
    # a death refused is not recorded: the next one, once the window moved, may restart
    ([0.0, 1.0, 2.0, 3.0, 10.5], [0.5, 1.0, 2.0, None, 2.0]),
])
def test_intensity_and_backoff(deaths, expected):
    intensity = RestartIntensity(max_restarts=3, window_s=10.0, backoff_s=0.5)
    assert [intensity.restart(t) for t in deaths] == expected


def test_backoff_is_capped():
    intensity = RestartIntensity(max_restarts=10, window_s=100.0, backoff_s=1.0, backoff_max_s=5.0)
    assert [intensity.restart(float(t)) for t in range(6)] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def test_no_restarts_allowed():
    assert RestartIntensity(max_restarts=0, window_s=60.0).restart(0.0) is None


def test_negative_figures_are_refused():
    with pytest.raises(ValueError, match="max_restarts=-1"):
        RestartIntensity(max_restarts=-1, window_s=60.0)


def test_child_spec_defaults():
    spec = ChildSpec("engine")
    assert (spec.restart, spec.shutdown_timeout_s, spec.factory, spec.key) == (
        "temporary", 60.0, None, "")

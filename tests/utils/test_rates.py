import pytest

from crawlfw.core.control.rates import RateWindow


def test_no_rate_before_two_samples():
    window = RateWindow()
    assert window.per_minute("pages") == 0.0
    window.add(0.0, {"pages": 5})
    assert window.per_minute("pages") == 0.0


@pytest.mark.parametrize("samples, expected", [
    ([(0, 0), (30, 10)], 20.0),                       # 10 pages in 30 s
    ([(0, 0), (10, 10), (20, 20)], 60.0),
    # only the last minute counts: 0..60 s crawled 600 pages, 60..120 s 60
    ([(t, 10 * t) for t in range(0, 61)] + [(t, 600 + (t - 60)) for t in range(61, 121)],
     60.0),
])
def test_rate_per_minute_over_the_window(samples, expected):
    window = RateWindow(window_s=60.0, min_gap_s=1.0)
    for t, pages in samples:
        window.add(float(t), {"pages": pages})
    assert window.per_minute("pages") == pytest.approx(expected, rel=0.02)


def test_close_samples_replace_each_other_so_memory_is_bounded():
    window = RateWindow(window_s=60.0, min_gap_s=1.0)
    for i in range(10_000):
        window.add(i * 0.01, {"pages": i})  # 100 samples a second for 100 s
    assert len(window._samples) <= 62
    assert window.per_minute("pages") == pytest.approx(6000.0, rel=0.05)

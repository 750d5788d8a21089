import signal
import threading

import pytest

from crawlfw.utils.ossignal import install_shutdown_handlers, signal_names


def test_signal_names():
    assert signal_names[signal.SIGINT] == "SIGINT"
    assert signal_names[signal.SIGTERM] == "SIGTERM"
    assert all(name.startswith("SIG") and not name.startswith("SIG_")
               for name in signal_names.values())


@pytest.fixture
def restore_handlers():
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def handler(signum, frame):  # pragma: no cover - never delivered
    pass


def test_install_shutdown_handlers(restore_handlers):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    install_shutdown_handlers(handler)
    assert signal.getsignal(signal.SIGTERM) is handler
    assert signal.getsignal(signal.SIGINT) is handler


def test_keeps_custom_sigint_when_not_overriding(restore_handlers):
    def custom(signum, frame):  # pragma: no cover
        pass

    signal.signal(signal.SIGINT, custom)
    install_shutdown_handlers(handler, override_sigint=False)
    assert signal.getsignal(signal.SIGINT) is custom
    assert signal.getsignal(signal.SIGTERM) is handler


def test_not_main_thread_raises(restore_handlers):
    errors = []

    def run():
        try:
            install_shutdown_handlers(handler)
        except ValueError as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    assert len(errors) == 1

import gc
import logging
import threading

import pytest

from crawlfw import signals
from crawlfw.exceptions import DontCloseSpider
from crawlfw.signalmanager import Anonymous, Any, SignalManager


class Recorder:
    def __init__(self):
        self.calls = []

    def handler(self, spider):
        self.calls.append(spider)
        return "ok"

    def handler_all(self, **kwargs):
        self.calls.append(kwargs)


def test_exported_names():
    import crawlfw.signalmanager as mod

    assert set(mod.__all__) == {"SignalManager", "Any", "Anonymous"}


def test_signals_are_distinct_and_aliases_match():
    names = ["engine_started", "engine_stopped", "spider_opened", "spider_idle",
             "spider_closed", "spider_error", "request_scheduled", "request_dropped",
             "response_received", "response_downloaded", "item_scraped", "item_dropped"]
    objs = [getattr(signals, n) for n in names]
    assert len(set(map(id, objs))) == len(names)
    assert signals.stats_spider_opened is signals.spider_opened
    assert signals.stats_spider_closing is signals.spider_closed
    assert signals.stats_spider_closed is signals.spider_closed
    assert signals.item_passed is signals.item_scraped
    assert signals.request_received is signals.request_scheduled
    assert repr(signals.item_scraped) == "<signal item_scraped>"


def test_signal_pickles_to_same_object():
    import pickle

    assert pickle.loads(pickle.dumps(signals.spider_idle)) is signals.spider_idle


def test_default_sender():
    assert SignalManager().sender is Anonymous
    sender = object()
    assert SignalManager(sender).sender is sender


def test_receiver_gets_only_accepted_kwargs():
    sm = SignalManager()
    got = {}

    def only_item(item):
        got["only_item"] = item

    def item_and_spider(item, spider):
        got["both"] = (item, spider)

    def with_signal_and_sender(signal, sender):
        got["meta"] = (signal, sender)

    def no_args():
        got["none"] = True

    def kwonly(*, spider):
        got["kwonly"] = spider

    for f in (only_item, item_and_spider, with_signal_and_sender, no_args, kwonly):
        sm.connect(f, signals.item_scraped)
    sm.send_catch_log(signals.item_scraped, item="I", spider="S", response="R")
    assert got == {
        "only_item": "I",
        "both": ("I", "S"),
        "meta": (signals.item_scraped, Anonymous),
        "none": True,
        "kwonly": "S",
    }


def test_var_keyword_receiver_gets_everything():
    sm = SignalManager("me")
    rec = Recorder()
    sm.connect(rec.handler_all, signals.spider_opened)
    sm.send_catch_log(signals.spider_opened, spider="S")
    assert rec.calls == [{"spider": "S", "signal": signals.spider_opened, "sender": "me"}]


def test_results_in_connection_order():
    sm = SignalManager()

    def a():
        return 1

    def b():
        return 2

    sm.connect(a, signals.engine_started)
    sm.connect(b, signals.engine_started)
    assert sm.send_catch_log(signals.engine_started) == [(a, 1), (b, 2)]


def test_only_receivers_of_that_signal_are_called():
    sm = SignalManager()
    rec = Recorder()
    sm.connect(rec.handler, signals.spider_opened)
    assert sm.send_catch_log(signals.spider_closed, spider="S") == []
    assert rec.calls == []


def test_connect_twice_keeps_one():
    sm = SignalManager()
    rec = Recorder()
    sm.connect(rec.handler, signals.spider_opened)
    sm.connect(rec.handler, signals.spider_opened)
    sm.send_catch_log(signals.spider_opened, spider="S")
    assert rec.calls == ["S"]


def test_exception_is_logged_returned_and_others_still_run(caplog):
    sm = SignalManager()
    rec = Recorder()

    def broken(spider):
        raise ZeroDivisionError("boom")

    sm.connect(broken, signals.spider_opened)
    sm.connect(rec.handler, signals.spider_opened)
    with caplog.at_level(logging.ERROR, logger="crawlfw.signalmanager"):
        result = sm.send_catch_log(signals.spider_opened, spider="S")
    assert result[0][0] is broken
    assert isinstance(result[0][1], ZeroDivisionError)
    assert result[1][1] == "ok"
    assert rec.calls == ["S"]
    [record] = caplog.records
    assert record.getMessage().startswith("Error caught on signal handler: <function")
    assert record.exc_info[0] is ZeroDivisionError
    assert record.spider == "S"


def test_dont_log_exceptions_returned_silently(caplog):
    sm = SignalManager()

    def keep_open(spider):
        raise DontCloseSpider

    sm.connect(keep_open, signals.spider_idle)
    with caplog.at_level(logging.DEBUG):
        result = sm.send_catch_log(signals.spider_idle, spider="S", dont_log=DontCloseSpider)
    assert isinstance(result[0][1], DontCloseSpider)
    assert not [r for r in caplog.records if r.name == "crawlfw.signalmanager"]


def test_send_catch_log_deferred_is_synchronous_list():
    sm = SignalManager()

    def h(spider):
        return spider * 2

    sm.connect(h, signals.spider_closed)
    assert sm.send_catch_log_deferred(signals.spider_closed, spider="ab") == [(h, "abab")]


def test_bound_method_held_weakly():
    sm = SignalManager()
    rec = Recorder()
    sm.connect(rec.handler, signals.spider_opened)
    del rec
    gc.collect()
    assert sm.send_catch_log(signals.spider_opened, spider="S") == []
    # the dead entry is pruned on the next registry change
    sm.connect(lambda: None, signals.engine_started)
    assert signals.spider_opened not in sm._receivers


def test_bound_method_held_strongly_with_weak_false():
    sm = SignalManager()
    calls = []

    class Holder:
        def handler(self):
            calls.append(1)

    sm.connect(Holder().handler, signals.engine_started, weak=False)
    gc.collect()
    sm.send_catch_log(signals.engine_started)
    assert calls == [1]


def test_functions_and_lambdas_held_strongly():
    sm = SignalManager()
    calls = []
    sm.connect(lambda: calls.append("lambda"), signals.engine_started)
    gc.collect()
    sm.send_catch_log(signals.engine_started)
    assert calls == ["lambda"]


def test_slots_object_without_weakref_falls_back_to_strong():
    class Slotted:
        __slots__ = ()

        def handler(self):
            return "slotted"

    sm = SignalManager()
    sm.connect(Slotted().handler, signals.engine_started)
    assert [r for _, r in sm.send_catch_log(signals.engine_started)] == ["slotted"]


def test_disconnect():
    sm = SignalManager()
    rec = Recorder()
    sm.connect(rec.handler, signals.spider_opened)
    sm.disconnect(rec.handler, signals.spider_opened)
    assert sm.send_catch_log(signals.spider_opened, spider="S") == []
    # disconnecting something not connected is a no-op
    sm.disconnect(rec.handler, signals.spider_opened)


def test_disconnect_all():
    sm = SignalManager()
    recs = [Recorder(), Recorder()]
    for rec in recs:
        sm.connect(rec.handler, signals.spider_opened)
    other = Recorder()
    sm.connect(other.handler, signals.spider_closed)
    sm.disconnect_all(signals.spider_opened)
    assert sm.send_catch_log(signals.spider_opened, spider="S") == []
    assert len(sm.send_catch_log(signals.spider_closed, spider="S")) == 1


def test_sender_filtering():
    sm = SignalManager("crawler1")
    calls = []

    def own():
        calls.append("own")

    def anyone():
        calls.append("any")

    def other():
        calls.append("other")

    sm.connect(own, signals.engine_started)
    sm.connect(anyone, signals.engine_started, sender=Any)
    sm.connect(other, signals.engine_started, sender="crawler2")
    sm.send_catch_log(signals.engine_started)
    assert calls == ["own", "any"]
    calls.clear()
    sm.send_catch_log(signals.engine_started, sender="crawler2")
    assert calls == ["any", "other"]


def test_any_signal_receiver_gets_every_signal():
    sm = SignalManager()
    got = []

    def everything(signal):
        got.append(signal)

    sm.connect(everything, Any)
    sm.send_catch_log(signals.engine_started)
    sm.send_catch_log(signals.engine_stopped)
    assert got == [signals.engine_started, signals.engine_stopped]


@pytest.mark.parametrize("kwargs", [{"bogus": 1}])
def test_connect_rejects_unknown_kwargs(kwargs):
    with pytest.raises(TypeError, match="bogus"):
        SignalManager().connect(lambda: None, signals.engine_started, **kwargs)


def test_connect_rejects_non_callable():
    with pytest.raises(TypeError, match="callable"):
        SignalManager().connect("not callable", signals.engine_started)


def test_handlers_run_on_sending_thread():
    sm = SignalManager()
    seen = []

    def h():
        seen.append(threading.current_thread().name)

    sm.connect(h, signals.engine_started)
    t = threading.Thread(target=sm.send_catch_log, args=(signals.engine_started,),
                         name="sender-thread")
    t.start()
    t.join(10)
    assert seen == ["sender-thread"]


def test_concurrent_connect_and_send():
    """Threads connect receivers while others send: no receiver lost, no crash."""
    sm = SignalManager()
    n_threads, per_thread = 4, 50
    counter = []
    lock = threading.Lock()
    barrier = threading.Barrier(n_threads * 2)
    errors = []

    def make(i):
        def receiver():
            with lock:
                counter.append(i)
        return receiver

    receivers = [make(i) for i in range(n_threads * per_thread)]

    def connector(k):
        barrier.wait()
        for r in receivers[k * per_thread:(k + 1) * per_thread]:
            sm.connect(r, signals.item_scraped)

    def sender():
        barrier.wait()
        try:
            for _ in range(per_thread):
                sm.send_catch_log(signals.item_scraped)
        except Exception as e:  # pragma: no cover - would be the bug
            errors.append(e)

    threads = [threading.Thread(target=connector, args=(k,)) for k in range(n_threads)]
    threads += [threading.Thread(target=sender) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    counter.clear()
    sm.send_catch_log(signals.item_scraped)
    assert sorted(counter) == list(range(n_threads * per_thread))


def test_send_without_receivers_returns_empty_list():
    sm = SignalManager(sender=object())
    sig = object()
    assert sm.send_catch_log(sig, a=1) == []
    called = []

    def receiver(a):
        called.append(a)

    sm.connect(receiver, signal=sig)
    assert sm.send_catch_log(sig, a=2) == [(receiver, None)]
    sm.disconnect(receiver, signal=sig)
    assert sm.send_catch_log(sig, a=3) == []
    assert called == [2]

"""Something else in the process holding every free file descriptor, for the tests of
``EMFILE`` as a transient condition (``crawlfw.core._fds``): the one fd hog the test
spiders share (tests/crash/broadspider.py, tests/test_fds_transient.py's spider).

A spider calls :func:`hog` where the test wants the process to run out of descriptors
(its first response, a feed's batch, ``spider_opened``); it holds them for a number of
seconds, or until the test creates a file.
"""

import os
import sys
import threading
import time

__all__ = ["hog", "UNTIL_MAX_S"]

#: Most seconds ``until:<path>`` holds the descriptors when the file never comes.
UNTIL_MAX_S = 60.0


def hog(spec) -> int:
    """Take every free file descriptor of this process and give them back later.

    Prints ``HOGGING <n> fds`` to standard error once they are taken (tests wait for it).

    Args:
        spec: how long to hold them: seconds (a number, or its text), or
            ``"until:<path>"``: until that file exists (polled with ``stat``, which needs
            no descriptor), at most :data:`UNTIL_MAX_S` seconds.

    Returns:
        int: how many descriptors were taken.

    Raises:
        ValueError: ``spec`` is neither a number nor ``until:<path>``.
    """
    spec = str(spec)
    if spec.startswith("until:"):
        path, seconds = spec[len("until:"):], None
    else:
        path, seconds = None, float(spec)
    # glibc loads libgcc_s (a file) when a thread first exits: have one exit now, or a
    # thread ending while every descriptor is taken aborts the process.
    first = threading.Thread(target=lambda: None)
    first.start()
    first.join()
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    print(f"HOGGING {len(held)} fds", file=sys.stderr, flush=True)

    def give_back():
        for fd in held:
            os.close(fd)

    if path is None:
        threading.Timer(seconds, give_back).start()
    else:
        def wait_then_give_back():
            deadline = time.monotonic() + UNTIL_MAX_S
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.02)
            give_back()

        threading.Thread(target=wait_then_give_back, daemon=True).start()
    return len(held)

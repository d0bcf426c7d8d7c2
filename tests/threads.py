"""Running a test's work in threads that switch as often as the interpreter can (so that a
race between a check and an update, if there is one, shows)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable


def run_threads(work: Callable[[int], None], n: int = 8) -> None:
    """``work(0)`` .. ``work(n - 1)``, each in its own thread, with a switch interval of a
    microsecond (the interpreter's own is restored afterwards)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(before)

"""The event loop of ``apc serve`` keeps answering while a large body is parsed: the parse
runs in a thread, so one client's 20 MB of JSON cannot stall every other request."""

from __future__ import annotations

import threading
import time

from tests.serve.server import LOOPBACK, Server, httpx

pytestmark = LOOPBACK


def test_healthz_answers_while_a_large_body_is_parsed(server: Server) -> None:
    nested = ",".join(["[[[[[[[[1]]]]]]]]"] * 1_200_000)  # ~22 MB, seconds to parse
    body = '{"template": "x", "context": {"chatMetadata": {"x": [' + nested + "]}}}"
    answered: dict[str, float] = {}

    def big() -> None:
        started = time.monotonic()
        r = httpx.post(
            server.url + "/v1/compile",
            content=body.encode(),
            headers={"content-type": "application/json"},
            timeout=120,
        )
        assert r.status_code == 200, r.text[:500]
        answered["big"] = time.monotonic() - started

    thread = threading.Thread(target=big)
    thread.start()
    time.sleep(0.5)  # the body is sent and being parsed
    worst = 0.0
    with httpx.Client(base_url=server.url, timeout=60) as c:
        while thread.is_alive():
            started = time.monotonic()
            assert c.get("/healthz").status_code == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.1)
    thread.join()
    # the parse alone held the loop for most of the big request (3 s of 4.4 s) before
    assert worst < 0.4 * answered["big"], (worst, answered["big"])

"""Run journal events in TauriTavern's envelope, and a JSONL sink.

Internal: the public name of an event is :class:`compiler.Event`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from compiler._base.atomic import append_text

Level = Literal["debug", "info", "warn", "error"]


class Event(BaseModel):
    """``{seq, id, runId, timestamp, level, type, payload}``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    seq: int
    id: str
    run_id: str
    timestamp: str
    level: Level
    type: str
    payload: dict[str, Any] = Field(default_factory=dict)


def _uuid4_hex(random: bytes) -> str:
    """``uuid.UUID(bytes=random, version=4).hex``, made directly from 16 random bytes (the
    version and variant bits set as :class:`uuid.UUID` sets them)."""
    b = bytearray(random)
    b[6] = b[6] & 0x0F | 0x40
    b[8] = b[8] & 0x3F | 0x80
    return b.hex()


class Journal:
    """Collects the events of one compile, in order. Event ids are random UUIDs (version 4)
    from the operating system's random source, read for several events at once (a compile
    emits several)."""

    _IDS_AT_ONCE = 8

    def __init__(self, run_id: str | None = None) -> None:
        self._random = b""
        self.run_id = run_id or self._new_id()
        self.events: list[Event] = []

    def _new_id(self) -> str:
        if not self._random:
            self._random = os.urandom(16 * self._IDS_AT_ONCE)
        random, self._random = self._random[:16], self._random[16:]
        return _uuid4_hex(random)

    def emit(self, type_: str, level: Level = "info", **payload: Any) -> Event:
        event = Event(
            seq=len(self.events) + 1,
            id=self._new_id(),
            run_id=self.run_id,
            timestamp=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            level=level,
            type=type_,
            payload=payload,
        )
        self.events.append(event)
        return event


def append_jsonl(events: list[Event], path: Path) -> None:
    """Append events to a JSONL file, one object a line: only a regular file (or nothing),
    the rule every file the CLI writes follows (:func:`compiler._base.atomic.append_text`)."""
    lines = "".join(
        json.dumps(e.model_dump(by_alias=True), ensure_ascii=False) + "\n" for e in events
    )
    append_text(path, lines)

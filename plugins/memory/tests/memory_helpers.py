"""Shared constants and helpers for the memory tests (imported by name: the basename is unique).

``ok`` and ``err`` are the testing kit's ``assert_ok`` and ``assert_error``.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from junior_core import Actor, Conversation, ToolContext
from junior_core.testing import assert_error, assert_ok

POSTGRES_URL = os.environ.get("JUNIOR_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")

ALICE = Actor("slack", "T1", "UALICE")
BOB = Actor("slack", "T1", "UBOB")
PUBLIC = Conversation("slack", "T1", "CPUBLIC", thread_ts="1700000000.000100")
PUBLIC_OTHER_THREAD = Conversation("slack", "T1", "CGENERAL", thread_ts="1700000500.000200")
PRIVATE = Conversation("slack", "T1", "GPRIVATE", thread_ts="1700000100.000300", visibility="private")
PRIVATE_OTHER = Conversation("slack", "T1", "GPRIVATE", thread_ts="1700000200.000400", visibility="private")


def ctx(actor: Actor | None = ALICE, conversation: Conversation | None = PUBLIC, call: str | None = None) -> ToolContext:
    """A live context; a fresh tool_call_id unless one is given."""
    return ToolContext(actor=actor, conversation=conversation, tool_call_id=call or f"call-{uuid.uuid4().hex[:8]}")


ok = assert_ok
err = assert_error


class ScriptedExtractor:
    """An extractor that proposes exactly the candidates it was given, and counts its calls."""

    def __init__(self, candidates: list[Any] | None = None) -> None:
        self.candidates = list(candidates or [])
        self.calls = 0

    def extract(self, transcript: Any, context: Any) -> list[Any]:
        self.calls += 1
        return list(self.candidates)


class EnvExtractor(ScriptedExtractor):
    """Loaded through ``JUNIOR_MEMORY_EXTRACTOR=memory_helpers:EnvExtractor``."""

    def __init__(self) -> None:
        from junior_memory import Candidate

        super().__init__([Candidate("Prefers reviews before lunch", "preference", [0], about_speaker=True)])


def admin_conninfo() -> str:
    from sqlalchemy.engine import make_url

    return make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)


def schema_url(schema: str) -> str:
    """``POSTGRES_URL`` with every connection's search_path set to ``schema``."""
    from sqlalchemy.engine import make_url

    url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)

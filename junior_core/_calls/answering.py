"""A call answered end to end: prepared by ``Dispatch``, then answered at once (a search, a refusal) or run by
``Execution``; the sync and async faces every entry method of the runtime shares."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from junior_core._calls.dispatch import Answered, Dispatch, Prepared
from junior_core._calls.execution import Execution
from junior_core.context import ToolContext

_NO_CONTEXT = ToolContext()
Prepare = Callable[[Any, Any, ToolContext], Prepared | Answered]


class Calls:
    """The one path from a call to its answer, whichever entry method (searchTools, executeTool, a host's call)."""

    def __init__(self, dispatch: Dispatch, execution: Execution) -> None:
        self._dispatch = dispatch
        self._execution = execution

    def answer(self, prepare: Prepare, name: Any, arguments: Any, context: ToolContext | None) -> dict[str, Any]:
        step = prepare(name, arguments, context or _NO_CONTEXT)
        return step.answer if isinstance(step, Answered) else self._execution.run(step)

    async def aanswer(self, prepare: Prepare, kind: Any, name: Any, arguments: Any,
                      context: ToolContext | None) -> dict[str, Any]:
        """``answer`` without blocking the caller's loop: a preparation that may wait (a policy hook, a search)
        runs on a worker thread."""
        ctx = context or _NO_CONTEXT
        if self._dispatch.may_wait(kind):
            step = await asyncio.to_thread(prepare, name, arguments, ctx)
        else:
            step = prepare(name, arguments, ctx)
        return step.answer if isinstance(step, Answered) else await self._execution.arun(step)

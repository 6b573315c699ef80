"""``junior memory ...``: operator commands that work on the store directly (every scope, archived rows too)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any

import click

from junior_core.text import clip

if TYPE_CHECKING:
    from junior_memory.store import MemoryRecord, MemoryStore

__all__ = ["memory_group"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


_MOVE_REASONS = {
    "direct_message": "direct messages",
    "group_conversation": "group DMs and legacy private channels (G...)",
    "private_channel": "private-channel threads",
}


def _emit(data: Any, as_json: bool, text: Callable[[], str]) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text())


@contextmanager
def _errors() -> Iterator[None]:
    from junior_memory.semantic import ModelUnavailable
    from junior_memory.store import MemoryConfigError, MemorySchemaTooNew, MemoryUnavailable

    try:
        yield
    except ModelUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    except MemorySchemaTooNew as exc:
        raise click.ClickException(str(exc)) from None
    except MemoryUnavailable as exc:
        raise click.ClickException(f"{exc}. Check JUNIOR_MEMORY_URL and that the database server is running.") from exc
    except MemoryConfigError as exc:
        from junior_memory.config import missing_driver, resolve_url

        hint = missing_driver(resolve_url(), exc)
        raise click.ClickException(hint or f"{exc}. Fix JUNIOR_MEMORY_URL.") from None


def _line(record: MemoryRecord) -> str:
    state = f" [archived: {record.archive_reason}]" if record.archived_at else ""
    content = clip(" ".join(record.content.split()), 80)
    return f"{record.id[:12]}  {record.kind:<10} {record.scope:<12} {record.scope_key}{state}\n    {content}"


def _resolve(store: MemoryStore, ident: str) -> str:
    ids = store.resolve_id(ident)
    if not ids:
        raise click.ClickException(f"no memory with id {ident!r}")
    if len(ids) > 1:
        raise click.ClickException(f"id {ident!r} is ambiguous: {', '.join(ids)}")
    return ids[0]


def _parse_date(value: str) -> datetime:
    try:
        if len(value.strip()) == 10:
            return datetime.combine(date.fromisoformat(value.strip()), time(0), tzinfo=UTC)
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO-8601 date such as 2026-01-31") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def memory_group(get_store: Callable[[], MemoryStore]) -> click.Group:
    """The ``memory`` click group, bound to a store getter (the plugin's, so it honours its URL)."""

    @click.group("memory")
    def memory() -> None:
        """Inspect and administer long-term memory (all scopes; operator view)."""

    @memory.command("info")
    @json_option
    def info(as_json: bool) -> None:
        """Show where memory is stored, its schema revision, and which recall is active and why."""
        from junior_memory.config import default_path, display_url, missing_driver, resolve_url
        from junior_memory.engine import known_revisions
        from junior_memory.store import HEAD_REVISION, MemoryConfigError, MemorySchemaTooNew, MemoryUnavailable

        data: dict[str, Any] = {"url": display_url(resolve_url()), "default_path": str(default_path()),
                                "head_revision": HEAD_REVISION}
        try:
            store = get_store()
            data.update(url=store.display_url, backend=store.backend)
            data["revision"] = store.revision()
            data["reachable"] = True
            from junior_memory.semantic import describe_recall

            data.update(describe_recall(store.semantic))
            if data["revision"] is not None and data["revision"] not in known_revisions():
                data["error"] = str(MemorySchemaTooNew(data["revision"]))
        except MemoryUnavailable as exc:
            data.update(reachable=False, error=str(exc))
        except MemoryConfigError as exc:
            data.update(reachable=False, error=missing_driver(data["url"], exc) or str(exc))
        _emit(data, as_json, lambda: "\n".join(f"{key}: {value}" for key, value in data.items()))
        if not data["reachable"] or "error" in data:
            raise SystemExit(1)

    @memory.command("migrate")
    @json_option
    def migrate(as_json: bool) -> None:
        """Create or upgrade the memory tables (also done automatically on first use)."""
        with _errors():
            store = get_store()
            before = store.revision()
            last_event = store.last_event_id()
            after = store.migrate()
            moves = store.migration_moves(last_event)
        data = {"url": store.display_url, "from": before, "to": after, **moves}

        def text() -> str:
            line = f"{store.display_url}: {before or 'empty'} -> {after}"
            moved = moves["moved"]
            if not moved:
                return line + "; no memory changed scope"
            reasons = ", ".join(f"{n} from {_MOVE_REASONS.get(r, r)}" for r, n in moved.items())
            line += f"\nmoved {sum(moved.values())} memories into their channel, private to its members: {reasons}"
            if moves["merged"]:
                line += f"\nmerged {moves['merged']} duplicates into the copy kept (archived, reason merged)"
            return line

        _emit(data, as_json, text)

    @memory.command("list")
    @click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10000))
    @click.option("--archived", is_flag=True, help="Include archived memories.")
    @click.option("--scope", type=click.Choice(["personal", "conversation"]))
    @click.option("--kind", type=click.Choice(["preference", "procedure", "knowledge"]))
    @json_option
    def list_(limit: int, archived: bool, scope: str | None, kind: str | None, as_json: bool) -> None:
        """List memories in every scope, newest first."""
        with _errors():
            records = get_store().list_all(limit=limit, include_archived=archived, scope=scope, kind=kind)
        _emit(
            {"memories": [r.admin() for r in records]},
            as_json,
            lambda: "\n".join(_line(r) for r in records) or "no memories",
        )

    @memory.command("show")
    @click.argument("memory_id")
    @json_option
    def show(memory_id: str, as_json: bool) -> None:
        """Show one memory (id or unique prefix) with its event history."""
        with _errors():
            store = get_store()
            record = store.get(_resolve(store, memory_id))
            assert record is not None
            events = store.events(record.id)
        data = {**record.admin(), "events": events}

        def text() -> str:
            lines = [f"{key}: {value}" for key, value in record.admin().items()]
            lines.append("events:")
            lines += [f"  {e['created_at']} {e['event']} {e['reason'] or ''} by {e['actor_key']}" for e in events]
            return "\n".join(lines)

        _emit(data, as_json, text)

    @memory.command("history")
    @click.argument("memory_id")
    @json_option
    def history(memory_id: str, as_json: bool) -> None:
        """Show every version of a memory (id or unique prefix), oldest first: what replaced what, and when."""
        with _errors():
            store = get_store()
            versions = store.history(_resolve(store, memory_id))
            events = {v.id: store.events(v.id) for v in versions if not isinstance(v, str)}
        data = {"versions": [
            {"id": v, "purged": True} if isinstance(v, str) else {**v.admin(), "events": events[v.id]}
            for v in versions
        ]}

        def text() -> str:
            lines = []
            for v in versions:
                if isinstance(v, str):
                    lines.append(f"{v}  (purged)")
                    continue
                state = "current"
                if v.archived_at is not None:
                    state = f"archived {v.archived_at:%Y-%m-%d %H:%M} ({v.archive_reason})"
                lines.append(f"{v.id}  {v.created_at:%Y-%m-%d %H:%M}  {state}")
                lines.append(f"    {' '.join(v.content.split())}")
                if v.superseded_by:
                    lines.append(f"    replaced by {v.superseded_by}")
            return "\n".join(lines)

        _emit(data, as_json, text)

    @memory.command("reindex")
    @click.option("--batch", default=64, show_default=True, type=click.IntRange(1, 1024),
                  help="Memories embedded per model call.")
    @json_option
    def reindex(batch: int, as_json: bool) -> None:
        """Embed every current memory that has no vector yet (semantic recall; after installing it or a new model)."""
        with _errors():
            store = get_store()
            if store.semantic is None:
                raise click.ClickException(
                    "semantic recall is off: install junior-memory[semantic] and leave JUNIOR_MEMORY_EMBEDDING_MODEL "
                    "unset (or name a fastembed model)"
                )
            model = store.semantic.model
            embedded = store.reindex(batch=batch)
        _emit({"model": model, "embedded": embedded}, as_json, lambda: f"embedded {embedded} memories with {model}")

    @memory.command("forget")
    @click.argument("memory_id")
    @json_option
    def forget(memory_id: str, as_json: bool) -> None:
        """Archive one memory (id or unique prefix); it stays until purged."""
        with _errors():
            store = get_store()
            record = store.archive(_resolve(store, memory_id), reason="admin_removed", origin="api")
            assert record is not None
        _emit({"forgotten": record.admin()}, as_json, lambda: f"archived {record.id} ({record.archive_reason})")

    @memory.command("purge")
    @click.option("--archived-before", required=True, help="Delete memories archived before this ISO-8601 date.")
    @json_option
    def purge(archived_before: str, as_json: bool) -> None:
        """Delete archived memories for good."""
        cutoff = _parse_date(archived_before)
        with _errors():
            count = get_store().purge(archived_before=cutoff)
        _emit({"purged": count, "archived_before": cutoff.isoformat()}, as_json, lambda: f"purged {count} memories")

    @memory.command("make-private")
    @click.argument("channel_key")
    @json_option
    def make_private(channel_key: str, as_json: bool) -> None:
        """Move a private channel's workspace memories (written before channels were told apart) to it."""
        with _errors():
            try:
                counts = get_store().make_private(channel_key)
            except ValueError as exc:
                raise click.UsageError(str(exc)) from None
        _emit({"channel": channel_key, **counts}, as_json,
              lambda: f"moved {counts['moved']} memories to {channel_key} ({counts['merged']} merged)")

    @memory.command("stats")
    @json_option
    def stats(as_json: bool) -> None:
        """Count memories by state, scope, kind and origin."""
        with _errors():
            data = get_store().stats()

        def text() -> str:
            lines = [f"total: {data['total']}", f"events: {data['events']}"]
            for group in ("by_state", "by_scope", "by_kind", "by_origin"):
                parts = ", ".join(f"{k}={v}" for k, v in sorted(data[group].items()))
                lines.append(f"{group[3:]}: {parts or '-'}")
            return "\n".join(lines)

        _emit(data, as_json, text)

    return memory

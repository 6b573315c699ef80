"""A stdio server's keeper on Linux: every process the server starts, detached or not, ends with it.

The SDK ends a server's process group, and junior looks for leftovers by the ``JUNIOR_MCP_RUN`` variable; a
child that calls ``setsid()`` and clears its environment escapes both. So each stdio server is started by a
small Python process (``REAPER_CODE``, run with ``python -I -S -c``: the standard library only, no site
packages, a few milliseconds) that

- makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): a descendant whose parent exits is
  re-parented to it, not to init, so every descendant of the server stays in its tree whatever it does;
- asks for SIGTERM when junior's process dies (``PR_SET_PDEATHSIG``), even by SIGKILL;
- starts the server with its own stdin, stdout and stderr, closes its copies of them, and waits;
- when the server exits, or on SIGTERM, SIGINT or SIGHUP (the SDK's stop, or junior gone), ends every
  process left in its tree (SIGTERM, SIGKILL after ``grace``), reaps them, and exits with the server's status.

A cgroup would do the same, but needs a writable cgroup tree, which containers and desktops rarely give.

The keeper runs as the same user as the server, so the server can kill it. junior watches it (``KeeperWatch``):
once before the server is reported ready, at once when the keeper exits (a pidfd, Linux 5.3 and later) and
every ``WATCH_INTERVAL_S`` while the server runs, it checks that the keeper lives and records every process
under it (pid and start time). When the keeper is gone while the server runs, junior reports the server down
with the reason and ends at once (SIGKILL) the recorded processes still alive, every process holding the run's
marker, and every process under those. junior does not make itself a subreaper: it would adopt every orphan of
every process the host runs, and have to reap them.

Limits: a process started and cut loose (a child that exits after starting a detached grandchild) between
one check and the keeper's death is not recorded, nor found when the server has exited too; and when junior
itself is killed with SIGKILL, a live keeper ends the tree (the death signal), but a keeper the server killed
just before (the moment junior takes to end the tree; up to ``WATCH_INTERVAL_S`` without pidfds) leaves the
server's processes running.
"""

from __future__ import annotations

import os
import sys

__all__ = ["REAPER_CODE", "WATCH_INTERVAL_S", "KeeperWatch", "keeper_command", "supported"]

REAPER_CODE = r"""
import ctypes, os, signal, sys, time
parent, grace, argv = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != parent:  # junior died before the death signal was asked for
    sys.exit(1)
class Stop(Exception):
    pass
def stop(signum, frame):
    raise Stop()
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, stop)
def tree():
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != b"Z":
                children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found
def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
def end_all():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    deadline, sig = time.monotonic() + grace, signal.SIGTERM
    while True:
        reap()
        left = tree()
        if not left:
            return
        if time.monotonic() >= deadline:
            sig = signal.SIGKILL
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(0.02)
status = 1
try:
    try:
        server = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"{argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        sys.exit(127)
    os.close(0)
    os.close(1)
    while True:
        pid, raw = os.waitpid(-1, 0)
        if pid == server:
            status = os.waitstatus_to_exitcode(raw)
            break
except (Stop, ChildProcessError):
    pass
end_all()
sys.exit(status if status >= 0 else 128 - status)
"""


def supported() -> bool:
    """Whether servers can be kept this way here (Linux, with ``/proc``)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc")


def keeper_command(command: str, args: list[str], grace_s: float = 2.0) -> tuple[str, list[str]]:
    """``(command, args)`` that run ``command args`` under the keeper; ``command`` must be a path or on ``PATH``."""
    return sys.executable, ["-I", "-S", "-c", REAPER_CODE, str(os.getpid()), f"{grace_s:g}", command, *args]


# -- junior's side: the keeper watched, the server's tree recorded ------------------------------------------------
WATCH_INTERVAL_S = 1.0
"""How often junior checks that a server's keeper lives and records the processes under it."""


def _table() -> dict[int, tuple[int, int, bool]]:
    """Every process: ``pid -> (ppid, start time in clock ticks, zombie)`` from ``/proc``."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            table[int(entry)] = (int(fields[1]), int(fields[19]), fields[0] == b"Z")
    return table


def _below(table: dict[int, tuple[int, int, bool]], roots: set[int]) -> set[int]:
    """``roots`` and every process under them in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [pid for pid in roots if pid in table]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _marked(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read().split(b"\0")
    except OSError:  # gone, or another user's
        return False


class KeeperWatch:
    """One stdio server's keeper, watched from junior, and every process seen under it.

    The keeper is the child of junior whose environment holds the run's marker. A server can kill it (it runs
    as the same user): then the server and what it started are re-parented away from junior's tree, and a child
    that left the session and cleared its environment carries nothing of junior's. So while the keeper lives,
    each ``check`` records the processes under it (pid and start time, so a reused pid is never taken for one);
    ``end`` ends the recorded ones still alive, every marked one, and everything under them.
    """

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.keeper: tuple[int, int] | None = None
        self.seen: dict[int, int] = {}
        self._looked = False

    def check(self) -> bool:
        """Record the processes under the keeper; whether the keeper still runs."""
        table = _table()
        if not self._looked:
            self._looked = True
            me = os.getpid()
            for pid, (ppid, start, zombie) in table.items():
                if ppid == me and not zombie and _marked(pid, self.marker):
                    self.keeper = (pid, start)
                    break
        if self.keeper is None:
            return False
        pid, start = self.keeper
        entry = table.get(pid)
        if entry is None or entry[1] != start or entry[2]:
            return False
        for below in _below(table, {pid}) - {pid}:
            self.seen[below] = table[below][1]
        return True

    def targets(self) -> set[int]:
        """Processes to end: the recorded ones still alive, the marked ones, and every process under them."""
        table = _table()
        roots = {pid for pid, start in self.seen.items() if pid in table and table[pid][1] == start}
        me = os.getpid()
        roots |= {pid for pid in table if pid != me and _marked(pid, self.marker)}
        return {pid for pid in _below(table, roots) if pid != me and not table[pid][2]}

    def end(self, grace_s: float) -> int:
        """End every target (SIGTERM, SIGKILL after ``grace_s``), looking again for ones started meanwhile;
        how many were found."""
        import signal
        import time

        ended: set[int] = set()
        deadline = time.monotonic() + grace_s
        give_up = deadline + 5.0
        while time.monotonic() < give_up:
            left = self.targets()
            if not left:
                break
            sig = signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL
            for pid in left:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            ended |= left
            time.sleep(0.02)
        return len(ended)

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
"""

from __future__ import annotations

import os
import sys

__all__ = ["REAPER_CODE", "keeper_command", "supported"]

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

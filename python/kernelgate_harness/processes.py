"""The worker's descendant processes, for the check that a call left no work running after it
returned (outputs.settle; docs/harness.md, "What a faulty kernel cannot hide"): which live, what
they are called, whether one has the GPU open, and the worker made their reaper so that a double
fork's grandchild stays among them."""

import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
GPU_DEVICES = "/dev/nvidia"  # a process with a CUDA context holds /dev/nvidiactl and /dev/nvidiaN open


def become_subreaper():
    """Makes this process the reaper of its orphaned descendants (Linux: prctl(PR_SET_CHILD_SUBREAPER)):
    a grandchild whose parent exits (a double fork) is re-parented to this process instead of init,
    so descendants() still sees it. True when set. Orphans that end stay zombies of this process
    until it exits: they are not reaped here, so that no exit status is taken from kernel code that
    waits for a child of its own."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid):
    """(parent pid, state, name) from /proc/<pid>/stat; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    close = stat.rfind(")")
    fields = stat[close + 2:].split()
    if len(fields) < 2:
        return None
    return int(fields[1]), fields[0], stat[stat.find("(") + 1:close]


def _children_files():
    """Whether the kernel lists a task's children (/proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid):
    """The pids of `pid`'s children, from the children file of each of its threads (a child is
    listed under the thread that forked it, or the one it was re-parented to)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return kids


def descendants():
    """{pid: name} of the live processes descended from this one (zombies aside), read from /proc;
    empty where there is no /proc. Walks down from this process through the children files of its
    threads and of its descendants', instead of reading every process's stat: on the 2 shared CPUs
    of the tests (2026-11-26, timeit) 0.2 ms a call with 3 threads and no child and 0.9-1.1 ms with
    40 threads (a worker's intra-op pool), where scan_descendants() took 2.9-3.2 ms among 79
    processes and 6.0 ms among 113: the walk grows with the worker's threads and descendants, the
    scan with the machine's processes. Where the kernel lists no children, scan_descendants()."""
    if not _children_files():
        return scan_descendants()
    found, seen, frontier = {}, set(), [os.getpid()]
    while frontier:
        for pid in _children(frontier.pop()):
            st = _stat(pid)
            if st is None or pid in seen:
                continue
            seen.add(pid)
            if st[1] != "Z":
                found[pid] = st[2]
            frontier.append(pid)
    return found


def scan_descendants():
    """descendants() from the whole process table (every /proc/<pid>/stat): where no children file
    exists, and the reference the walk is tested against."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    parent = {}
    for d in entries:
        if not d.isdigit():
            continue
        st = _stat(d)
        if st is not None:
            parent[int(d)] = st
    found, frontier = {}, [os.getpid()]
    while frontier:
        p = frontier.pop()
        for pid, (pp, state, name) in parent.items():
            if pp == p and pid not in found:
                if state != "Z":
                    found[pid] = name
                frontier.append(pid)
    return found


def holds_open(pid, prefix=GPU_DEVICES):
    """Whether process `pid` has a file whose path starts with `prefix` open (by default a GPU's
    device files: a process with a CUDA context can write another's GPU memory through CUDA IPC);
    False when it cannot be read (gone, or another user's)."""
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return False
    for fd in names:
        try:
            if os.readlink(f"{fds}/{fd}").startswith(prefix):
                return True
        except OSError:
            continue
    return False

"""The worker's view of its descendant processes (kernelgate_harness/processes.py), which the check
after a call waits for (outputs.settle): the walk through the children files finds what the whole
process table says, a double fork's grandchild stays a descendant of a subreaper, and a process
holding a device file open is seen holding it."""

import os
import subprocess
import sys
import tempfile
import time

from conftest import REPO
from kernelgate_harness.processes import descendants, holds_open, scan_descendants


def wait_for(cond, timeout_s=10.0):
    until = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < until:
        time.sleep(0.02)
    return cond()


def test_the_children_walk_finds_what_the_process_table_says():
    # A child with two children of its own (grandchildren of this process).
    tree = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        assert wait_for(lambda: sum(n == "sleep" for n in scan_descendants().values()) == 2)
        walked, scanned = descendants(), scan_descendants()
        assert walked == scanned
        assert walked[tree.pid] == "sh" and sorted(n for n in walked.values() if n == "sleep") == ["sleep", "sleep"]
    finally:
        tree.kill()
        tree.wait()
    # The sleeps, orphaned, went to whatever reaps orphans here: not this process's any more.
    assert tree.pid not in descendants()


SUBREAPER = r"""
import os, sys, time
from kernelgate_harness.processes import become_subreaper, descendants
if sys.argv[1] == "subreaper":
    assert become_subreaper()
pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        time.sleep(5)
    os._exit(0)
os.waitpid(pid, 0)  # the child is gone; its child, an orphan, sleeps on
time.sleep(0.3)
print(sorted(descendants().values()))
"""


def run_double_fork(mode):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    out = subprocess.run([sys.executable, "-c", SUBREAPER, mode], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_double_fork_s_grandchild_stays_a_descendant_of_a_subreaper():
    # A forked process keeps the name of the program its parent ran (comm: 15 characters at most).
    assert run_double_fork("subreaper") == f"['{os.path.basename(sys.executable)[:15]}']"
    # Without it the orphan leaves the tree: what the worker saw before become_subreaper().
    assert run_double_fork("plain") == "[]"


def test_a_process_holding_a_file_open_is_seen_holding_it():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "nvidia0")
        open(path, "w").close()
        holder = subprocess.Popen(["sh", "-c", f"exec 3<'{path}'; sleep 30"])
        plain = subprocess.Popen(["sleep", "30"])
        try:
            assert wait_for(lambda: holds_open(holder.pid, os.path.join(d, "nvidia")))
            assert not holds_open(plain.pid, os.path.join(d, "nvidia"))
            assert not holds_open(plain.pid)  # no GPU device file open
        finally:
            for p in (holder, plain):
                p.kill()
                p.wait()
    assert not holds_open(holder.pid, os.path.join(d, "nvidia"))  # gone

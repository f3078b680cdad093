"""A supervised child process that answers in JSON lines, for a kernel module's work that may never
finish (docs/kernel-modules.md, "Work that may hang"): the child reads one JSON request a line on
stdin and writes JSON lines on stdout. It is started on first use and kept between requests (its
start, torch and a CUDA context, is paid once a process), killed when it gives no sign of life in
time, and killed with the process that started it. The lines mean what the caller says they mean
(`on_message`); a line that is not a JSON object is someone else's (a library printing to stdout)
and ignored."""

import atexit
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

# What on_message returns for a line: the child is working (its time starts again), or it has
# answered the request in full. Anything else (None) leaves the time running.
ALIVE = "alive"
DONE = "done"


@dataclass(frozen=True)
class Ended:
    """How a request ended without its answer, the child then killed: `how` is 'timeout' (no sign
    of life within the time), 'unwritable' (the request could not be sent: the child had ended)
    or 'eof' (the child ended); `exit_code` is the child's, `last_words` its last non-empty line
    on stderr since the request was sent, if any."""

    how: str
    exit_code: int
    last_words: str | None


# Run before the child's code: it dies with its parent (Linux), so a child stuck in a kernel does
# not outlive a worker that was killed.
DIE_WITH_PARENT = r"""
import ctypes
try:
    ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
except OSError:
    pass
del ctypes
"""


class JsonLinesChild:
    """`python -c code` as a child process, with the parent's sys.path as its PYTHONPATH, killed
    when its parent dies (DIE_WITH_PARENT)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.proc: subprocess.Popen[bytes] | None = None
        self.err: IO[bytes] | None = None

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.err = tempfile.TemporaryFile("w+b")
        argv = [sys.executable, "-c", DIE_WITH_PARENT + self.code]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env)
        atexit.register(self.stop)

    def stop(self) -> None:
        """Kills the child, if one runs, and closes its pipes; the next request starts a new one."""
        if self.proc is not None and self.err is not None:
            proc, err = self.proc, self.err
            self.proc, self.err = None, None
            proc.kill()
            proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()
            if proc.stdout is not None:
                proc.stdout.close()
            err.close()

    def request(self, msg: Any, timeout_s: float, on_message: Callable[[dict[str, Any]], str | None]) -> Ended | None:
        """Sends `msg` as one JSON line and hands each JSON object the child writes to
        `on_message` until it returns DONE (then None), or until the child gives no sign of life
        (ALIVE) within `timeout_s` of the request or of its last sign, or ends: then the child is
        killed and the Ended returned."""
        if self.proc is None:
            self.start()
        proc, err = self.proc, self.err
        assert proc is not None and proc.stdin is not None and proc.stdout is not None and err is not None
        err_from = err.seek(0, os.SEEK_END)
        deadline, ended, buf = time.monotonic() + timeout_s, None, b""
        try:
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()
        except OSError:
            ended = "unwritable"
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while ended is None:
                # raw reads of the pipe: a buffered readline could hold lines select() no longer sees
                chunk = os.read(proc.stdout.fileno(), 65536) if sel.select(timeout=max(0.0, deadline - time.monotonic())) else None
                if chunk is None:  # nothing within the time
                    ended = "timeout"
                    break
                if not chunk:
                    ended = "eof"
                *lines, buf = (buf + chunk).split(b"\n")
                for line in lines:
                    try:
                        got = json.loads(line)
                    except ValueError:
                        continue  # not the child's own line (a library printing to stdout)
                    if not isinstance(got, dict):
                        continue
                    what = on_message(got)
                    if what == ALIVE:
                        deadline = time.monotonic() + timeout_s
                    elif what == DONE:
                        ended = ""
        if not ended:
            return None
        # the child is gone or stuck: what it said last on stderr goes with the reason
        proc.kill()
        code = proc.wait()
        err.seek(err_from)
        said = [t.strip() for t in err.read().decode(errors="replace").splitlines() if t.strip()][-1:]
        self.stop()
        return Ended(ended, code, said[0] if said else None)

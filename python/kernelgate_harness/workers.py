"""The parent's handle on a worker process (worker.py): started lazily, asked over a pipe,
killed at a timeout or a stall, restarted on demand; and the words for how a worker ended."""

import multiprocessing
import os
import threading
import time

from . import worker as worker_module
from .device import EXIT_CONTEXT_LOST

# Importing torch and a kernel module in a fresh worker can take a while on a cold machine.
WORKER_START_TIMEOUT_S = 300

START_LOCK = threading.Lock()

# Workers asked to quit and not yet waited for (WorkerHandle.stop_later): their exit (the
# interpreter's and the CUDA context's teardown, gigabytes of the caching allocator freed) runs
# while the next kernel sets up and verifies; settle_exits() waits for them before anything is timed.
EXITING: list = []
EXITING_LOCK = threading.Lock()
# How long a worker asked to quit may take to exit before it is killed.
EXIT_WAIT_S = 10


class WorkerTimeout(Exception):
    def __init__(self, current, waited_s):
        super().__init__(current)
        self.current = current
        self.waited_s = waited_s


class WorkerDied(Exception):
    def __init__(self, current, exitcode):
        super().__init__(current)
        self.current = current
        self.exitcode = exitcode


class WorkerHandle:
    """One worker process for one kernel; started lazily, killed on a timeout, restarted on demand."""

    def __init__(self, manifest, options):
        self.manifest = {"name": manifest.name, "module": manifest.module, "tolerance": manifest.tolerance, "path": manifest.path}
        self.options = options
        self.mp = multiprocessing.get_context("spawn")
        self.proc = None
        self.ready = False  # the worker has imported the kernel module ("init" answered)
        self.init_pending = False  # "init" sent, its answer not yet read (begin_init)

    def start(self):
        self.ready = False
        self.init_pending = False
        self.conn, child = self.mp.Pipe()
        self.current = self.mp.Array("c", 256, lock=False)
        self.proc = self.mp.Process(target=worker_module.main, args=(child, self.current, self.manifest, self.options), daemon=True)
        visible = self.options.get("visible_device")
        with START_LOCK:
            # A lane's worker sees its GPU alone (lanes.py); the spawned process takes the
            # environment as it is at its start, so the lanes start their workers one at a time.
            saved = os.environ.get("CUDA_VISIBLE_DEVICES")
            if visible is not None:
                os.environ["CUDA_VISIBLE_DEVICES"] = visible
            try:
                self.proc.start()
            finally:
                if visible is not None:
                    if saved is None:
                        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
                    else:
                        os.environ["CUDA_VISIBLE_DEVICES"] = saved
        child.close()

    def what(self):
        """(variant, phase) the worker last marked; after a lost CUDA context, (variant, phase, error)."""
        raw = bytes(self.current.value).decode(errors="replace") if self.proc else ""
        parts = raw.split("\t")
        variant, phase = parts[0], parts[1] if len(parts) > 1 else ""
        return (variant, phase, parts[2]) if len(parts) > 2 else (variant, phase)

    def request(self, msg, timeout_s, stall_s=None):
        self.send(msg)
        return self.wait(timeout_s, stall_s)

    def send(self, msg):
        if self.proc is None or not self.proc.is_alive():
            self.start()
        self.current.value = b""
        self.conn.send(msg)

    def wait(self, timeout_s, stall_s=None):
        """The worker's reply, or WorkerDied / WorkerTimeout: past `timeout_s` in all, or, with
        `stall_s`, once the worker has stayed that long in one variant's one phase (its mark), so
        a variant that stalls in a case of many costs its own time-out, not all of theirs (a stalled
        tuning on the H100 held a case of 9 variants for 7 minutes, docs/notes/paired-ab.md run 19)."""
        deadline = time.monotonic() + timeout_s
        t0 = time.monotonic()
        mark, since = self.what(), t0
        while True:
            if self.conn.poll(0.05):
                try:
                    return self.conn.recv()
                except EOFError:
                    pass
            if not self.proc.is_alive():
                self.proc.join()
                current, code = self.what(), self.proc.exitcode
                self.proc = None
                raise WorkerDied(current, code)
            now = time.monotonic()
            if stall_s is not None:
                current = self.what()
                if current != mark:
                    mark, since = current, now
                elif now - since > stall_s:
                    self.kill()
                    raise WorkerTimeout(current, now - t0)
            if now > deadline:
                current = self.what()
                self.kill()
                raise WorkerTimeout(current, now - t0)

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def stop(self):
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send({"op": "quit"})
                self.proc.join(EXIT_WAIT_S)
            except (BrokenPipeError, OSError):
                pass
        self.kill()

    def stop_later(self):
        """stop() without waiting for the worker to exit: the process joins EXITING, which
        settle_exits() waits for (and kills what is still there after EXIT_WAIT_S). The handle
        forgets it; a later request starts a new worker."""
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send({"op": "quit"})
            except (BrokenPipeError, OSError):
                self.kill()
                return
            with EXITING_LOCK:
                EXITING.append(self.proc)
            self.proc = None
            return
        self.kill()

    def is_alive(self):
        return self.proc is not None and self.proc.is_alive()


def settle_exits():
    """Waits for the workers stop_later() let go, each EXIT_WAIT_S at most, then killed: before
    anything is timed (a process tearing down its CUDA context beside a timed one is noise in its
    samples) and before the harness writes its last results."""
    while True:
        with EXITING_LOCK:
            if not EXITING:
                return
            proc = EXITING.pop(0)
        proc.join(EXIT_WAIT_S)
        if proc.is_alive():
            proc.kill()
            proc.join()


def begin_init(handle):
    """Starts the worker of `handle` (a WorkerHandle, or what has its send/wait/request) and asks it
    to import its kernel module ("init") without waiting: finish_init reads the answer. Nothing
    when it is ready or already asked. The harness starts the next kernel's workers so while
    nothing is timed (cli.Harness.run)."""
    if getattr(handle, "init_pending", False) or (handle.is_alive() and handle.ready):
        return
    handle.send({"op": "init"})
    handle.init_pending = True


def finish_init(handle, timeout_s):
    """The answer to "init" (begin_init's, or asked now): {"op": "ready"}, the handle then ready, or
    {"op": "fatal", …}; WorkerDied or WorkerTimeout as WorkerHandle.wait."""
    if getattr(handle, "init_pending", False):
        try:
            reply = handle.wait(timeout_s)
        finally:
            handle.init_pending = False
    else:
        reply = handle.request({"op": "init"}, timeout_s)
    if reply["op"] == "ready":
        handle.ready = True
    return reply


def exit_description(code, current=()):
    if code == EXIT_CONTEXT_LOST:
        error = current[2] if len(current) > 2 else "a sticky CUDA error"
        return f"the CUDA context was lost: {error}"
    if code is None:
        return "unknown exit status"
    if code < 0:
        import signal

        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"

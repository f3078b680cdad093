"""What a kernel module could patch to lie to the harness, and the harness's own hold on it.

The worker takes a snapshot (Guard) after it imported torch and its own parts and before it imports
the kernel module: every function, class and method of the namespaces the timing, the statistics
and the checks rely on (the timer: time, torch.cuda's events, streams, synchronize and graphs; the
statistics: the harness's own modules, math, statistics, builtins; the checks: torch.Tensor and the
few torch functions the verification calls; the pipe to the parent). It also keeps its own
references to the timing primitives (Primitives), so a patch cannot reach the timer even before it
is seen. After the import, after each variant's set-up, after each verification run and after
each timed sample the snapshot is compared by identity: what was replaced (or added to a class over
a method it inherits) is restored and named, and the variant that was running fails with kind
`tampering`. The other variants then run on the originals, so their timings are unaffected."""

import builtins
import math
import multiprocessing.connection
import multiprocessing.reduction
import statistics
import sys
import time

ERROR_KIND = "tampering"
# torch's top-level functions the verification calls (the kernels' own calls, torch.matmul and
# the like, are theirs: a module that breaks them breaks itself, and the culprit search names it).
TORCH_CHECKED = ("isnan", "isfinite", "isinf", "zeros_like", "empty", "arange", "equal", "Tensor")
TORCH_C_CHECKED = ("_cuda_synchronize", "_CudaEventBase", "_CudaStreamBase", "_CUDAGraph")
# A class's entries that change on their own (caches, docs) and say nothing about behaviour.
SKIPPED_CLASS_KEYS = {"__dict__", "__weakref__", "__doc__", "__module__", "__abstractmethods__", "_abc_impl", "__parameters__"}


def _is_behaviour(value):
    """Module entries compared: functions, classes, modules, any callable (not data: torch.cuda's
    `_initialized` flag changes on its own when CUDA starts)."""
    return callable(value) or isinstance(value, type(sys))


class Watched:
    """One namespace: a module (its callables and submodules) or a class (its own entries, and no
    new entry over one it inherits)."""

    def __init__(self, label, ns):
        self.label = label
        self.ns = ns
        self.is_class = isinstance(ns, type)
        items = vars(ns).items()
        if self.is_class:
            self.entries = {k: v for k, v in items if k not in SKIPPED_CLASS_KEYS}
        else:
            self.entries = {k: v for k, v in items if _is_behaviour(v)}
        self.keys = len(vars(ns))

    def changed(self):
        """[(dotted name, original or None when the entry is new)], restoring nothing."""
        d = vars(self.ns)
        out = [(f"{self.label}.{k}", v) for k, v in self.entries.items() if d.get(k, _MISSING) is not v]
        if self.is_class and len(d) != self.keys:
            inherited = set()
            for base in self.ns.__mro__[1:]:
                inherited.update(vars(base))
            out += [(f"{self.label}.{k}", None) for k in d if k not in self.entries and k in inherited and k not in SKIPPED_CLASS_KEYS]
        return out

    def restore(self, name, original):
        key = name[len(self.label) + 1 :]
        try:
            if original is None:
                delattr(self.ns, key)
            else:
                setattr(self.ns, key, original)
        except (AttributeError, TypeError):
            pass


class _Missing:
    pass


_MISSING = _Missing()


class Primitives:
    """The timer's primitives as they were before any kernel module was imported: the harness
    times through these, never through names a module could rebind."""

    def __init__(self, torch):
        self.perf_counter = time.perf_counter
        self.cuda = bool(torch.cuda.is_available())
        if self.cuda:
            event = torch.cuda.Event
            self.Event = event
            self.record = event.record
            self.elapsed_time = event.elapsed_time
            self.event_synchronize = event.synchronize
            self.synchronize = torch.cuda.synchronize
            self.sleep = torch.cuda._sleep

    def event(self):
        return self.Event(enable_timing=True)


class LivePrimitives:
    """The timer looked up at each use: only for the worker's steps driven without a Guard (the
    tests' stubs); the worker itself always has one."""

    def __init__(self, torch):
        self.torch = torch
        self.perf_counter = time.perf_counter

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, ev):
        ev.record()

    def elapsed_time(self, start, end):
        return start.elapsed_time(end)

    def event_synchronize(self, ev):
        ev.synchronize()

    def synchronize(self):
        self.torch.cuda.synchronize()


def prims_of(worker):
    """The worker's timer: its Guard's primitives (LivePrimitives for a stub without one)."""
    guard = getattr(worker, "guard", None)
    return guard.prims if guard is not None else LivePrimitives(worker.torch)


class Guard:
    """The snapshot of what the harness relies on, and its check (docs/harness.md, "tampering")."""

    def __init__(self, torch):
        self.prims = Primitives(torch)
        spaces = [("time", time), ("math", math), ("statistics", statistics), ("builtins", builtins)]
        cuda = torch.cuda
        spaces += [("torch.cuda", cuda)]
        for sub in ("graphs", "streams"):
            if hasattr(cuda, sub):
                spaces.append((f"torch.cuda.{sub}", getattr(cuda, sub)))
        for cls in ("Event", "Stream", "CUDAGraph"):
            if isinstance(getattr(cuda, cls, None), type):
                spaces.append((f"torch.cuda.{cls}", getattr(cuda, cls)))
        for name in TORCH_C_CHECKED:
            obj = getattr(torch._C, name, None)
            if isinstance(obj, type):
                spaces.append((f"torch._C.{name}", obj))
        spaces.append(("torch.Tensor", torch.Tensor))
        spaces.append(("multiprocessing.connection.Connection", multiprocessing.connection.Connection))
        spaces.append(("multiprocessing.reduction.ForkingPickler", multiprocessing.reduction.ForkingPickler))
        for mod_name, mod in sorted(sys.modules.items()):
            if mod is None or not (mod_name == "kernelgate_harness" or mod_name.startswith("kernelgate_harness.")):
                continue
            spaces.append((mod_name, mod))
            for key, value in vars(mod).items():
                if isinstance(value, type) and getattr(value, "__module__", "") == mod_name:
                    spaces.append((f"{mod_name}.{key}", value))
        self.spaces = [Watched(label, ns) for label, ns in spaces]
        self.singles = [(f"torch.{n}", torch, n, getattr(torch, n)) for n in TORCH_CHECKED if hasattr(torch, n)]
        self.singles += [(f"torch._C.{n}", torch._C, n, getattr(torch._C, n)) for n in TORCH_C_CHECKED if hasattr(torch._C, n)]
        self.singles += [(f"torch.cuda.{n}", cuda, n, getattr(cuda, n)) for n in ("graphs", "streams") if hasattr(cuda, n)]
        self.modules = {name: sys.modules[name] for name in [label for label, ns in spaces if isinstance(ns, type(sys))] if name in sys.modules}

    def check(self):
        """The dotted names of everything replaced since the snapshot (sorted), each restored."""
        found = []
        for w in self.spaces:
            for name, original in w.changed():
                w.restore(name, original)
                found.append(name)
        for name, owner, key, original in self.singles:
            if getattr(owner, key, _MISSING) is not original:
                try:
                    setattr(owner, key, original)
                except (AttributeError, TypeError):
                    pass
                found.append(name)
        for name, mod in self.modules.items():
            if sys.modules.get(name) is not mod:
                sys.modules[name] = mod
                found.append(f"sys.modules[{name!r}]")
        return sorted(set(found))

    def check_instance(self, obj, label):
        """Names of `obj`'s own attributes that shadow a method of its class (a worker's step
        replaced on the instance), each removed."""
        cls_attrs = {}
        for base in reversed(type(obj).__mro__):
            cls_attrs.update(vars(base))
        found = []
        for key in list(vars(obj)):
            if key in cls_attrs and callable(cls_attrs[key]) and not key.startswith("__"):
                del vars(obj)[key]
                found.append(f"{label}.{key}")
        return found


def tampering_message(names, when):
    """The message of a tampering error: what was replaced, and when."""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    verb = "was" if len(names) == 1 else "were"
    return (
        f"tampering: {shown} {verb} replaced {when}; the harness restored the original{'s' if len(names) > 1 else ''} "
        "(the timer, the statistics and the checks are the harness's own: a kernel that patches them gets no result)"
    )


def tampering_error(names, when):
    return {"kind": ERROR_KIND, "message": tampering_message(names, when)}

"""The next kernel's workers started ahead (one GPU, no lanes): while the harness times nothing,
so that their seconds of start-up (torch, the kernel module) overlap untimed work instead of adding
to the run. As the current kernel starts when it times nothing (--no-timing, or a paired run where
each of its variants is identical in base and head and none is its kernel's A/A control), else
before its tails; never while a variant is timed, where a process importing torch beside the timed
one would be noise in its samples (docs/harness.md, "Process model")."""

from .workers import WorkerHandle, begin_init


class Ahead:
    def __init__(self, harness, manifests):
        self.harness = harness
        self.manifests = list(manifests)
        self.started = {}  # kernel name -> (its worker, its base revision's or None)

    def take(self, i, first):
        """Kernel i's workers: those started ahead, else a new worker (`first`, the environment
        probe's, for kernel 0) and None for the base (Harness.run_kernel makes it)."""
        m = self.manifests[i]
        return self.started.pop(m.name, None) or (first if i == 0 else WorkerHandle(m, self.harness.options()), None)

    def times_nothing(self, m, names):
        """Whether kernel m's variants `names` are verified only in this run."""
        h = self.harness
        if h.args.no_timing:
            return True
        bm = (h.base_manifests or {}).get(m.name)
        if bm is None or not names:
            return False
        in_base = {v["name"] for v in bm.variants}
        return all((m.name, v) in h.identical and v in in_base and (m.name, v) not in h.pairing.controls for v in names)

    def start_after(self, i):
        """Starts the workers of kernel i + 1 (its own, and its base revision's in a paired run whose
        base has it), asking them to import their kernel module, not awaited; once."""
        if i + 1 >= len(self.manifests) or self.manifests[i + 1].name in self.started:
            return
        nxt = self.manifests[i + 1]
        pair = (WorkerHandle(nxt, self.harness.options()), self.harness.base_worker(nxt, None, quiet=True))
        for handle in pair:
            if handle is not None:
                begin_init(handle)
        self.started[nxt.name] = pair

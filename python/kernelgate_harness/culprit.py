"""A case's variants in one worker, and the culprit search when that worker dies, hangs or loses
its CUDA context: each variant not yet done then runs alone, in a fresh worker, the suspects
first, until the one that fails alone the way the group failed is found."""

from typing import Any

from .document import Document
from .progress import say
from .workers import EXIT_CONTEXT_LOST, WORKER_START_TIMEOUT_S, WorkerDied, WorkerTimeout, exit_description, finish_init, settle_exits


class CaseRunner:
    def __init__(self, seeds: int, timing: bool, first_warmup_s: float, document: Document) -> None:
        self.seeds = seeds
        self.timing = timing
        self.first_warmup_s = first_warmup_s
        self.document = document

    def run_case(self, handle: Any, m: Any, case: Any, variants: list[str], timeout_s: float, timing: bool = True,
                 first_seed_only: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
        """Records by variant. The variants run together in one worker; when it dies, hangs or
        loses its CUDA context, the variant it was running is not taken for the culprit (GPU
        errors surface late, in whatever ran next): each variant not yet done then runs alone, in
        a fresh worker, the suspects first (suspect_order). The culprit is the first to fail alone the way the
        group failed (died, or hung): the others keep what they did alone, and once it is found
        the rest run together again. A variant that fails alone in another way (a timeout of its
        own while the group had died) keeps that verdict, and the search goes on. `first_seed_only`:
        the variants verified on the first seed only (identical tails, tails.first_seed_only)."""
        records: dict[str, dict[str, Any]] = {}
        pending = list(variants)
        alone: dict[str, Any] | None = None  # after a group failed: how, and the reason's suffix, while looking for the culprit
        while pending:
            group = pending[:1] if alone else pending
            deadline_s = self.case_deadline_s(timeout_s, len(group))
            try:
                if not (handle.is_alive() and handle.ready):
                    reply = finish_init(handle, WORKER_START_TIMEOUT_S)
                    if reply["op"] == "fatal":
                        for v in pending:
                            records[v] = {"status": "error", "error": reply["error"]}
                        return records
                job: dict[str, Any] = {"op": "case", "params": case.params, "variants": group, "seeds": list(range(self.seeds))}
                if not timing:
                    job["timing"] = False  # verified only (the tails, tails.py)
                if any(v in first_seed_only for v in group):
                    job["first_seed_only"] = [v for v in group if v in first_seed_only]
                if timing and self.timing:
                    settle_exits()  # the last kernel's workers gone before anything is timed
                reply = handle.request(
                    job,
                    deadline_s,
                    stall_s=self.case_deadline_s(timeout_s, 1),
                )
            except (WorkerTimeout, WorkerDied) as e:
                pending, alone = self._failed(e, m, case, variants, group, pending, alone, deadline_s, records)
                continue
            if reply["op"] == "fatal":
                for v in group:
                    records[v] = {"status": "error", "error": reply["error"]}
            else:
                records.update(reply["records"])
                self.document.add_stage_seconds(reply["phase_s"])
            pending = [v for v in pending if v not in group]
            if alone:
                # Alone means in a worker of its own: what one suspect leaves behind (a patched
                # module, a stream, the RNG) must not fail the next one and be blamed on it.
                handle.kill()
        if alone:
            message = (
                f"{m.name} {case.id}: {alone['what']} with the case's variants together, and no variant did so run alone: "
                "a fault that shows only next to another variant; each kept what it did alone"
            )
            say(message)
            self.document.diag("warning", "culprit.not-found", message)
        return records

    @staticmethod
    def _failed(e: WorkerTimeout | WorkerDied, m: Any, case: Any, variants: list[str], group: list[str], pending: list[str],
                alone: dict[str, Any] | None, deadline_s: float, records: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, Any] | None]:
        """A group's worker hung or died: the search starts (several variants) or a variant run
        alone gets its record (and the search ends when it failed the way the group did).
        Returns the pending variants and the search's state."""
        culprit, phase = e.current[0], e.current[1] or "start-up"
        hung = isinstance(e, WorkerTimeout)
        exitcode = None if isinstance(e, WorkerTimeout) else e.exitcode
        verb = "hung" if hung else f"died ({exit_description(exitcode, e.current)})"
        if len(group) > 1:
            say(f"{m.name} {case.id}: the worker {verb} during {phase} of {culprit or 'the case'}; each variant now runs alone to find the culprit")
            return suspect_order(group, pending, culprit), {"hung": hung, "what": f"the worker had {verb} during {phase} of {culprit or 'the case'}"}
        v = group[0]
        where = f"during {phase} of {v}" + (f", run alone (with the case's other variants {alone['what']})" if alone else "")
        if hung:
            records[v] = {"status": "timeout", "reason": f"no answer within {deadline_s:.0f} s {where}; the worker was killed and restarted"}
        else:
            kind = "cuda_context" if exitcode == EXIT_CONTEXT_LOST else "crash"
            message = f"the worker process {verb} {where}; it was restarted for the other variants"
            records[v] = {"status": "error", "error": {"kind": kind, "message": message}}
        pending = pending[1:]
        if alone and alone["hung"] == hung:
            # Found: the others run together again, in their own order.
            pending = [x for x in variants if x in pending]
            if pending:
                found = f"{v} is the culprit (run alone, the worker {verb} during {phase} of it)"
                say(f"{m.name} {case.id}: {found}; the other variants run together again")
            alone = None
        return pending, alone

    def case_deadline_s(self, timeout_s: float, n_variants: int) -> float:
        """The seconds a worker has to answer a case of n variants: the per-variant timeout for
        each, plus the first warm-up when timing (the harness's own time, not the variants':
        a 3 s warm-up left a 4 s variant 1 s for everything else)."""
        return timeout_s * n_variants + (self.first_warmup_s if self.timing else 0.0)


def suspect_order(group: list[str], pending: list[str], culprit: str | None) -> list[str]:
    """The pending variants of a failed group in the order they run alone: the one it was running
    (or those it was setting up together) first, then those that ran before it, nearest first (a
    GPU fault surfaces in whatever runs after its cause: `poison` broke the process at seed 0 and
    `writes_input`, after it, died), going round the group since the seeds repeat its order."""
    named = [v for v in (culprit or "").split(",") if v in pending]
    order = list(named)
    if named and named[0] in group:
        i = group.index(named[0])
        order += [group[(i - k) % len(group)] for k in range(1, len(group))]
    order += pending
    seen: set[str] = set()
    return [v for v in order if v in pending and not (v in seen or seen.add(v))]  # type: ignore[func-returns-value]

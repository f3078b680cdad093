"""kernelgate's Python harness: expands the manifests' cases, verifies every variant against a
higher-precision oracle, times it, and writes the results document (kernelgate/results@1).

Kernel modules import the two exceptions below to tell the harness why a case cannot run.
"""

# 0.2.0 (2026-11-29): each cycle of the unpaired rounds' Williams design labelled afresh
# (sampling.round_order), and timing.after recorded. Unpaired medians taken before and after are
# not like for like (a nightly's trend restarts at a change of this string, src/judge/trend.ts).
HARNESS_VERSION = "kernelgate-harness 0.2.0"


class Unsupported(Exception):
    """A variant cannot run this case (e.g. an SDPA backend refuses the shape): the case is skipped with this reason."""


class NotBuilt(Exception):
    """A CUDA variant has no library from the build stage: its cases are skipped with this reason."""

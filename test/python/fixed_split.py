"""The shards' fixed split (src/shard/plan.ts planShards) in Python, over the harness's cost rule
(kernelgate_harness.lanes.costs): the lanes no longer split up front (they share one queue,
lanes.queue_order), so this lives with the tests that check the cost rule against the shards'
(test/lanes-twin.test.ts) and score fixed splits on the recorded nights (test_lanes_balance.py)."""

from kernelgate_harness.lanes import costs


def plan(units, n_lanes, balance=None, paired=True, cap_s=None):
    """(the lane of each unit, each lane's expected seconds, each lane's count of units measured in
    `balance`), longest first onto the least loaded lane, ties to the lower lane."""
    cost, measured = costs(units, balance, paired, cap_s)
    load = [0.0] * n_lanes
    owner = [0] * len(units)
    for i in sorted(range(len(units)), key=lambda i: (-cost[i], i)):
        best = min(range(n_lanes), key=lambda k: (load[k], k))
        load[best] += cost[i]
        owner[i] = best
    counted = [sum(1 for i, o in enumerate(owner) if o == k and measured[i]) for k in range(n_lanes)]
    return owner, load, counted

"""kernelgate_harness.jsonl_child: the supervised child that answers in JSON lines (kernels'
work that may hang, e.g. kernels/attention/triton_fa3.py's probe, test_triton_fa3_probe.py)."""

import pytest

from kernelgate_harness.jsonl_child import ALIVE, DONE, Ended, JsonLinesChild

# Answers each request {"n": N, "exit": bool} with N numbered lines around two that are not its own,
# then "end"; exits with code 3 and a line on stderr when asked to.
ECHO = r"""
import json, sys
for request in sys.stdin:
    spec = json.loads(request)
    if spec.get("exit"):
        sys.stderr.write("about to go\nRuntimeError: asked to exit\n")
        sys.exit(3)
    print("a library's own line", flush=True)
    print("[1, 2]", flush=True)
    for i in range(spec["n"]):
        print(json.dumps({"i": i}), flush=True)
    print(json.dumps({"end": True}), flush=True)
"""


@pytest.fixture
def child():
    c = JsonLinesChild(ECHO)
    yield c
    c.stop()


def collect(into):
    def on_message(msg):
        into.append(msg)
        return DONE if "end" in msg else ALIVE

    return on_message


def test_each_json_object_reaches_the_caller_and_the_child_serves_request_after_request(child):
    got = []
    assert child.request({"n": 3}, 60, collect(got)) is None
    assert got == [{"i": 0}, {"i": 1}, {"i": 2}, {"end": True}]
    first = child.proc
    got.clear()
    assert child.request({"n": 1}, 60, collect(got)) is None
    assert got == [{"i": 0}, {"end": True}]
    assert child.proc is first


def test_a_child_that_ends_is_named_with_its_exit_code_and_last_words_and_the_next_request_starts_a_new_one(child):
    assert child.request({"exit": True}, 60, collect([])) == Ended("eof", 3, "RuntimeError: asked to exit")
    assert child.proc is None
    got = []
    assert child.request({"n": 1}, 60, collect(got)) is None
    assert got == [{"i": 0}, {"end": True}]


def test_a_silent_child_is_killed_at_its_time():
    silent = JsonLinesChild("import time\ntime.sleep(600)\n")
    try:
        assert silent.request({}, 1, collect([])) == Ended("timeout", -9, None)
        assert silent.proc is None
    finally:
        silent.stop()

"""scripts/gpu-e2e.sh nightly-bisect plants a commit that makes attention/triton_fa2 launch its
kernel twice, by appending Python to kernels/attention/triton_fa2.py. The appended code must call
the module's `launch` as it is today: on the H100 (2026-11-26) a wrapper written for an older
signature made every triton_fa2 case an error ("launch() takes 6 positional arguments but 7 were
given") and the night showed a failure instead of a bisected slowdown."""

import inspect
import os
import re

import pytest

from conftest import REPO

pytest.importorskip("torch")
pytest.importorskip("triton")


def planted_code():
    with open(os.path.join(REPO, "scripts", "gpu-e2e.sh")) as f:
        script = f.read()
    body = script[script.index("planted_commits() {"):]
    return re.search(r"<<'PY'\n(.*?)\nPY\n", body, re.S).group(1)


def test_the_planted_commit_wraps_the_launch_of_today(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from kernels.attention import triton_fa2

    calls = []

    def launch(*args, **kwargs):
        inspect.signature(triton_fa2.launch).bind(*args, **kwargs)  # a TypeError as the harness would get
        calls.append(len(args))
        return "out"

    namespace = {"launch": launch}
    exec(planted_code(), namespace)
    params = list(inspect.signature(triton_fa2.launch).parameters)
    args = [object()] * len(params)
    assert namespace["launch"](*args) == "out"
    assert calls == [len(params), len(params)]


def script_function(name):
    """The text of one shell function of scripts/gpu-e2e.sh (up to its closing brace at column 0)."""
    with open(os.path.join(REPO, "scripts", "gpu-e2e.sh")) as f:
        script = f.read()
    start = script.index(f"\n{name}() {{\n") + 1
    return script[start:script.index("\n}\n", start) + 3]


def run_functions(tmp_path, call, **env):
    import subprocess

    prog = script_function("config_source") + script_function("blocking_config") + script_function("event_pr") + call
    return subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": os.environ["PATH"], **env})


def test_the_accept_scenario_labels_the_pull_request_and_blocks_on_slower(tmp_path):
    """`accept`: a `labeled` event whose label is kernelgate-accept and whose sender is alice (the
    action reads who accepted from it), under a copy of kernelgate.yml with fail_on_slower: true."""
    import json

    root = tmp_path / "root"
    root.mkdir()
    with open(os.path.join(REPO, "kernelgate.yml")) as f:
        (root / "kernelgate.yml").write_text(f.read())
    done = run_functions(tmp_path, 'blocking_config && event_pr "t" \'[{"name": "kernelgate-accept"}]\' labeled',
                         root=str(root), sha="a" * 40, base_sha="b" * 40, repo="kernelgate/kernelgate")
    assert done.returncode == 0, done.stderr
    name, _, event = done.stdout.partition("\n")
    assert name == "kernelgate.blocking.yml"
    config = (root / name).read_text()
    assert "\n  fail_on_slower: true\n" in config and "fail_on_slower: false" not in config
    payload = json.loads(event)
    assert payload["action"] == "labeled"
    assert payload["label"] == {"name": "kernelgate-accept"}
    assert payload["sender"]["login"] == "alice"
    assert payload["pull_request"]["labels"] == [{"name": "kernelgate-accept"}]
    assert payload["pull_request"]["head"]["sha"] == "a" * 40


def test_a_plain_pull_request_event_names_no_sender(tmp_path):
    import json

    done = run_functions(tmp_path, 'event_pr "t"', sha="a" * 40, base_sha="b" * 40, repo="kernelgate/kernelgate")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["action"] == "synchronize" and "sender" not in payload and payload["pull_request"]["labels"] == []


def test_the_accept_scenario_refuses_a_configuration_that_already_blocks(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "kernelgate.yml").write_text("policy:\n  fail_on_slower: true\n")
    done = run_functions(tmp_path, "blocking_config", root=str(root))
    assert done.returncode == 2
    assert done.stderr.strip() == f"accept: no 'fail_on_slower: false' in {root}/./kernelgate.yml"

"""kernels/common/tuning.py: a host-side tuner's choice remembered across the processes of a
paired run, and only for the same tuner code (not its comments), case and device."""

import types

from kernels.common import tuning


def tuner_module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return types.SimpleNamespace(__name__=name, __file__=str(path))


def counting(config):
    calls = []

    def tune():
        calls.append(1)
        return config, {config: 1.25}

    return tune, calls


def test_without_the_cache_folder_every_process_tunes(tmp_path, monkeypatch):
    monkeypatch.delenv(tuning.ENV, raising=False)
    mod = tuner_module(tmp_path, "k", "CONFIGS = [1]\n")
    tune, calls = counting((128, 64, 4, 3))
    assert tuning.remembered(mod, {"S": 1}, "cuda0", tune) == ((128, 64, 4, 3), {(128, 64, 4, 3): 1.25})
    assert tuning.remembered(mod, {"S": 1}, "cuda0", tune)[0] == (128, 64, 4, 3)
    assert len(calls) == 2


def test_the_second_process_takes_the_first_ones_choice(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(tuning.ENV, str(tmp_path / "cache"))
    mod = tuner_module(tmp_path, "k", "CONFIGS = [1]\n")
    first, first_calls = counting((128, 64, 4, 3))
    second, second_calls = counting((128, 128, 8, 2))
    assert tuning.remembered(mod, {"S": 1}, "H100", first)[0] == (128, 64, 4, 3)
    assert tuning.remembered(mod, {"S": 1}, "H100", second) == ((128, 64, 4, 3), {})
    assert (len(first_calls), len(second_calls)) == (1, 0)
    err = capsys.readouterr().err
    assert "[kernelgate tuning] k {'S': 1} -> (128, 64, 4, 3); (128, 64, 4, 3): 1.250 ms" in err
    assert (
        "[kernelgate tuning] k {'S': 1} -> (128, 64, 4, 3) (remembered: tuned by an earlier process, of this run or an "
        "earlier one, in KERNELGATE_TUNE_CACHE)"
    ) in err


def test_a_changed_source_case_or_device_is_tuned_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv(tuning.ENV, str(tmp_path / "cache"))
    mod = tuner_module(tmp_path, "k", "CONFIGS = [1]\n")
    tune, calls = counting((1, 2))
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    tuning.remembered(mod, {"S": 2}, "H100", tune)
    tuning.remembered(mod, {"S": 1}, "H200", tune)
    (tmp_path / "k.py").write_text("CONFIGS = [1, 2]\n")
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 4
    (tmp_path / "k.py").write_text("CONFIGS = [1]\n")
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 4


def test_a_comment_docstring_or_blank_line_is_not_a_change_of_code(tmp_path, monkeypatch):
    monkeypatch.setenv(tuning.ENV, str(tmp_path / "cache"))
    mod = tuner_module(tmp_path, "k", 'CONFIGS = [1]\n\n\ndef tune(x):\n    return x * 2\n')
    tune, calls = counting((1, 2))
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    (tmp_path / "k.py").write_text(
        '"""The tuner."""\n# tilings\nCONFIGS = [1]  # one\n\n\ndef tune(x):\n    """Twice."""\n    return x * 2\n'
        "\n# touched by scripts/gpu-e2e.sh one-variant: a comment, the code is the same\n"
    )
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 1
    (tmp_path / "k.py").write_text('CONFIGS = [1]\n\n\ndef tune(x):\n    return x * 3\n')
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 2
    (tmp_path / "k.py").write_text('CONFIGS = [1]\n\n\ndef tune(x):\n    return x * 3\n    s = "not a docstring"\n')
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 3


def test_a_file_that_does_not_parse_is_keyed_by_its_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv(tuning.ENV, str(tmp_path / "cache"))
    mod = tuner_module(tmp_path, "k", "CONFIGS = [1\n")
    tune, calls = counting((1, 2))
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    (tmp_path / "k.py").write_text("CONFIGS = [1\n# more\n")
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    assert len(calls) == 2


def test_an_unreadable_cache_entry_is_tuned_again(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(tuning.ENV, str(folder))
    mod = tuner_module(tmp_path, "k", "X = 1\n")
    tune, calls = counting((1, 2))
    tuning.remembered(mod, {"S": 1}, "H100", tune)
    for entry in folder.iterdir():
        entry.write_text("{not json")
    assert tuning.remembered(mod, {"S": 1}, "H100", tune)[0] == (1, 2)
    assert len(calls) == 2

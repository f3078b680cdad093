"""Reads kernels/<name>/kernel.yml and expands its case groups into cases with stable ids.

A case group maps axis names to a scalar (fixed) or a list (an axis to cross); the id is
`key=value` pairs in the group's key order, booleans written `true`/`false`."""

import decimal
import itertools
import json
import os
from dataclasses import dataclass

import yaml

from . import yaml12


class ManifestError(Exception):
    """A manifest that cannot be used; the message names the file, the field and the bad value."""


@dataclass
class Case:
    id: str
    params: dict


@dataclass
class Manifest:
    name: str
    path: str
    module: str
    variants: list
    cases: list
    ci_cases: list
    tolerance: dict
    timeout_s: float
    speed_reference: str | None = None
    description: str | None = None
    flops_formula: str | None = None
    bytes_formula: str | None = None
    # tiers.case: the params of the headline case (the first case they match), or None
    headline: dict | None = None


def format_value(value):
    """A case value as a case id writes it: booleans `true`/`false`, numbers as JavaScript's
    Number#toString writes them (the action's half, src/config/cases.ts, reads the same ids and
    cannot tell 1.0 from 1 once parsed), text as it is. test/fixtures/twins/case-ids.json holds
    both halves to the same ids."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= 2**53 else js_number(float(value))
    if isinstance(value, float):
        return js_number(value)
    return str(value)


def js_number(x: float) -> str:
    """ECMAScript's Number::toString(x): the shortest digits that read back as x (Python's repr
    finds the same), written plainly from 1e-6 up to 1e21, else as d.ddde±n."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = int(exponent) + k  # x = 0.d1d2...dk × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def case_id(params):
    return ",".join(f"{k}={format_value(v)}" for k, v in params.items())


def expand_group(group, where):
    """All combinations of one case group, in key order (the first key varies slowest)."""
    if not isinstance(group, dict) or not group:
        raise ManifestError(f"{where}: a case group must be a non-empty mapping, got {group!r}")
    keys = list(group)
    axes = []
    for k in keys:
        v = group[k]
        if isinstance(v, list):
            if not v:
                raise ManifestError(f"{where}.{k}: an axis needs at least one value, got []")
            axes.append(v)
        elif isinstance(v, (str, int, float, bool)):
            axes.append([v])
        else:
            raise ManifestError(f"{where}.{k}: values must be strings, numbers or booleans, got {v!r}")
    return [Case(case_id(p), p) for p in (dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes))]


def expand_cases(groups, where):
    cases, seen = [], set()
    for i, group in enumerate(groups):
        for case in expand_group(group, f"{where}[{i}]"):
            if case.id in seen:
                raise ManifestError(f"{where}[{i}]: case {case.id} appears twice")
            seen.add(case.id)
            cases.append(case)
    return cases


def matches(params, only):
    """True when params agree with every key of `only` (a list value means any of)."""
    for k, want in (only or {}).items():
        have = params.get(k)
        options = want if isinstance(want, list) else [want]
        if have not in options:
            return False
    return True


def headline_case(m, cases):
    """The id of the first of `cases` that tiers.case matches (the report's headline case, as
    src/judge/tiers.ts findCase finds it), or None: no tiers, or none of these cases."""
    if not m.headline:
        return None
    return next((c.id for c in cases if matches(c.params, m.headline)), None)


def load_manifest(path):
    try:
        with open(path) as f:
            raw = yaml12.load(f)
    except yaml.YAMLError as e:
        raise ManifestError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(raw, dict):
        raise ManifestError(f"{path}: expected a mapping at the top, got {type(raw).__name__}")
    _validate(raw, path)
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if raw["name"] != folder:
        raise ManifestError(f"{path}: name: {raw['name']!r} must equal the folder name {folder!r}")
    names = [v["name"] for v in raw["variants"]]
    for n in names:
        if names.count(n) > 1:
            raise ManifestError(f"{path}: variants: name {n!r} appears twice")
    ref = raw.get("speed_reference")
    if ref is not None and ref not in names:
        raise ManifestError(f"{path}: speed_reference: {ref!r} is not one of the variants {names}")
    return Manifest(
        name=raw["name"],
        path=path,
        module=raw["module"],
        variants=raw["variants"],
        cases=expand_cases(raw["cases"], f"{path}: cases"),
        ci_cases=expand_cases(raw.get("ci_cases") or [], f"{path}: ci_cases"),
        tolerance=raw["tolerance"],
        timeout_s=float(raw.get("timeout_s", 120)),
        speed_reference=ref,
        description=raw.get("description"),
        flops_formula=raw.get("flops_formula"),
        bytes_formula=raw.get("bytes_formula"),
        headline=(raw.get("tiers") or {}).get("case"),
    )


def _want(value, where, kind, positive=False):
    """value is of the schema's `kind` (and > 0 when `positive`), else a ManifestError in
    jsonschema's words: `tolerance.fp16.rel_l2: '1e-3' is not of type 'number'`."""
    ok = {
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }[kind]
    if not ok:
        raise ManifestError(f"{where}: {value!r} is not of type '{kind}'")
    if positive and value <= 0:
        raise ManifestError(f"{where}: {value!r} is less than or equal to the minimum of 0")


def _essential_checks(raw, path):
    """The types the harness relies on, checked by hand so that they hold on a GPU runner without
    jsonschema too: the required fields, the variants, the case groups' shape and the numbers
    (tolerances, timeout_s). The messages are jsonschema's, with the file and the field."""
    for key in ("name", "module", "variants", "cases", "tolerance"):
        if key not in raw:
            raise ManifestError(f"{path}: missing required field {key!r}")
    for key in ("name", "module", "speed_reference", "description"):
        if key in raw:
            _want(raw[key], f"{path}: {key}", "string")
    for key in ("variants", "cases", "ci_cases"):
        if key in raw:
            _want(raw[key], f"{path}: {key}", "array")
            for i, item in enumerate(raw[key]):
                _want(item, f"{path}: {key}.{i}", "object")
    for i, v in enumerate(raw["variants"]):
        _want(v.get("name"), f"{path}: variants.{i}.name", "string")
        if v.get("role") not in ("candidate", "reference"):
            raise ManifestError(f"{path}: variants.{i}.role: {v.get('role')!r} is not one of ['candidate', 'reference']")
    _want(raw["tolerance"], f"{path}: tolerance", "object")
    for dtype, tol in raw["tolerance"].items():
        _want(tol, f"{path}: tolerance.{dtype}", "object")
        if "rel_l2" not in tol:
            raise ManifestError(f"{path}: tolerance.{dtype}: 'rel_l2' is a required property")
        for key in ("rel_l2", "max_abs"):
            if key in tol:
                _want(tol[key], f"{path}: tolerance.{dtype}.{key}", "number", positive=True)
    if "timeout_s" in raw:
        _want(raw["timeout_s"], f"{path}: timeout_s", "number", positive=True)


def _validate(raw, path):
    """The essential types by hand, always (_essential_checks); then the whole of
    schema/kernel.schema.json when jsonschema is installed (the GPU runner may lack it)."""
    _essential_checks(raw, path)
    try:
        import jsonschema
    except ImportError:
        return
    schema_path = os.path.join(os.path.dirname(__file__), "..", "..", "schema", "kernel.schema.json")
    with open(schema_path) as f:
        schema = json.load(f)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(raw), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.path) or "(top)"
        raise ManifestError(f"{path}: {where}: {e.message}")


def discover(kernels_dir, only=None):
    """Manifests under kernels_dir, the calibration kernel `gemm` first (its cases are the ceilings
    and warm the GPU), then by name. `only` limits to those names; an unknown name is an error."""
    names = sorted(
        d for d in os.listdir(kernels_dir) if os.path.isfile(os.path.join(kernels_dir, d, "kernel.yml"))
    )
    if not names:
        raise ManifestError(f"{kernels_dir}: no kernel folders with a kernel.yml")
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ManifestError(f"--only: no kernel named {', '.join(unknown)} in {kernels_dir} (have: {', '.join(names)})")
        names = [n for n in names if n in only]
    names.sort(key=lambda n: (n != "gemm", n))
    return [load_manifest(os.path.join(kernels_dir, n, "kernel.yml")) for n in names]

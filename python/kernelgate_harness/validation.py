"""The results document checked against schema/results.schema.json before each write (document.py),
by fastjsonschema: pure Python (no compiled wheel, unlike jsonschema 4.18+, whose rpds-py has no
wheel for the GPU machine's CPython 3.12 in the package mirror), draft-07, a declared dependency of
the package (python/pyproject.toml). The TypeScript side validates every document it reads with ajv
(src/results/results.ts), so where fastjsonschema does not import the harness says so once, writes
the document unvalidated and says that too when it is done; it never claims a check it did not
make (docs/harness.md, "The results document's schema")."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "schema", "results.schema.json")
SCHEMA_NAME = "schema/results.schema.json"
MISSING = (
    "no JSON-schema validator: fastjsonschema does not import (pip install fastjsonschema, a dependency "
    "of the harness package): results are written unvalidated here; kernelgate validates them when it reads them"
)

_compiled: dict[str, Callable[[Any], Any] | None] = {}


def validator() -> tuple[Callable[[Any], Any] | None, str]:
    """The compiled check of the results schema, and what made it ('fastjsonschema 2.22.2'); None
    and the reason when fastjsonschema does not import. Compiled once per process (about 0.3 s)."""
    try:
        import fastjsonschema
    except ImportError:
        return None, MISSING
    name = f"fastjsonschema {fastjsonschema_version()}"
    if SCHEMA_PATH not in _compiled:
        with open(SCHEMA_PATH) as f:
            _compiled[SCHEMA_PATH] = fastjsonschema.compile(json.load(f))
    return _compiled[SCHEMA_PATH], name


def fastjsonschema_version() -> str:
    import fastjsonschema

    return str(getattr(fastjsonschema, "VERSION", "?"))


def show_value(value: Any) -> str:
    """A bad value as the messages show it: JSON, cut at 80 characters (src/results showValue)."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def readable_path(parts: list[Any]) -> str:
    """['data', 'cases', '3', 'timing'] -> 'cases[3].timing' (as src/results readablePath writes)."""
    out = ""
    for part in [str(p) for p in parts[1:]]:
        if part.isdigit():
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or "the document"


def _subject(doc: Any, parts: list[Any]) -> str:
    """' (kernel/variant case)' for a path inside cases[i], as the TypeScript messages name it."""
    if len(parts) < 3 or parts[1] != "cases" or not str(parts[2]).isdigit() or not isinstance(doc, dict):
        return ""
    cases = doc.get("cases")
    i = int(parts[2])
    if not isinstance(cases, list) or i >= len(cases) or not isinstance(cases[i], dict):
        return ""
    c = cases[i]
    text = [c.get(k) if isinstance(c.get(k), str) else "?" for k in ("kernel", "variant", "case")]
    return f" ({text[0]}/{text[1]} {text[2]})"


def problem(file: str, doc: Any, check: Callable[[Any], Any]) -> str | None:
    """The document's first schema violation (`check`: validator()'s) as one line naming the file,
    the JSON path, the case and the bad value, e.g. `out.json: cases[3].status (softmax/triton
    n=1024): must be one of ['ok', 'fail', 'error', 'timeout', 'skipped'] (got "bogus")`; None when
    it matches."""
    import fastjsonschema

    try:
        check(doc)
    except fastjsonschema.JsonSchemaValueException as e:
        parts = list(e.path or ["data"])
        what = e.message
        if e.name and what.startswith(e.name):
            what = what[len(e.name) :].lstrip()
        return f"{file}: {readable_path(parts)}{_subject(doc, parts)}: {what} (got {show_value(e.value)})"
    return None

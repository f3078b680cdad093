"""YAML as the TypeScript side reads it: the YAML 1.2 core schema of the `yaml` npm package (v2).

PyYAML implements YAML 1.1, where `1e-3` is a string (its float needs a dot), `yes`/`on` are
booleans, `0777` is octal, `1_000` is 1000, `1:30` is 90 and `2026-11-26` is a date; the action
(src/config/config.ts, `parseDocument` of `yaml`) reads 0.001, "yes", "on", 777, "1_000", "1:30"
and "2026-11-26". So a manifest meant one thing to the judge and another to the harness. This
loader replaces PyYAML's implicit types with the core schema's (the same regular expressions as
node_modules/yaml/dist/schema/core/*.js), reads `<<` as a plain key (merge keys are off in 1.2)
and refuses a key that appears twice in a mapping, as `yaml` does. test/fixtures/yaml12/vectors.json
holds the snippets both halves are checked against (test/yaml12-twin.test.ts,
test/python/test_yaml12.py)."""

import re

import yaml

NULL = re.compile(r"^(?:~|[Nn]ull|NULL)?\Z")
BOOL = re.compile(r"^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)\Z")
INT_DEC = re.compile(r"^[-+]?[0-9]+\Z")
INT_OCT = re.compile(r"^0o[0-7]+\Z")
INT_HEX = re.compile(r"^0x[0-9a-fA-F]+\Z")
FLOAT_EXP = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+\Z")
FLOAT_DOT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)\Z")
FLOAT_SPECIAL = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)\Z")

INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
DUPLICATE_KEY = "Map keys must be unique"


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types."""

    yaml_implicit_resolvers: dict[str, list[tuple[str, object]]] = {}


def _resolver(tag, regexp, first):
    Yaml12Loader.add_implicit_resolver(tag, regexp, list(first))


_DIGITS = "0123456789"
_resolver("tag:yaml.org,2002:null", NULL, ["~", "n", "N", ""])
_resolver("tag:yaml.org,2002:bool", BOOL, "tTfF")
_resolver(INT_TAG, INT_DEC, "-+" + _DIGITS)
_resolver(INT_TAG, INT_OCT, "0")
_resolver(INT_TAG, INT_HEX, "0")
_resolver(FLOAT_TAG, FLOAT_EXP, "-+." + _DIGITS)
_resolver(FLOAT_TAG, FLOAT_DOT, "-+." + _DIGITS)
_resolver(FLOAT_TAG, FLOAT_SPECIAL, "-+.")


def _construct_int(loader, node):
    value = loader.construct_scalar(node)
    if INT_OCT.match(value):
        return int(value[2:], 8)
    if INT_HEX.match(value):
        return int(value[2:], 16)
    if INT_DEC.match(value):
        return int(value, 10)
    return value  # `!!int` on what is no core integer: `yaml` keeps the string (with a warning)


def _construct_float(loader, node):
    value = loader.construct_scalar(node)
    if FLOAT_SPECIAL.match(value):
        if value[-3:].lower() == "nan":
            return float("nan")
        return float("-inf") if value[0] == "-" else float("inf")
    if FLOAT_EXP.match(value) or FLOAT_DOT.match(value):
        return float(value)
    return value  # `!!float 3` (no dot, no exponent): `yaml` keeps the string (with a warning)


def _construct_bool(loader, node):
    return loader.construct_scalar(node)[0] in "tT"


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"{DUPLICATE_KEY}: {key!r} appears twice", key_node.start_mark
                )
            seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


def _construct_map(loader, node):
    data = {}
    yield data
    data.update(_construct_mapping(loader, node))


Yaml12Loader.add_constructor(INT_TAG, _construct_int)
Yaml12Loader.add_constructor(FLOAT_TAG, _construct_float)
Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
Yaml12Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def load(stream):
    """One YAML document, as the action's `yaml` (1.2 core schema) reads it."""
    return yaml.load(stream, Loader=Yaml12Loader)

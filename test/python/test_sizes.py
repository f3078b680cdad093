"""Size limits for the Python code, like eslint's for TypeScript (docs/architecture.md, "Size
limits"): no file in python/ or kernels/ over 400 lines, no class over 200, no function over 80.

Counted like eslint's max-lines and max-lines-per-function with skipBlankLines and skipComments:
a line counts when it holds a token other than a `#` comment; blank lines and comment lines do
not. Docstrings count (they are code to Python, and skipping them would let a file grow prose
past the limit). A function's or class's lines run from its first decorator to its last line,
nested functions and methods included.

There is no exception: the last parts over (the worker's timing, verification and paired case)
were split by issue 29."""

import ast
import io
import os
import tokenize

from conftest import REPO

MAX_FILE = 400
MAX_CLASS = 200
MAX_FUNCTION = 80
FOLDERS = ("python", "kernels")


def python_files():
    for folder in FOLDERS:
        for root, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(root, name)


def code_lines(source):
    """The numbers of the lines that hold code: a token other than a comment, a newline or an
    indent (a string over several lines holds each of them)."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in skip:
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def oversized(path):
    """(what, size, limit) for the file and each class and function over its limit."""
    with open(path) as f:
        source = f.read()
    tree = ast.parse(source, path)
    lines = code_lines(source)
    rel = os.path.relpath(path, REPO)
    found = []
    if len(lines) > MAX_FILE:
        found.append((rel, len(lines), MAX_FILE))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            kind, limit = "class", MAX_CLASS
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind, limit = "function", MAX_FUNCTION
        else:
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        size = sum(1 for n in lines if start <= n <= node.end_lineno)
        if size > limit:
            found.append((f"{rel}:{node.lineno} {kind} {node.name}", size, limit))
    return found


def test_counting_skips_blank_lines_and_comments():
    source = 'def f():\n    """Doc\n    string."""\n\n    # a comment\n    x = 1  # trailing\n    return (x,\n            2)\n'
    assert sorted(code_lines(source)) == [1, 2, 3, 6, 7, 8]


def test_no_python_file_class_or_function_over_its_limit():
    over = {what: (size, limit) for path in python_files() for what, size, limit in oversized(path)}
    found = [f"{what}: {size} lines (limit {limit})" for what, (size, limit) in over.items()]
    assert found == [], "over the size limits (blank lines and comments not counted):\n  " + "\n  ".join(found)


def test_a_planted_long_function_and_class_are_named_with_their_sizes(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    planted = tmp_path / "planted.py"
    planted.write_text(f"class Big:\n    @staticmethod\n    def long():\n{body.replace('    ', '        ')}\n\ndef short():\n    # a comment\n\n    return 1\n")
    rel = os.path.relpath(planted, REPO)
    assert oversized(str(planted)) == [(f"{rel}:3 function long", 82, MAX_FUNCTION)]
    planted.write_text("class Big:\n" + "".join(f"    def f{i}(self):\n        return {i}\n" for i in range(101)))
    assert oversized(str(planted)) == [(f"{rel}:1 class Big", 203, MAX_CLASS)]

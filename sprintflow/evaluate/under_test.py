"""The code a failing test exercises: where to point a generator that may not change the test.

An assertion fails in the test, but what is wrong is the code it checks. The test's imports
say which of the project's modules that is (Python's ``import``/``from``, JavaScript and
TypeScript ``import``/``require`` of a relative path; a Go ``_test.go`` exercises the other
files of its package's folder and the packages of its own module it imports); a name of theirs
on the failing line says which definition, when the module defines it plainly. Files outside the tree, tests and
``conftest.py`` are never the answer.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "calc").mkdir(); (root / "tests").mkdir()
    >>> _ = (root / "calc" / "__init__.py").write_text("def add(a, b):\\n    return a - b\\n")
    >>> _ = (root / "tests" / "test_calc.py").write_text("from calc import add\\n\\ndef test_add():\\n"
    ...                                                  "    assert add(1, 2) == 3\\n")
    >>> code_under_test(root, "tests/test_calc.py", 4)
    ('calc/__init__.py', 1)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

from sprintflow.judge.areas import is_test

__all__ = ["code_under_test"]

_MAX_BYTES = 1 << 20
_JS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_JS_IMPORT = re.compile(r"""(?:import\s+(?P<what>[^'";]*?)\s+from\s*|import\s*\(\s*|require\s*\(\s*)"""
                        r"""['"](?P<spec>\.{1,2}/[^'"]+)['"]""")
_JS_NAMES = re.compile(r"[A-Za-z_$][\w$]*")


def code_under_test(root: Path, test_file: str, line: int | None) -> tuple[str, int | None] | None:
    """The project file (and, where found, the definition's line) that the test at ``test_file:line``
    exercises; None when its imports name none of the project's modules."""
    text = _read(root / test_file)
    if text is None:
        return None
    imported = _python_imports(root, test_file, text) if test_file.endswith(".py") else (
        _js_imports(root, test_file, text) if test_file.endswith(_JS_SUFFIXES) else (
            _go_packages(root, test_file, text) if test_file.endswith("_test.go") else []))
    modules = [(module, names) for module, names in imported if not _is_test_code(module)]
    if not modules:
        return None
    lines = text.splitlines()
    failing = lines[line - 1] if line and 0 < line <= len(lines) else ""
    words = set(_JS_NAMES.findall(failing))
    for module, names in modules:
        for name in names:
            if name in words and (found := _definition(root / module, name)) is not None:
                return module, found
    for module, names in modules:
        if words.intersection(names):
            return module, None
    return modules[0][0], None


def _is_test_code(rel: str) -> bool:
    return is_test(rel) or PurePosixPath(rel).name == "conftest.py"


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _python_imports(root: Path, test_file: str, text: str) -> list[tuple[str, list[str]]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, list[str]]] = []
    package = PurePosixPath(test_file).parent
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _relative_base(package, node.level) if node.level else None
            for name in node.names:
                # `from pkg import mod` may import a module, `from pkg.mod import f` a name in one.
                for dotted, names in ((f"{node.module}.{name.name}" if node.module else name.name, []),
                                      (node.module or "", [name.asname or name.name])):
                    module = _python_module(root, dotted, base)
                    if module is not None:
                        found.append((module, names or [name.asname or name.name]))
                        break
        elif isinstance(node, ast.Import):
            for name in node.names:
                module = _python_module(root, name.name, None)
                if module is not None:
                    found.append((module, [name.asname or name.name.split(".")[0]]))
    return found


def _relative_base(package: PurePosixPath, level: int) -> PurePosixPath:
    for _ in range(level - 1):
        package = package.parent
    return package


def _python_module(root: Path, dotted: str, base: PurePosixPath | None) -> str | None:
    if not dotted and base is None:
        return None
    parts = [p for p in dotted.split(".") if p]
    prefixes = [base] if base is not None else [PurePosixPath("."), PurePosixPath("src")]
    for prefix in prefixes:
        stem = prefix.joinpath(*parts) if parts else prefix
        for candidate in (stem.with_name(stem.name + ".py") if parts else None, stem / "__init__.py"):
            if candidate is not None and (root / candidate).is_file():
                return candidate.as_posix().removeprefix("./")
    return None


def _js_imports(root: Path, test_file: str, text: str) -> list[tuple[str, list[str]]]:
    found = []
    folder = PurePosixPath(test_file).parent
    for match in _JS_IMPORT.finditer(text):
        module = _js_module(root, folder, match["spec"])
        if module is not None:
            found.append((module, _JS_NAMES.findall(re.sub(r"\b\w+\s+as\b|\bas\b", " ", match["what"] or ""))))
    return found


def _js_module(root: Path, folder: PurePosixPath, spec: str) -> str | None:
    try:
        target = (root / folder / spec).resolve().relative_to(root.resolve())
    except ValueError:
        return None  # outside the tree
    stem = PurePosixPath(target.as_posix())
    # TypeScript's ESM imports name the emitted `.js`: the source is the `.ts` beside it.
    bare = stem.with_suffix("") if stem.suffix in _JS_SUFFIXES else stem
    candidates = [stem, *(bare.with_name(bare.name + s) for s in _JS_SUFFIXES),
                  *(bare / f"index{s}" for s in _JS_SUFFIXES)]
    return next((c.as_posix() for c in candidates if (root / c).is_file()), None)


_GO_DEFINES = re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)(?P<name>[A-Za-z_]\w*)",
                         re.MULTILINE)
_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?P<path>[^"]+)"\s*$', re.MULTILINE)


def _go_packages(root: Path, test_file: str, text: str) -> list[tuple[str, list[str]]]:
    """The non-test files of the test's own folder (its package, whether it is ``package x`` or
    ``package x_test``) and of the packages of this module it imports, each with the names it defines."""
    folders = [PurePosixPath(test_file).parent]
    module = _go_module(root)
    if module is not None:
        for match in _GO_IMPORT.finditer(text):
            path = match["path"]
            if path == module or path.startswith(module + "/"):
                folders.append(PurePosixPath(path[len(module):].strip("/") or "."))
    found = []
    for folder in dict.fromkeys(folders):
        directory = root / folder
        for source in sorted(directory.glob("*.go")) if directory.is_dir() else []:
            if source.name.endswith("_test.go") or (code := _read(source)) is None:
                continue
            defined = list(_GO_DEFINES.finditer(code))
            # Functions and methods first: `Codec{}.Encode(x)` exercises Encode more than the type.
            names = [m["name"] for m in defined if m[0].startswith("func")] + [
                m["name"] for m in defined if not m[0].startswith("func")]
            found.append(((folder / source.name).as_posix(), names))
    return found


def _go_module(root: Path) -> str | None:
    match = re.search(r"^module\s+(\S+)", _read(root / "go.mod") or "", re.MULTILINE)
    return match[1] if match else None


def _definition(path: Path, name: str) -> int | None:
    text = _read(path)
    if text is None:
        return None
    if path.suffix == ".go":
        return next((text[:m.start()].count("\n") + 1 for m in _GO_DEFINES.finditer(text) if m["name"] == name),
                    None)
    pattern = re.compile(rf"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function\*?|const|let|var)"
                         rf"\s+{re.escape(name)}\b")
    return next((number for number, line in enumerate(text.splitlines(), 1) if pattern.match(line)), None)

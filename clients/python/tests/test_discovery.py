"""Every test written in tests/ is one `python -m unittest discover` runs.

A `def test_...` that lands outside its TestCase (after `if __name__ == "__main__":`, or at module level) is
never collected and never fails: this reads each test module's syntax tree and checks that every function named
test_* is a method of a class the loader collects it from. No server needed.
"""

from __future__ import annotations

import ast
import importlib.util
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def written_tests(path: Path) -> set[str]:
    """Every function named test_* in the file, wherever it sits, as "Class.name" or "<module>.name"."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.name.startswith("test"):
                    found.add(f"{owner}.{child.name}")
            else:  # an if/with/try block at module level: its functions belong to no class
                visit(child, owner)

    visit(tree, "<module>")
    return found


def collected_tests(module: str) -> set[str]:
    suite = unittest.defaultTestLoader.loadTestsFromName(f"tests.{module}")
    names: set[str] = set()

    def walk(s: unittest.TestSuite) -> None:
        for t in s:
            if isinstance(t, unittest.TestSuite):
                walk(t)
            else:
                names.add(f"{type(t).__name__}.{t._testMethodName}")  # pylint: disable=protected-access

    walk(suite)
    return names


class DiscoveryTest(unittest.TestCase):
    def test_every_test_function_in_tests_is_collected(self) -> None:
        modules = sorted(p for p in HERE.rglob("test_*.py"))
        self.assertIn("test_publisher.py", [p.name for p in modules])
        for path in modules:
            module = ".".join(path.relative_to(HERE).with_suffix("").parts)
            if module.startswith("frameworks.") and importlib.util.find_spec("fastapi") is None:
                continue  # the framework tests need the suite's venv (run-tests.sh); collected there
            with self.subTest(module=module):
                collected = collected_tests(module)
                collected_classes = {name.split(".")[0] for name in collected}
                collected_methods = {name.split(".")[1] for name in collected}
                # a test written in a contract mixin (not a TestCase) runs as a method of its subclasses
                missing = {name for name in written_tests(path) - collected
                           if name.split(".")[0] in collected_classes or name.startswith("<module>.")
                           or name.split(".")[1] not in collected_methods}
                self.assertEqual(set(), missing, f"{module}: written but never run by unittest discover")


if __name__ == "__main__":
    unittest.main()

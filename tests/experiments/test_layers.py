"""Experiments sit on top: they may import reviews, qa and rubrics; nothing there imports them."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import ROOT, imported_apps

EXPERIMENTS = ROOT / "experiments"


def imports_experiments(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("experiments"):
            return True
        if isinstance(node, ast.Import) and any(a.name.startswith("experiments") for a in node.names):
            return True
    return False


def test_no_lower_module_imports_experiments():
    lower = [
        path
        for app in ("rubrics", "qa", "reviews")
        for path in (ROOT / app).rglob("*.py")
        if EXPERIMENTS not in path.parents
    ]
    assert [str(path.relative_to(ROOT)) for path in lower if imports_experiments(path)] == []


def test_experiments_import_only_the_apps_below_and_themselves():
    apps = set().union(*(imported_apps(path) for path in EXPERIMENTS.rglob("*.py")))
    assert apps & {"rubrics", "qa", "reviews"} == {"rubrics", "qa", "reviews"}
    assert not apps & {"config", "tests", "bench"}

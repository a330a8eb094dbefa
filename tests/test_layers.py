"""The apps stack outbox ← rubrics ← qa ← reviews ← webhooks: no module of an app imports an app above it.

Read from the source (every import statement, those inside functions included), so
a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["outbox", "rubrics", "qa", "reviews", "webhooks"]  # each may import only those before it


def imported_apps(path: Path) -> set[str]:
    apps = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        apps.update(name.split(".")[0] for name in names)
    return apps


def modules_of(app: str) -> list[Path]:
    return sorted(path for path in (ROOT / app).rglob("*.py") if ".venv" not in path.parts)


@pytest.mark.parametrize("app", LAYERS)
def test_no_app_imports_one_above_it(app):
    above = set(LAYERS[LAYERS.index(app) + 1 :])
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) & above)
        for path in modules_of(app)
        if imported_apps(path) & above
    }
    assert offenders == {}


def test_the_scan_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from reviews.models import Review\n    import qa.models\n")
    assert imported_apps(module) == {"reviews", "qa"}


def test_llm_backends_do_not_import_each_other():
    tree = ast.parse((ROOT / "qa/local_model.py").read_text())
    assert "qa.llm" not in {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_only_the_urlconf_uses_the_recordings_views():
    """Apps above qa borrow the API's plumbing (authentication, permissions, parsing, errors), not qa's views."""
    users = [
        str(path.relative_to(ROOT))
        for app in ["reviews"]
        for path in modules_of(app)
        if any(
            isinstance(node, ast.ImportFrom) and node.module == "qa.api.views"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    ]
    assert users == []

"""The apps stack access, outbox ← core ← rubrics ← qa ← reviews ← calibration ← routing ← calls ← disputes ← experiments
← insights ← webhooks: no module of an app imports an app above it, and inside an app no modules import each other in a circle (a
task module is a leaf: the domain publishes tasks by name, core.queue, and the tasks import the domain inside
their bodies). The features (calibration, calls, disputes, experiments, insights) stand on the kernel in reviews (the human reference,
periods, filters, the report page) and on the platform, core.

Read from the source (every import statement, those inside functions included), so
a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each may import only those before it. `access` (who may do what, the workspaces' scope, the API keys) and
# `outbox` (the events the judging and the reviews record) sit below them all; `core` is the platform every
# feature uses (the API's plumbing, errors, the job executor, the queue, rate limits), so that using it
# never means importing a feature.
LAYERS = [
    "access", "outbox", "core", "rubrics", "qa", "intake", "reviews",
    "calibration", "routing", "calls", "disputes", "experiments", "insights", "coaching",  # the features
    "exports",  # the bulk export for BI: reads every feature's rows
    "webhooks",
]  # fmt: skip


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


def modules_of(app: str, root: Path = ROOT) -> list[Path]:
    return sorted(path for path in (root / app).rglob("*.py") if ".venv" not in path.parts)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(app: str, root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of `app` and the modules of `app` it imports, anywhere in its source:
    `from pkg import module` names the module, `from module import name` the module."""
    paths = {module_name(path, root): path for path in modules_of(app, root)}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([node.module] if node.module else [])])
                targets.update(
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base for alias in node.names
                )
        edges = set()
        for target in targets:
            while target and target not in paths:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target and target not in (name, app):
                edges.add(target)
        graph[name] = edges
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected, Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


@pytest.mark.parametrize("app", LAYERS)
def test_no_app_imports_one_above_it(app):
    above = set(LAYERS[LAYERS.index(app) + 1 :])
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) & above)
        for path in modules_of(app)
        if imported_apps(path) & above
    }
    assert offenders == {}


@pytest.mark.parametrize("app", LAYERS)
def test_no_modules_of_an_app_import_each_other_in_a_circle(app):
    assert import_circles(import_graph(app)) == []


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    """The circle qa had: a task module importing the domain at the top, the domain importing
    the task module back inside a function (and a relative import on the way)."""
    package = tmp_path / "app"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "models.py"):
        (package / name).write_text("")
    (package / "tasks.py").write_text("from app.sub import services\n")
    (package / "sub/services.py").write_text("from ..models import Row\n\ndef publish():\n    from app import tasks\n")
    graph = import_graph("app", tmp_path)
    assert graph["app.sub.services"] == {"app.models", "app.tasks"}
    assert import_circles(graph) == [["app.sub.services", "app.tasks"]]

    (package / "sub/services.py").write_text("from ..models import Row\n")
    assert import_circles(import_graph("app", tmp_path)) == []


def test_the_scan_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from reviews.models import Review\n    import qa.models\n")
    assert imported_apps(module) == {"reviews", "qa"}


def test_llm_backends_do_not_import_each_other():
    tree = ast.parse((ROOT / "qa/local_model.py").read_text())
    assert "qa.llm" not in {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_only_the_urlconf_uses_the_recordings_views():
    """Apps above qa use the API's plumbing (core.api: authentication, parsing, errors), not qa's views."""
    users = [
        str(path.relative_to(ROOT))
        for app in LAYERS[LAYERS.index("qa") + 1 :]
        for path in modules_of(app)
        if any(
            isinstance(node, ast.ImportFrom) and node.module == "qa.api.views"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    ]
    assert users == []


def private_imports(path: Path) -> list[str]:
    """`from module import _name` of a project module: a private name borrowed from another module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in APPS:
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name.startswith("_")]
    return found


APPS = [*LAYERS, "config"]


@pytest.mark.parametrize("app", APPS)
def test_no_module_imports_another_modules_private_names(app):
    """What the reports, experiments, calibration and scorecards share is public (reviews.figures): a
    private name is its module's own to change."""
    offenders = {str(path.relative_to(ROOT)): found for path in modules_of(app) if (found := private_imports(path))}
    assert offenders == {}


def test_the_private_import_scan_sees_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from insights.reports.views import _num, Column\n")
    assert private_imports(module) == ["insights.reports.views._num"]


def foreign_views(path: Path, root: Path = ROOT) -> list[str]:
    """The project's `views` modules that `path` imports from outside their own package: a page's helpers
    belong in a module that is not a view (a selector, a form, reviews.report_page), so that no feature
    depends on another's pages. URLconfs, which wire the views, are what may import them."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found += [
            target
            for target in targets
            if target.split(".")[0] in APPS and target.rpartition(".")[2] == "views"
            and target.rpartition(".")[0] != package
        ]
    return found


@pytest.mark.parametrize("app", LAYERS)
def test_no_module_imports_the_views_of_another_package(app):
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in modules_of(app)
        if path.name not in ("urls.py", "api_urls.py") and (found := foreign_views(path))
    }
    assert offenders == {}


def test_the_views_scan_sees_a_feature_borrowing_another_features_view(tmp_path):
    (tmp_path / "insights" / "agents").mkdir(parents=True)
    module = tmp_path / "insights" / "agents" / "views.py"
    module.write_text("from insights.scorecards.views import cell_view\nfrom insights.agents import views\n")
    assert foreign_views(module, tmp_path) == ["insights.scorecards.views"]

"""Every view decides access through the one access module (`access`), and no code decides it any other way.

Read from the URLconf, so a new page or API view that checks access by hand (or not at all) fails here:
a function view must be wrapped by `access.page_requires` (or marked `access.public`), a class-based
page must use `access.PageAccessMixin`, an API view must keep the default `access.ApiAccess` and name a
person's capability for every method it serves. Django's admin keeps its own model permissions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView

import access

ROOT = Path(__file__).resolve().parent.parent
APPS = [
    "config", "outbox", "core", "rubrics", "qa", "reviews", "calibration", "calls", "disputes", "experiments", "insights",
    "webhooks", "intake",
]  # fmt: skip
# Views of the framework itself: the login, logout and password pages, the language switch, static files.
FRAMEWORK_MODULES = ("django.contrib.auth.views", "django.views.i18n", "django.views.static")
CAPABILITIES = {*access.Capability, access.SIGNED_IN, access.API_DOCS}
METHODS = ("get", "post", "put", "patch", "delete")


def patterns(resolver: URLResolver | None = None, prefix: str = "") -> list[tuple[str, object]]:
    """Every URL pattern with its view, the admin's left out (Django's admin checks model permissions)."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if getattr(entry, "app_name", None) == "admin":
                continue
            found += patterns(entry, route)
        elif isinstance(entry, URLPattern):
            found.append((route, entry.callback))
    return found


def problem(callback: object) -> str | None:
    if getattr(callback, "access_capability", "") is None:
        return None  # marked access.public
    view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view_class is not None and issubclass(view_class, APIView):
        if view_class.permission_classes != [access.ApiAccess]:
            return f"API view with its own permission_classes {view_class.permission_classes}"
        served = {name.upper() for name in METHODS if hasattr(view_class, name)}
        named = getattr(view_class, "session_permissions", {})
        if served - set(named):
            return f"no session_permissions for {sorted(served - set(named))}"
        if set(named.values()) - CAPABILITIES:
            return f"session_permissions outside access.Capability: {set(named.values()) - CAPABILITIES}"
        return None
    if view_class is not None:
        if issubclass(view_class, access.PageAccessMixin):
            return None if view_class.access_capability in CAPABILITIES else "PageAccessMixin without a capability"
        if view_class.__module__.startswith(FRAMEWORK_MODULES):
            return None
        return "class-based view without access.PageAccessMixin"
    if getattr(callback, "__module__", "").startswith(FRAMEWORK_MODULES):
        return None
    if not hasattr(callback, "access_capability"):
        return "function view not wrapped by access.page_requires (or marked access.public)"
    return None


def test_every_url_decides_access_through_the_access_module():
    problems = {route: found for route, callback in patterns() if (found := problem(callback))}
    assert problems == {}


def test_the_walk_sees_pages_and_api_views():
    routes = {route for route, _ in patterns()}
    assert {"review/<int:pk>/", "api/recordings/<int:pk>/review/", "calibrations/", "reports/deviation/"} <= routes


def test_the_single_sign_on_pages_are_public_as_the_login_is():
    """Anyone may start a login at the identity provider and come back from it (both answer 404 until
    single sign-on is configured: tests/test_sso.py)."""
    routes = dict(patterns())
    assert [routes[route].access_capability for route in ("oidc/authenticate/", "oidc/callback/")] == [None, None]


def test_a_view_checking_access_by_hand_is_caught():
    def by_hand(request):
        return None

    class OwnPermissions(APIView):
        permission_classes = []

        def get(self, request):
            return None

    class Unnamed(APIView):
        def post(self, request):
            return None

    assert "not wrapped" in problem(by_hand)
    assert "own permission_classes" in problem(OwnPermissions.as_view())
    assert "no session_permissions for ['POST']" in problem(Unnamed.as_view())
    assert problem(access.page_requires(access.Capability.REVIEW)(by_hand)) is None


# What deciding access "any other way" looks like in code: none of it outside the access module, but
# in admin modules, where Django's ModelAdmin hooks (has_*_permission) are the admin's own system.
BY_HAND = {"has_perm", "permission_required", "login_required", "user_passes_test", "LoginRequiredMixin",
           "UserPassesTestMixin", "PermissionRequiredMixin", "BasePermission"}  # fmt: skip


def names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.add(node.name.split(".")[-1])
    return used & BY_HAND


@pytest.mark.parametrize("app", APPS)
def test_no_module_decides_access_by_hand(app):
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted((ROOT / app).rglob("*.py"))
        if path.name != "admin.py" and "migrations" not in path.parts and (found := names_used(path))
    }
    assert offenders == {}


def test_the_scan_sees_a_permission_check(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(user):\n    return user.has_perm('x.y')\n")
    assert names_used(module) == {"has_perm"}

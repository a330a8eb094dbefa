"""The README and docs/ stay true: the configuration table is exactly what the code reads, links resolve,
every shell block is run by a test (here, for the commands no other test runs) or says why it cannot be,
and the first hour's commands run as written."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.api.test_redis_down import own_redis  # noqa: F401 (a fixture)
from tests.support.curl import curl_run
from tests.support.docs import ROOT, anchors, doc_pages, doc_text, docs_blocks, docs_section, manage_commands

CONFIGURATION = "docs/operations/configuration.md"
RUN_HERE = ("run-by", "tests/test_docs.py")
NAME = r"([A-Z][A-Z0-9_]*)"
# How the code reads an environment variable: django-environ's `env(...)`, `env.int(...)`..., and os.environ.
ENV_READS = (
    re.compile(rf"\benv(?:\.\w+)?\(\s*\"{NAME}\""),
    re.compile(rf"\bos\.environ(?:\.get|\.setdefault)?\(\s*\"{NAME}\""),
    re.compile(rf"\bos\.environ\[\s*\"{NAME}\"\s*\]"),
    re.compile(rf"\bos\.getenv\(\s*\"{NAME}\""),
)
SETTING_READS = (re.compile(r"\bsettings\.(QA_[A-Z0-9_]+)"), re.compile(r"getattr\(\s*settings,\s*\"(QA_[A-Z0-9_]+)\""))


def code_modules() -> list[Path]:
    """config/ and every Django app (a folder with an apps.py, wherever it sits), migrations and tests aside."""
    skip = {".venv", "tests", "bench", "migrations", "node_modules"}
    apps = [path.parent for path in ROOT.rglob("apps.py") if not skip & set(path.relative_to(ROOT).parts)]
    modules = {module for folder in [ROOT / "config", *apps] for module in folder.rglob("*.py")}
    return sorted(module for module in modules if not skip & set(module.relative_to(ROOT).parts))


def names_read(patterns) -> dict[str, set[str]]:
    """Each name the patterns find, with the modules it is read in."""
    found: dict[str, set[str]] = {}
    for path in code_modules():
        text = path.read_text(encoding="utf-8")
        for pattern in patterns:
            for name in pattern.findall(text):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def configuration_table() -> set[str]:
    """The variables the configuration table's rows name (every backquoted name of a row's first cell)."""
    rows = [line for line in doc_text(CONFIGURATION).splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(rf"`{NAME}`", row.split(" | ", 1)[0])}


def test_the_configuration_table_is_every_variable_the_code_reads_and_no_other():
    read = names_read(ENV_READS)
    table = configuration_table()
    assert {name: sorted(where) for name, where in read.items() if name not in table} == {}, "not in the table"
    assert sorted(table - read.keys()) == [], "in the table, read by no code"


def test_every_qa_setting_the_code_reads_is_a_documented_variable_or_derived_from_them():
    """A `settings.QA_...` is either one of the table's variables, or computed in config/settings from
    them (QA_SSO from the OIDC variables, ...): none is a setting an operator could set but not read about."""
    defined = {
        name
        for path in (ROOT / "config" / "settings").glob("*.py")
        for name in re.findall(r"^(QA_[A-Z0-9_]+)\s*=", path.read_text(encoding="utf-8"), re.M)
    }
    table, variables = configuration_table(), names_read(ENV_READS)
    undocumented = {
        name: sorted(where)
        for name, where in names_read(SETTING_READS).items()
        if name not in table and (name not in defined or name in variables)
    }
    assert undocumented == {}


def test_links_between_the_readme_and_the_pages_resolve():
    broken = []
    for page in doc_pages():
        text = re.sub(r"^[ \t]*```.*?^[ \t]*```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_every_page_is_linked_from_the_readme_or_another_page():
    linked = set()
    for page in doc_pages():
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)", page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and (page.parent / target).resolve() != page:
                linked.add((page.parent / target).resolve())
    assert [str(page.relative_to(ROOT)) for page in doc_pages()[1:] if page not in linked] == []


def test_every_shell_block_is_run_by_a_test_or_says_why_not():
    """`<!-- run-by: tests/FILE.py -->` just before a block names a test file that reads that page;
    `<!-- not-run: reason -->` says why nothing can run it here. A block with neither fails."""
    problems = []
    for page in doc_pages():
        relative = str(page.relative_to(ROOT))
        for block in docs_blocks(page.read_text(encoding="utf-8")):
            where = f"{relative}:{block.line}"
            if block.marker is None:
                problems.append(f"{where}: neither <!-- run-by: tests/... --> nor <!-- not-run: reason -->")
            elif block.marker[0] == "not-run" and not block.marker[1]:
                problems.append(f"{where}: not-run without a reason")
            elif block.marker[0] == "run-by":
                test = (ROOT / block.marker[1]).resolve()
                if not (test.is_file() and test.is_relative_to(ROOT / "tests")):
                    problems.append(f"{where}: no test file {block.marker[1]}")
                elif relative not in test.read_text(encoding="utf-8"):
                    problems.append(f"{where}: {block.marker[1]} does not read {relative}")
    assert problems == []


def test_every_page_says_who_it_is_for_and_the_readme_stays_short():
    pages = [page for page in doc_pages()[1:] if page.name != "design.md"]  # the design notes are kept verbatim
    assert [str(page.relative_to(ROOT)) for page in pages if "\n**For:** " not in page.read_text()[:600]] == []
    assert len(doc_text("README.md").splitlines()) < 300


def run_block(code: str) -> str:
    """Run a block's `python manage.py` commands in order; what they print, and `> file` written as the shell would."""
    printed = io.StringIO()
    for command, *arguments in manage_commands(code):
        target = None
        if ">" in arguments:
            arguments, target = arguments[: arguments.index(">")], arguments[arguments.index(">") + 1]
        out = io.StringIO()
        call_command(command, *arguments, stdout=out)
        if target:
            Path(target).write_text(out.getvalue(), encoding="utf-8")
        printed.write(out.getvalue())
    return printed.getvalue()


def readme_block(heading: str) -> str:
    """The README section's one shell block that says this file runs it."""
    [block] = [block for block in docs_blocks(docs_section("README.md", heading)) if block.marker == RUN_HERE]
    return block.code


@pytest.mark.django_db
def test_the_readmes_first_hour_runs_as_written(tmp_path, monkeypatch):
    from access.models import Membership, Role
    from access.scope import scope_for
    from access.models import ApiKey
    from reviews.models import CalibrationSession
    from rubrics.models import Rubric
    from tests.factories import judged_recording

    # A fresh database, as a new operator has: add_member makes each person, a password printed once.
    assert not User.objects.exists()
    output = run_block(readme_block("Admin or operator"))
    passwords = dict(re.findall(r"^New user (\w+), password \(shown once\): (\S+)$", output, re.MULTILINE))
    assert sorted(passwords) == ["ana", "luis", "olga", "pablo"]
    assert all(User.objects.get(username=name).check_password(password) for name, password in passwords.items())

    roles = dict(Membership.objects.filter(workspace__slug="acme").values_list("user__username", "role"))
    assert roles == {
        "ana": "supervisor", "pablo": "supervisor", "luis": "qa_lead", "olga": "rubric_owner", "marta": "agent"
    }  # fmt: skip
    ana = Membership.objects.get(user__username="ana")
    assert set(ana.teams.values_list("name", flat=True)) == {"north", "south"}
    assert Membership.objects.get(user__username="marta").agent_id == "a-17"
    assert not User.objects.get(username="marta").has_usable_password()  # the admin's to set, or SSO's
    assert User.objects.get(username="luis").groups.filter(name="QA leads").exists()  # what the membership gives
    key = ApiKey.objects.get(name="acme-crm")
    assert (key.workspace.slug, key.source) == ("acme", "crm")

    monkeypatch.chdir(tmp_path)  # export_rubric writes its file here
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    output = run_block(readme_block("Rubric owner"))
    rubric = Rubric.objects.get(slug="customer-care")
    assert (rubric.workspace.slug, rubric.status) == ("acme", "published")
    assert "slug: customer-care" in (tmp_path / "customer-care.yaml").read_text()
    assert "two-behaviours" in output  # the lint's findings on the sample, as the README says

    for index in range(12):
        judged_recording(rubric=rubric, team="north", external_id=f"call-{index}")
    output = run_block(readme_block("QA lead"))
    session = CalibrationSession.objects.get(name="March, greeting")
    assert output.splitlines()[-1] == f"/api/calibrations/{session.pk}/"
    assert (session.lead.username, session.calls.count()) == ("luis", 10)
    assert set(session.participants.values_list("username", flat=True)) == {"ana", "pablo"}
    assert scope_for(User.objects.get(username="luis")).contains_recording(session.calls.first().recording)


@pytest.mark.django_db
def test_the_pages_manage_commands_run_as_written(tmp_path, monkeypatch):
    """The rubric owners', the QA leads' and the agents' pages, and the REST API page's key."""
    from access.models import Membership
    from access.models import ApiKey
    from reviews.models import CalibrationSession
    from rubrics.models import Rubric
    from tests.factories import UserFactory, judged_recording

    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    [rubrics] = docs_blocks(doc_text("docs/user/rubrics.md"))
    assert "two-behaviours" in run_block(rubrics.code)
    rubric = Rubric.objects.get(slug="customer-care", status="published")
    assert "slug: customer-care" in (tmp_path / "customer-care.yaml").read_text()

    UserFactory(username="luis", groups=["Supervisors", "QA leads"])
    for name in ("ana", "pablo"):
        UserFactory(username=name, groups=["Supervisors"])
    for index in range(10):
        judged_recording(rubric=rubric, external_id=f"call-{index}")
    [calibration] = docs_blocks(doc_text("docs/user/calibration.md"))
    run_block(calibration.code)
    assert CalibrationSession.objects.get(name="March, greeting").calls.count() == 10

    [agent] = docs_blocks(doc_text("docs/user/agents.md"))
    run_block(agent.code)
    marta = User.objects.get(username="marta")
    assert marta.check_password("a long pass phrase") and marta.email == "marta@example.com"
    assert Membership.objects.get(user=marta).agent_id == "agent-042"

    key_block = docs_blocks(docs_section("docs/api/rest.md", "Posting a recording from an external system"))[0]
    printed = run_block(key_block.code)
    key = ApiKey.objects.get(name="crm")
    assert (key.source, key.all_sources) == ("crm", False) and printed.strip()  # the key, printed once


@pytest.mark.django_db(transaction=True)
def test_the_documented_single_post_stores_the_call(live_server, own_redis):  # noqa: F811
    """The README's external-system curl and the REST API page's, the same command, against a live server;
    published to a Redis of the test's own, which nothing consumes."""
    from access.models import ApiKey
    from qa.models import Recording
    from tests.factories import published_rubric

    readme = readme_block("External system")
    [page] = [block.code for block in docs_blocks(doc_text("docs/api/rest.md")) if block.code.startswith("curl")][:1]
    assert readme == page
    published_rubric(slug="customer-care", language="en")
    key = io.StringIO()
    call_command("create_api_key", "crm", "--source", "crm", stdout=key)
    assert ApiKey.objects.get(name="crm").source == "crm"

    body, status = curl_run(readme.rstrip("\n"), server=live_server.url, key=key.getvalue().strip())

    assert status == "201", body
    recording = Recording.objects.get(pk=json.loads(body)["id"])
    assert (recording.source, recording.external_id, recording.agent_id, recording.language) == (
        "crm", "call-8812", "ag-101", "en"
    )  # fmt: skip
    assert recording.team == "cards" and recording.transcript.startswith("AGENT: Hello, this is Harbor Bank")

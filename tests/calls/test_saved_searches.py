"""Saved searches on the calls list: a person keeps the filters and words under a name, opens them as a
link, deletes one. Each person's own; a saved search keeps the query, never the calls, so it finds only
what its owner may see when it is opened."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from access.models import Role
from access.services import member_add
from calls.models import SavedSearch
from calls.services import saved_search_save
from core.errors import InvalidInputError
from tests.calls.conftest import ENGLISH, SPANISH, call
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):
    rubric = published_rubric(slug="care", name="Care")
    north = call(rubric, "north-1", SPANISH, "es", team="north")
    south = call(rubric, "south-1", SPANISH, "es", team="south")
    english = call(rubric, "north-en", ENGLISH, "en", team="north")
    marta = UserFactory(username="marta")
    member_add(user=marta, workspace=rubric.workspace, role=Role.SUPERVISOR)  # every team, for now
    return {"rubric": rubric, "north": north, "south": south, "english": english, "marta": marta}


def found(response) -> set[str]:
    return {row.recording.external_id for row in response.context["page"].rows}


def test_a_supervisor_saves_a_search_opens_it_as_a_link_and_deletes_it(world):
    client = client_for(world["marta"])
    response = client.post("/calls/saved/?q=factura&page=2&rubric=", {"name": "  Facturas dobles "}, follow=True)
    assert response.status_code == 200
    saved = SavedSearch.objects.get(user=world["marta"])
    # The filters and words, without the page or empty fields; the name as typed, trimmed.
    assert (saved.name, parse_qs(saved.query)) == ("Facturas dobles", {"q": ["factura"]})
    assert "Search saved as “Facturas dobles”." in response.content.decode()
    assert found(response) == {"north-1", "south-1"}  # it opens on the search it keeps

    page = client.get("/calls/")
    link = page.context["saved_searches"][0]
    html = page.content.decode()
    assert f'href="/calls/?{link.query}"' in html and ">Facturas dobles</a>" in html
    opened = client.get(f"/calls/?{link.query}")
    assert found(opened) == {"north-1", "south-1"}

    # The same name again keeps the new search in its place: one search a name.
    client.post("/calls/saved/?team=north", {"name": "Facturas dobles"})
    assert list(SavedSearch.objects.values_list("name", "query")) == [("Facturas dobles", "team=north")]

    response = client.post(f"/calls/saved/{saved.pk}/delete/", follow=True)
    assert "Saved search “Facturas dobles” deleted." in response.content.decode()
    assert not SavedSearch.objects.exists()


def test_a_saved_search_keeps_the_query_not_the_calls(world):
    """Saved while marta saw every team; after she is limited to north, it finds north's calls only."""
    client = client_for(world["marta"])
    client.post("/calls/saved/?q=factura", {"name": "Facturas"})
    query = SavedSearch.objects.get().query
    assert found(client.get(f"/calls/?{query}")) == {"north-1", "south-1"}
    member_add(user=world["marta"], workspace=world["rubric"].workspace, role=Role.SUPERVISOR, teams=["north"])
    assert found(client.get(f"/calls/?{query}")) == {"north-1"}


def test_each_person_sees_and_deletes_only_their_own(world):
    ana = UserFactory(username="ana")
    member_add(user=ana, workspace=world["rubric"].workspace, role=Role.SUPERVISOR)
    client_for(world["marta"]).post("/calls/saved/?team=north", {"name": "Norte de Marta"})
    theirs = SavedSearch.objects.get()
    ana_client = client_for(ana)
    page = ana_client.get("/calls/")
    assert list(page.context["saved_searches"]) == [] and "Norte de Marta" not in page.content.decode()
    assert ana_client.post(f"/calls/saved/{theirs.pk}/delete/").status_code == 404
    assert SavedSearch.objects.filter(pk=theirs.pk).exists()


@pytest.mark.parametrize(
    ("query", "data", "field", "message"),
    [
        ("q=factura", {"name": "   "}, "name", "This field is required."),
        ("q=factura", {"name": "x" * 101}, "name", "Ensure this value has at most 100 characters (it has 101)."),
        ("quality_max=abc", {"name": "Bajas"}, "quality_max", "Enter a number."),
    ],
)
def test_a_search_that_cannot_be_saved_says_why(world, query, data, field, message):
    response = client_for(world["marta"]).post(f"/calls/saved/?{query}", data)
    assert response.status_code == 400
    form = response.context["save_form"] if field == "name" else response.context["form"]
    assert form.errors[field] == [message]
    assert not SavedSearch.objects.exists()


def test_the_list_offers_to_save_the_search_shown(world):
    page = client_for(world["marta"]).get("/calls/?q=factura&team=north")
    html = page.content.decode()
    action = html.split('class="save-search"')[0].rsplit("<form", 1)[1]
    assert parse_qs(urlsplit(action.split('action="')[1].split('"')[0].replace("&amp;", "&")).query) == {
        "q": ["factura"], "team": ["north"],
    }  # fmt: skip


def test_the_service_refuses_what_the_database_cannot_keep(world):
    for name, message in (("\x00x", "A name cannot contain a null character."), ("y" * 101, "A name has at most 100 characters.")):
        with pytest.raises(InvalidInputError) as refused:
            saved_search_save(user=world["marta"], name=name, query="q=x")
        assert refused.value.errors == {"name": message}
    assert not SavedSearch.objects.exists()

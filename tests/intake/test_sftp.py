"""The SFTP drop folder against a real SFTP server on loopback (asyncssh's, tests/support/sftp_server.py),
reached by the real asyncssh client over SSH: the server's host key checked against the folder's
known_hosts file, a login with a key or a password, each file ingested once and moved aside, a failing
one with its reason; and what the operator did not allow refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from core.jobs import Outcome
from intake.folders import dropped_file_execute, folder_scan
from intake.jobs import IntakeError
from intake.models import DropFolder, DroppedFile
from qa.models import Recording
from tests.support.sftp_server import PASSWORD, USER, SFTPServer

pytestmark = pytest.mark.django_db

PASSWORD_VARIABLE = "ACME_SFTP_PASSWORD"


@pytest.fixture(scope="module")
def sftp_server(tmp_path_factory):
    with SFTPServer(root=tmp_path_factory.mktemp("sftp-root"), files=tmp_path_factory.mktemp("ssh")) as server:
        yield server


@pytest.fixture
def sftp_folder(sftp_server, acme, settings, tmp_path):
    """A folder of its own on the server (its inbox, as the test sees it on disk) and the DropFolder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INTAKE_SFTP_ALLOWED_HOSTS = [f"127.0.0.1:{sftp_server.port}"]
    settings.INTAKE_SFTP_FILES = [str(sftp_server.key_file), str(sftp_server.known_hosts_file)]
    inbox = sftp_server.root / tmp_path.name
    inbox.mkdir()
    folder = DropFolder(
        workspace=acme[0], slug="acme-sftp", kind="sftp", host="127.0.0.1", port=sftp_server.port, username=USER,
        key_file=str(sftp_server.key_file), known_hosts_file=str(sftp_server.known_hosts_file),
        path=f"/{tmp_path.name}", rubric_slug="care", source="five9",
    )  # fmt: skip
    folder.full_clean()
    folder.save()
    return folder, inbox


def files(inbox: Path) -> list[str]:
    return sorted(str(path.relative_to(inbox)) for path in inbox.rglob("*") if path.is_file())


def run_jobs() -> list[Outcome]:
    return [dropped_file_execute(job_id=pk).outcome for pk in DroppedFile.objects.filter(status="pending").values_list("pk", flat=True)]


def test_a_recording_dropped_on_the_server_is_ingested_once_and_moved_to_done(sftp_folder, stereo_wav):
    folder, inbox = sftp_folder
    (inbox / "call-1.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "call-1.json").write_text(json.dumps({"external_id": "five9-881", "agent": "ag-7", "team": "north"}))
    (inbox / "call-2.wav").write_bytes(stereo_wav.read_bytes())  # its sidecar not there yet: left alone
    assert folder_scan(folder=folder) == 1
    assert folder_scan(folder=folder) == 0
    assert run_jobs() == [Outcome.SUCCEEDED]
    recording = Recording.objects.get()
    assert (recording.external_id, recording.source, recording.agent_id, recording.team, recording.audio_channels) == (
        "five9-881", "five9", "ag-7", "north", 2,
    )  # fmt: skip
    assert recording.audio.read() == stereo_wav.read_bytes()
    assert DroppedFile.objects.get().checksum == f"sha256:{hashlib.sha256(stereo_wav.read_bytes()).hexdigest()}"
    assert files(inbox) == ["call-2.wav", "done/call-1.json", "done/call-1.wav"]
    # The same file dropped again: not ingested again, moved aside as before.
    (inbox / "call-1.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "call-1.json").write_text("{}")
    assert folder_scan(folder=folder) == 0
    assert Recording.objects.count() == 1 and "call-1.wav" not in files(inbox)


def test_a_malformed_manifest_on_the_server_is_moved_aside_with_its_reason(sftp_folder, stereo_wav):
    folder, inbox = sftp_folder
    (inbox / "bad.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "bad.json").write_text(json.dumps({"agent": "ag-1", "shift": "night"}))
    (inbox / "list.csv").write_text("name,agent\nx.wav,ag-1\n")
    assert folder_scan(folder=folder) == 1
    assert run_jobs() == [Outcome.FAILED]
    assert files(inbox) == [
        "failed/bad.json", "failed/bad.wav", "failed/bad.wav.reason.txt", "failed/list.csv", "failed/list.csv.reason.txt",
    ]  # fmt: skip
    assert (inbox / "failed" / "bad.wav.reason.txt").read_text().startswith(
        "manifest: Unknown field(s) shift in the manifest entry of bad.wav"
    )
    assert (inbox / "failed" / "list.csv.reason.txt").read_text() == (
        "The manifest list.csv is malformed: it has no 'file' column (its columns: name, agent).\n"
    )
    assert not Recording.objects.exists()


def test_a_server_whose_host_key_is_not_the_known_one_is_never_logged_in_to(
    sftp_folder, sftp_server, stereo_wav, tmp_path, settings
):
    folder, inbox = sftp_folder
    (inbox / "call.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "call.json").write_text("{}")
    assert folder_scan(folder=folder) == 1
    # Another key for the same host and port: a server that is not the one the operator checked.
    impostor = tmp_path / "known_hosts"
    impostor.write_text(f"[127.0.0.1]:{sftp_server.port} {sftp_server.client_key.export_public_key().decode()}")
    DropFolder.objects.filter(pk=folder.pk).update(known_hosts_file=str(impostor))
    folder.known_hosts_file = str(impostor)
    settings.INTAKE_SFTP_FILES = [*settings.INTAKE_SFTP_FILES, str(impostor)]
    logins = len(sftp_server.logins)
    with pytest.raises(IntakeError, match=r"^Cannot list /\S+ on sftp://127\.0\.0\.1:\d+: Host key is not trusted for host 127\.0\.0\.1\.$"):
        folder_scan(folder=folder)
    assert run_jobs() == [Outcome.RETRY]  # given back to try again: nothing lost, nothing moved
    assert "Host key is not trusted" in DroppedFile.objects.get().error
    assert len(sftp_server.logins) == logins and files(inbox) == ["call.json", "call.wav"]


def test_a_password_from_a_variable_the_operator_allowed_logs_in(sftp_folder, stereo_wav, settings, monkeypatch):
    folder, inbox = sftp_folder
    settings.INTAKE_SECRET_VARIABLES = [PASSWORD_VARIABLE]
    monkeypatch.setenv(PASSWORD_VARIABLE, PASSWORD)
    folder.key_file, folder.password_variable = "", PASSWORD_VARIABLE
    folder.full_clean()
    folder.save()
    (inbox / "call.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "call.json").write_text("{}")
    assert folder_scan(folder=folder) == 1 and run_jobs() == [Outcome.SUCCEEDED]
    monkeypatch.setenv(PASSWORD_VARIABLE, "wrong")
    (inbox / "other.wav").write_bytes(stereo_wav.read_bytes())
    (inbox / "other.json").write_text("{}")
    with pytest.raises(IntakeError, match="Permission denied"):
        folder_scan(folder=folder)


def test_a_host_file_or_variable_the_operator_did_not_allow_is_refused(sftp_folder, sftp_server, settings):
    folder, _inbox = sftp_folder
    folder.host, folder.port = "169.254.169.254", 22
    folder.key_file, folder.known_hosts_file, folder.password_variable = "/etc/ssh/ssh_host_ed25519_key", "", "SECRET_KEY"
    with pytest.raises(ValidationError) as refused:
        folder.full_clean()
    assert refused.value.message_dict == {
        "host": ["The address 169.254.169.254 is not allowed by INTAKE_SFTP_ALLOWED_HOSTS."],
        "key_file": [
            "/etc/ssh/ssh_host_ed25519_key is not a file the operator allowed: add it to INTAKE_SFTP_FILES or pick one of: "
            f"{sftp_server.key_file}, {sftp_server.known_hosts_file}."
        ],
        "known_hosts_file": ["Give the known_hosts file with the server's host key: an unchecked server is never trusted."],
        "password_variable": ["SECRET_KEY is not a variable the operator allowed: add it to INTAKE_SECRET_VARIABLES or pick one of: -."],
    }
    folder.host, folder.port = "127.0.0.1", 2222  # the allowed host, another port
    folder.key_file, folder.known_hosts_file, folder.password_variable = str(sftp_server.key_file), str(sftp_server.known_hosts_file), ""
    with pytest.raises(ValidationError) as refused:
        folder.full_clean()
    assert refused.value.message_dict == {
        "host": ["Port 2222 of 127.0.0.1 is not allowed by INTAKE_SFTP_ALLOWED_HOSTS: an entry without a port allows only "
                 "443 (https) or 80 (http); list the port with the host (127.0.0.1:2222) to allow it."]
    }
    folder.host = "127.0.0.1:22"
    with pytest.raises(ValidationError, match="Give the SFTP server's name or address alone"):
        folder.full_clean()
    # A row changed outside the admin is not scanned either.
    folder.save()
    assert folder_scan(folder=folder) == 0


def test_the_pages_sftp_configuration_is_accepted_as_written_and_a_port_it_does_not_list_is_not(acme, settings):
    """docs/operations/intake-folder.md's "An SFTP server": the operator's variables, read as the settings
    read them, and the admin's example fields make a folder that is accepted; the same server on another
    port, or another key file, is not."""
    import re

    from tests.support.docs import docs_blocks, docs_section

    section = docs_section("docs/operations/intake-folder.md", "An SFTP server")
    environment = docs_blocks(section)[0].code
    for line in environment.splitlines():
        name, _equals, value = line.split("#")[0].strip().partition("=")
        assert hasattr(settings, name), f"{name} is not a setting"
        setattr(settings, name, [item.strip() for item in value.split(",") if item.strip()])
    fields = {
        field: value for field, value in re.findall(r"^\| ([a-z_ ]+) \| `([^`]*)`", section, re.M)
    }  # the admin's table: each field's first example
    assert set(fields) == {"host", "port", "user name", "private key file", "known_hosts file", "path"}
    folder = DropFolder(
        workspace=acme[0], slug="acme-five9", kind="sftp", host=fields["host"], port=int(fields["port"]),
        username=fields["user name"], key_file=fields["private key file"], known_hosts_file=fields["known_hosts file"],
        path=fields["path"], rubric_slug="care", source="five9",
    )  # fmt: skip
    folder.full_clean()
    folder.password_variable = "ACME_SFTP_PASSWORD"  # the page's other way in
    folder.full_clean()
    folder.port = 2222
    with pytest.raises(ValidationError, match="Port 2222 of 10.20.0.15 is not allowed by INTAKE_SFTP_ALLOWED_HOSTS"):
        folder.full_clean()
    folder.port, folder.key_file = 22, "/root/.ssh/id_ed25519"
    with pytest.raises(ValidationError, match="is not a file the operator allowed: add it to INTAKE_SFTP_FILES"):
        folder.full_clean()

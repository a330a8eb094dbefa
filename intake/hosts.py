"""Which hosts an intake may reach: a Twilio recording's URL (INTAKE_TWILIO_ALLOWED_HOSTS) and an S3
endpoint (INTAKE_S3_ALLOWED_HOSTS), both lists the operator sets.

An entry is a host name (`api.twilio.com`), a domain with its subdomains (`.amazonaws.com`) or an address
(`127.0.0.1`), each with an optional port (`127.0.0.1:9000`); without a port only the scheme's own (443,
80) is allowed, so listing an internal address does not open every service on it. A listed name that
resolves to a loopback, private or other non-public address is refused unless that address is itself
listed: DNS cannot lead an intake inside the network. A URL may carry no user or password.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.utils.translation import gettext as _

from core.errors import InvalidInputError

_SCHEME_PORTS = {"https": 443, "http": 80}


class HostNotAllowed(InvalidInputError):
    """The URL may not be reached; the message names the setting."""

    def __init__(self, message: str) -> None:
        super().__init__({"url": message})
        self.message = message

    def __str__(self) -> str:
        return self.message


def _split(entry: str) -> tuple[str, int | None]:
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _bracket, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, int(port)
    return entry, None


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def url_check(url: str, *, allowed: list[str], setting: str) -> str:
    """`url` if its scheme, host and port are allowed by `allowed` (the list of `setting`); HostNotAllowed
    naming the problem otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port or _SCHEME_PORTS.get(parts.scheme, 0)
    except ValueError as error:
        raise HostNotAllowed(_("'%(url)s' is not a valid URL: %(error)s.") % {"url": url, "error": error}) from None
    if parts.scheme not in _SCHEME_PORTS or not parts.hostname:
        raise HostNotAllowed(_("The URL must be http:// or https:// with a host: '%(url)s'.") % {"url": url})
    if parts.username is not None or parts.password is not None:
        raise HostNotAllowed(_("The URL may not carry a user or password: '%(url)s'.") % {"url": url})
    host = parts.hostname.lower().removesuffix(".")
    entries = []
    for entry in allowed:
        if entry.strip():
            try:
                entries.append(_split(entry))
            except ValueError:
                raise HostNotAllowed(
                    _("%(setting)s has an entry that is not a host with an optional port: '%(entry)s'.")
                    % {"setting": setting, "entry": entry}
                ) from None

    def listed(name: str, entry_host: str) -> bool:
        return name == entry_host or (entry_host.startswith(".") and (name == entry_host[1:] or name.endswith(entry_host)))

    matching = [(entry_host, entry_port) for entry_host, entry_port in entries if listed(host, entry_host)]
    if not matching:
        raise HostNotAllowed(
            _("The host %(host)s is not allowed by %(setting)s (allowed: %(allowed)s).")
            % {"host": host, "setting": setting, "allowed": ", ".join(allowed) or "-"}
        )
    if not any(entry_port == port or (entry_port is None and port == _SCHEME_PORTS[parts.scheme]) for _h, entry_port in matching):
        raise HostNotAllowed(
            _("Port %(port)s of %(host)s is not allowed by %(setting)s: list it as %(host)s:%(port)s.")
            % {"host": host, "port": port, "setting": setting}
        )
    if _address(host) is None:  # a name: every address it resolves to must be public or listed
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise HostNotAllowed(_("The host %(host)s does not resolve: %(error)s.") % {"host": host, "error": error}) from None
        listed_addresses = {_address(entry_host) for entry_host, _p in entries} - {None}
        for info in infos:
            address = _address(str(info[4][0]).split("%")[0])
            if address is not None and not address.is_global and address not in listed_addresses:
                raise HostNotAllowed(
                    _("The host %(host)s resolves to %(address)s, a non-public address %(setting)s does not list.")
                    % {"host": host, "address": address, "setting": setting}
                )
    return url

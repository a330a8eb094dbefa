"""Which URLs a webhook may reach: QA_WEBHOOK_ALLOWED_HOSTS, checked when a subscription is saved and
again before every attempt.

An entry is a host name (`hooks.example.com`), a domain with its subdomains (`.example.com`), `*` (any
host name), or an address or network (`203.0.113.7`, `10.20.0.0/16`). The URL's host must match an
entry, and every address it resolves to must be public or inside a listed address or network: a
listed name that resolves (or is later made to resolve) to a loopback, private, link-local or other
non-public address is refused, so DNS cannot lead a webhook inside the network. The attempt then
connects to the address that was checked, not to a second resolution of the name.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class HostNotAllowed(Exception):
    """The URL may not be reached; the message says why, naming the setting."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as in the URL: sent as Host and checked against the certificate
    port: int
    path: str  # with its query
    address: str  # the checked address to connect to


def _allowlist() -> tuple[set[str], list[Network]]:
    names, networks = set(), []
    for entry in settings.QA_WEBHOOK_ALLOWED_HOSTS:
        entry = entry.strip().lower()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            names.add(entry)
    return names, networks


def _public(address: Address) -> bool:
    return address.is_global and not address.is_multicast


def _name_listed(host: str, names: set[str]) -> bool:
    if "*" in names or host in names:
        return True
    return any(entry.startswith(".") and (host == entry[1:] or host.endswith(entry)) for entry in names)


def _address(text: str) -> Address:
    address = ipaddress.ip_address(text.split("%")[0])
    # ::ffff:127.0.0.1 is 127.0.0.1: judge the IPv4 address it carries.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def url_target(url: str) -> Target:
    """Check `url` against the allowlist, resolving its host; the address to connect to.
    Raises HostNotAllowed naming the problem."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise HostNotAllowed(_("'%(url)s' is not a valid URL: %(error)s.") % {"url": url, "error": error}) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HostNotAllowed(_("A webhook URL must be http:// or https:// with a host: '%(url)s'.") % {"url": url})
    if parts.username is not None or parts.password is not None:
        raise HostNotAllowed(_("A webhook URL may not carry a user or password; the signature authenticates it."))
    host = parts.hostname.lower()
    names, networks = _allowlist()
    if not names and not networks:
        raise HostNotAllowed(_("Webhooks are off: QA_WEBHOOK_ALLOWED_HOSTS lists no host."))
    try:
        literal: Address | None = _address(host)
    except ValueError:
        literal = None
    if literal is not None:
        allowed = any(literal in network for network in networks) or ("*" in names and _public(literal))
        if not allowed:
            raise HostNotAllowed(
                _("The address %(host)s is not allowed by QA_WEBHOOK_ALLOWED_HOSTS.") % {"host": host}
            )
        addresses = [literal]
    else:
        if not _name_listed(host, names):
            raise HostNotAllowed(_("The host %(host)s is not allowed by QA_WEBHOOK_ALLOWED_HOSTS.") % {"host": host})
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise HostNotAllowed(_("The host %(host)s does not resolve: %(error)s.") % {"host": host, "error": error}) from None
        addresses = list(dict.fromkeys(_address(info[4][0]) for info in infos))
    for address in addresses:
        if not _public(address) and not any(address in network for network in networks):
            raise HostNotAllowed(
                _(
                    "The host %(host)s resolves to %(address)s, a loopback, private or other non-public address "
                    "that QA_WEBHOOK_ALLOWED_HOSTS does not list."
                )
                % {"host": host, "address": address}
            )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme=parts.scheme, host=host, port=port, path=path, address=str(addresses[0]))

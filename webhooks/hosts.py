"""Which URLs a webhook may reach: QA_WEBHOOK_ALLOWED_HOSTS, checked when a subscription is saved and
again before every attempt.

An entry is a host name (`hooks.example.com`), a domain with its subdomains (`.example.com`), `*` (any
host name), or an address or network (`203.0.113.7`, `10.20.0.0/16`, `[fd00::1]`), each with an optional
port (`127.0.0.1:8443`, `[::1]:9000`, `hooks.internal:*` for any port). Without a port an entry allows
only the URL scheme's own port (443 for https, 80 for http): allowing an internal address must not allow
every service listening on it (the judge's model server, the app itself), whose answers would come back
in the delivery log. The URL's host and port must match an entry, and every address it resolves to must
be public or inside a listed address or network with that port: a listed name that resolves (or is
later made to resolve) to a loopback, private, link-local or other non-public address is refused, so DNS
cannot lead a webhook inside the network. A host written as a number in another form than a dotted quad
(`2130706433`, `0177.0.0.1`, `0x7f.1`), which resolvers read as an address, is refused: an address is
written as one. The attempt then connects to the address that was checked, not to a second resolution
of the name, and follows no redirect.
"""

from __future__ import annotations

import ipaddress
import re
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


ANY_PORT = None  # an entry's ports: a set, or ANY_PORT for `:*`


@dataclass(frozen=True)
class _Entry:
    name: str = ""  # a host name, ".domain" or "*"
    network: Network | None = None
    ports: frozenset[int] | None = frozenset()  # empty: the URL scheme's own port; None: any

    def allows_port(self, port: int, scheme: str) -> bool:
        if self.ports is ANY_PORT:
            return True
        return port in self.ports if self.ports else port == _SCHEME_PORTS[scheme]


_SCHEME_PORTS = {"https": 443, "http": 80}


def _entry(text: str) -> _Entry:
    """One QA_WEBHOOK_ALLOWED_HOSTS entry: `host`, `host:port`, `host:*`, `[v6]`, `[v6]:port`, a bare
    IPv6 address or network (no port), `address/bits` and `address/bits:port`."""
    host, port = text, ""
    if text.startswith("["):
        host, _bracket, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise ValueError(text)
            port = rest[1:]
    elif text.count(":") == 1:
        host, port = text.split(":")
    if port == "*":
        ports = ANY_PORT
    elif port:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(text)
        ports = frozenset({int(port)})
    else:
        ports = frozenset()
    try:
        return _Entry(network=ipaddress.ip_network(host, strict=False), ports=ports)
    except ValueError:
        return _Entry(name=host.rstrip("."), ports=ports)


def _allowlist() -> list[_Entry]:
    entries = []
    for text in settings.QA_WEBHOOK_ALLOWED_HOSTS:
        text = text.strip().lower()
        if not text:
            continue
        try:
            entries.append(_entry(text))
        except ValueError:
            raise HostNotAllowed(
                _("QA_WEBHOOK_ALLOWED_HOSTS has an entry that is not a host, address or network with an optional "
                  "port: '%(entry)s'.") % {"entry": text}
            ) from None
    return entries


def _public(address: Address) -> bool:
    return address.is_global and not address.is_multicast


def _name_listed(host: str, entry: _Entry) -> bool:
    name = entry.name
    if not name:
        return False
    return name in ("*", host) or (name.startswith(".") and (host == name[1:] or host.endswith(name)))


# A host that is a number in some form (its last label all digits, or hexadecimal): resolvers read
# "2130706433", "0177.0.0.1" and "0x7f.1" as 127.0.0.1. No host name ends in such a label.
_NUMERIC_HOST = re.compile(r"(?:^|\.)(?:\d+|0x[0-9a-f]*)$")


def _address(text: str) -> Address:
    address = ipaddress.ip_address(text.split("%")[0])
    # ::ffff:127.0.0.1 is 127.0.0.1: judge the IPv4 address it carries.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _port_refused(host: str, port: int) -> HostNotAllowed:
    return HostNotAllowed(
        _(
            "Port %(port)s of %(host)s is not allowed by QA_WEBHOOK_ALLOWED_HOSTS: an entry without a port allows "
            "only 443 (https) or 80 (http); list the port with the host (%(host)s:%(port)s) to allow it."
        )
        % {"host": host, "port": port}
    )


def url_target(url: str) -> Target:
    """Check `url` against the allowlist, resolving its host; the address to connect to.
    Raises HostNotAllowed naming the problem."""
    try:
        parts = urlsplit(url)
        port = parts.port or _SCHEME_PORTS.get(parts.scheme, 80)
    except ValueError as error:
        raise HostNotAllowed(_("'%(url)s' is not a valid URL: %(error)s.") % {"url": url, "error": error}) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HostNotAllowed(_("A webhook URL must be http:// or https:// with a host: '%(url)s'.") % {"url": url})
    if parts.username is not None or parts.password is not None:
        raise HostNotAllowed(_("A webhook URL may not carry a user or password; the signature authenticates it."))
    # A trailing dot names the same host (the root of DNS): "127.0.0.1." is 127.0.0.1.
    host = parts.hostname.lower().removesuffix(".")
    entries = _allowlist()
    if not entries:
        raise HostNotAllowed(_("Webhooks are off: QA_WEBHOOK_ALLOWED_HOSTS lists no host."))
    in_networks = [entry for entry in entries if entry.network is not None and entry.allows_port(port, parts.scheme)]
    try:
        literal: Address | None = _address(host)
    except ValueError:
        literal = None
    if literal is None and _NUMERIC_HOST.search(host):
        raise HostNotAllowed(
            _("The host %(host)s is a number, not a name: write an address as one (127.0.0.1, [::1]).") % {"host": host}
        )
    if literal is not None:
        allowed = any(literal in entry.network for entry in in_networks) or (
            _public(literal) and any(entry.name == "*" and entry.allows_port(port, parts.scheme) for entry in entries)
        )
        if not allowed:
            listed = any(entry.network is not None and literal in entry.network for entry in entries) or (
                _public(literal) and any(entry.name == "*" for entry in entries)
            )
            if listed:
                raise _port_refused(host, port)
            raise HostNotAllowed(
                _("The address %(host)s is not allowed by QA_WEBHOOK_ALLOWED_HOSTS.") % {"host": host}
            )
        addresses = [literal]
    else:
        listed = [entry for entry in entries if _name_listed(host, entry)]
        if not listed:
            raise HostNotAllowed(_("The host %(host)s is not allowed by QA_WEBHOOK_ALLOWED_HOSTS.") % {"host": host})
        if not any(entry.allows_port(port, parts.scheme) for entry in listed):
            raise _port_refused(host, port)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise HostNotAllowed(_("The host %(host)s does not resolve: %(error)s.") % {"host": host, "error": error}) from None
        addresses = list(dict.fromkeys(_address(info[4][0]) for info in infos))
    for address in addresses:
        if not _public(address) and not any(address in entry.network for entry in in_networks):
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

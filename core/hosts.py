"""Which URLs Veredicto may connect to: one allowlist rule for every outbound call, each caller passing
its operator's list and that setting's name (QA_WEBHOOK_ALLOWED_HOSTS, INTAKE_TWILIO_ALLOWED_HOSTS,
INTAKE_S3_ALLOWED_HOSTS, QA_JUDGE_ALLOWED_HOSTS).

An entry is a host name (`hooks.example.com`), a domain with its subdomains (`.example.com`), `*` (any
host name), or an address or network (`203.0.113.7`, `10.20.0.0/16`, `[fd00::1]`), each with an optional
port (`127.0.0.1:8443`, `[::1]:9000`, `hooks.internal:*` for any port). Without a port an entry allows
only the URL scheme's own port (443 for https, 80 for http): allowing an internal address must not allow
every service listening on it (the judge's model server, the app itself), whose answers could come back
to whoever chose the URL. The URL's host and port must match an entry, and every address it resolves to
must be public or inside a listed address or network with that port: a listed name that resolves (or is
later made to resolve) to a loopback, private, link-local or other non-public address is refused, so DNS
cannot lead a call inside the network. A host written as a number in another form than a dotted quad
(`2130706433`, `0177.0.0.1`, `0x7f.1`), which resolvers read as an address, is refused: an address is
written as one.

`url_target` checks a URL and returns the address it checked; `target_connection` connects to that
address, not to a second resolution of the name, so DNS rebinding cannot swap it between the check and
the connection. A client that makes its own connections (the judges' `openai` client) can only ask
`host_listed`, by name.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.utils.translation import gettext as _

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class HostNotAllowed(Exception):
    """The URL may not be reached; the message says why, naming the host and the setting."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as in the URL: sent as Host and checked against the certificate
    port: int
    path: str  # with its query
    addresses: tuple[str, ...]  # the checked addresses to connect to, in the resolver's order

    @property
    def address(self) -> str:
        return self.addresses[0]


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
    """One entry: `host`, `host:port`, `host:*`, `[v6]`, `[v6]:port`, a bare IPv6 address or network (no
    port), `address/bits` and `address/bits:port`."""
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
        if not host:
            raise
        return _Entry(name=host.rstrip("."), ports=ports)


def _allowlist(allowed: Iterable[str], setting: str) -> list[_Entry]:
    entries = []
    for text in allowed:
        text = text.strip().lower()
        if not text:
            continue
        try:
            entries.append(_entry(text))
        except ValueError:
            raise HostNotAllowed(
                _("%(setting)s has an entry that is not a host, address or network with an optional port: '%(entry)s'.")
                % {"setting": setting, "entry": text}
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


def _literal(host: str) -> Address | None:
    try:
        return _address(host)
    except ValueError:
        return None


def _port_refused(host: str, port: int, setting: str) -> HostNotAllowed:
    return HostNotAllowed(
        _(
            "Port %(port)s of %(host)s is not allowed by %(setting)s: an entry without a port allows only 443 "
            "(https) or 80 (http); list the port with the host (%(host)s:%(port)s) to allow it."
        )
        % {"host": host, "port": port, "setting": setting}
    )


def url_target(url: str, *, allowed: Iterable[str], setting: str) -> Target:
    """Check `url` against `allowed` (the operator's list, `setting` its name), resolving its host; the
    address to connect to. Raises HostNotAllowed naming the problem."""
    try:
        parts = urlsplit(url)
        port = parts.port or _SCHEME_PORTS.get(parts.scheme, 80)
    except ValueError as error:
        raise HostNotAllowed(_("'%(url)s' is not a valid URL: %(error)s.") % {"url": url, "error": error}) from None
    if parts.scheme not in _SCHEME_PORTS or not parts.hostname:
        raise HostNotAllowed(_("The URL must be http:// or https:// with a host: '%(url)s'.") % {"url": url})
    if parts.username is not None or parts.password is not None:
        # Not echoed: the message is stored and shown, the password would be too.
        raise HostNotAllowed(_("The URL may not carry a user or password."))
    # A trailing dot names the same host (the root of DNS): "127.0.0.1." is 127.0.0.1.
    host = parts.hostname.lower().removesuffix(".")
    entries = _allowlist(allowed, setting)
    if not entries:
        raise HostNotAllowed(_("%(setting)s lists no host, so none may be reached.") % {"setting": setting})
    in_networks = [entry for entry in entries if entry.network is not None and entry.allows_port(port, parts.scheme)]
    literal = _literal(host)
    if literal is None and _NUMERIC_HOST.search(host):
        raise HostNotAllowed(
            _("The host %(host)s is a number, not a name: write an address as one (127.0.0.1, [::1]).") % {"host": host}
        )
    if literal is not None:
        allowed_here = any(literal in entry.network for entry in in_networks) or (
            _public(literal) and any(entry.name == "*" and entry.allows_port(port, parts.scheme) for entry in entries)
        )
        if not allowed_here:
            listed = any(entry.network is not None and literal in entry.network for entry in entries) or (
                _public(literal) and any(entry.name == "*" for entry in entries)
            )
            if listed:
                raise _port_refused(host, port, setting)
            raise HostNotAllowed(
                _("The address %(host)s is not allowed by %(setting)s.") % {"host": host, "setting": setting}
            )
        addresses = [literal]
    else:
        listed = [entry for entry in entries if _name_listed(host, entry)]
        if not listed:
            raise HostNotAllowed(_("The host %(host)s is not allowed by %(setting)s.") % {"host": host, "setting": setting})
        if not any(entry.allows_port(port, parts.scheme) for entry in listed):
            raise _port_refused(host, port, setting)
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
                    "that %(setting)s does not list."
                )
                % {"host": host, "address": address, "setting": setting}
            )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme=parts.scheme, host=host, port=port, path=path, addresses=tuple(map(str, addresses)))


def host_listed(host: str, *, port: int, allowed: Iterable[str], setting: str) -> bool:
    """Whether `host` (a name or an address, as a URL writes it) and `port` match an entry of `allowed`,
    by name, without resolving; an entry without a port allows any port here. The check for a client
    that makes its own connections and so cannot be held to a checked address: it says where the
    client may go, not what a name resolves to. HostNotAllowed for an entry that is not one."""
    entries = _allowlist(allowed, setting)
    host = host.lower().removesuffix(".")
    literal = _literal(host)
    if not host or (literal is None and _NUMERIC_HOST.search(host)):
        return False

    def port_allowed(entry: _Entry) -> bool:
        return entry.ports is ANY_PORT or not entry.ports or port in entry.ports

    if literal is not None:
        return any(
            port_allowed(entry)
            and ((entry.network is not None and literal in entry.network) or (entry.name == "*" and _public(literal)))
            for entry in entries
        )
    return any(port_allowed(entry) and _name_listed(host, entry) for entry in entries)


def _connect(target: Target, timeout: float) -> socket.socket:
    """A socket to the first of the checked addresses that answers (a name with an IPv6 and an IPv4
    address may be reachable on one only), never to a second resolution of the name."""
    error: OSError | None = None
    for address in target.addresses:
        try:
            return socket.create_connection((address, target.port), timeout)
        except OSError as failure:
            error = failure
    raise error or OSError(f"No address to connect to for {target.host}.")


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the addresses the allowlist checked, whatever the name resolves to now."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._target = target

    def connect(self) -> None:
        self.sock = _connect(self._target, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self._target = target

    def connect(self) -> None:
        sock = _connect(self._target, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # the certificate names the host


def target_connection(target: Target, *, timeout: float) -> http.client.HTTPConnection:
    """A connection to `target`'s checked address, sending its host as Host (and, over https, checking
    the certificate against it). It follows no redirect: a caller that follows one checks its URL first."""
    connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    return connection_class(target, timeout)

"""Connections for a request: direct, or through the proxy the environment names, as httpx
picked one (``trust_env``).

The environment as ``urllib.request.getproxies`` reads it (lower-case names first):
HTTP_PROXY for http URLs, HTTPS_PROXY for https, ALL_PROXY for both; NO_PROXY lists what
bypasses it -- ``*``, an address or ``localhost`` exactly, a name with its subdomains
(``example.com``), only the subdomains (``.example.com``), each with an optional port or
``scheme://``. A proxy URL without a scheme is http://. An http URL is sent to the proxy
whole; an https URL goes through a CONNECT tunnel (http.client's ``set_tunnel``), TLS
verified against the endpoint's name. A user and password in the proxy's URL are sent as
``Proxy-Authorization: Basic``. Not supported, each failing with ProxyError saying so: a
SOCKS proxy (httpx needed the socksio package for one, not installed with it), and an
https:// proxy in front of an https:// endpoint (TLS inside TLS).
"""
from __future__ import annotations

import base64
import http.client
import ssl
import urllib.request
from urllib.parse import unquote, urlsplit

from msgspec import Struct

from cascade.turns.httperrors import ProxyError, UnsupportedProtocol

DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(Struct, frozen=True):
    """Where a connection goes: the URL's scheme, host and port, and the proxy (or None)."""
    scheme: str
    host: str
    port: int
    proxy: str | None


def proxy_for(scheme: str, host: str, port: int) -> str | None:
    """The proxy URL for a request to ``scheme://host:port`` as httpx picks it from the
    environment (see the module's docstring), or None."""
    found = urllib.request.getproxies()
    for entry in (e.strip() for e in found.get("no", "").split(",")):
        if entry == "*" or (entry and _bypassed(entry, scheme, host.lower(), port)):
            return None
    url = found.get(scheme) or found.get("all")
    if not url:
        return None
    return url if "://" in url else f"http://{url}"


def _bypassed(entry: str, scheme: str, host: str, port: int) -> bool:
    """Whether the NO_PROXY ``entry`` covers the host (as httpx reads one: an address or
    ``localhost`` exactly, a name with its subdomains, ``.name`` its subdomains only, an
    optional port, an optional ``scheme://``)."""
    if "://" not in entry and entry.count(":") > 1 and not entry.startswith("["):
        entry = f"[{entry}]"  # an IPv6 address
    parts = urlsplit(entry if "://" in entry else f"all://{entry}")
    if parts.scheme not in ("all", scheme):
        return False
    try:
        wanted_port = parts.port
    except ValueError:
        return False
    if wanted_port is not None and wanted_port != port:
        return False
    name = (parts.hostname or "").lower()
    if not name or name == "*":
        return True
    if name.startswith("*."):
        return host.endswith(name[1:]) and len(host) > len(name) - 1
    if name.startswith("."):
        return host.endswith(name) and len(host) > len(name)
    name = name.lstrip("*")
    literal = name.replace(".", "").isdigit() or ":" in name or name == "localhost"
    return host == name or (not literal and host.endswith("." + name))


def connection(origin: Origin, timeout: float,
               context: ssl.SSLContext) -> http.client.HTTPConnection:
    """A new connection for ``origin``: direct, to its proxy, or tunnelled through it."""
    if origin.proxy is None:
        if origin.scheme == "https":
            return http.client.HTTPSConnection(origin.host, origin.port, timeout=timeout,
                                               context=context)
        return http.client.HTTPConnection(origin.host, origin.port, timeout=timeout)
    proxy = urlsplit(origin.proxy)
    if proxy.scheme not in DEFAULT_PORTS:
        kind = "SOCKS proxies are" if proxy.scheme.startswith("socks") else \
            f"a {proxy.scheme}:// proxy is"
        raise ProxyError(f"{kind} not supported: give the proxy as http://host:port")
    if proxy.scheme == "https" and origin.scheme == "https":
        raise ProxyError("an https:// proxy in front of an https:// endpoint (TLS inside "
                         "TLS) is not supported: give the proxy as http://host:port")
    try:
        where = (proxy.hostname or "", proxy.port or DEFAULT_PORTS[proxy.scheme])
    except ValueError as exc:
        raise ProxyError(f"the proxy's URL is not valid: {exc}") from exc
    if origin.scheme == "https" or proxy.scheme == "https":
        conn = http.client.HTTPSConnection(*where, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(*where, timeout=timeout)
    if origin.scheme == "https":
        conn.set_tunnel(origin.host, origin.port, headers=proxy_auth(origin.proxy))
    return conn


def proxy_auth(proxy: str | None) -> dict[str, str]:
    """``Proxy-Authorization: Basic`` for a user and password in the proxy's URL."""
    parts = urlsplit(proxy or "")
    if not parts.username:
        return {}
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


class Request(Struct):
    """One request: where, what, and what to send."""
    origin: Origin
    target: str  # the path and query; the whole URL when sent to a proxy as is
    body: bytes
    headers: dict[str, str]


def request_for(url: str, body: bytes, headers: dict[str, str]) -> Request:
    """The request to send ``body`` to ``url``: where its connection goes (the proxy's
    included), its target and its headers."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise UnsupportedProtocol(f"the endpoint's URL is not valid: {exc}") from exc
    host = parts.hostname or ""
    if not host:
        raise UnsupportedProtocol("the endpoint's URL names no host")
    headers = dict(headers)
    if parts.username:  # as httpx: a user and password in the URL are sent as Basic auth
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    proxy = proxy_for(scheme, host, port)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if proxy is not None and scheme == "http":  # forwarded whole, not tunnelled
        netloc = parts.netloc.rpartition("@")[2]
        target = f"http://{netloc}{target}"
        headers.update(proxy_auth(proxy))
    return Request(Origin(scheme, host, port, proxy), target, body, headers)

"""URLs, hosts and page keys: the one place a web address is parsed.

Every layer that needs a host or a page identity (the provenance writer, site modes, the probe
cache, forget) calls these functions, so that ``CHASE.COM.``, ``chase.com:443`` and
``xn--...`` spellings resolve to the same host, and ``https://chase.com@evil.test/`` is
``evil.test``.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from vodou_desktop.errors import InvalidInput

WEB_SCHEMES = frozenset({"http", "https"})

# Query parameters that identify a campaign or a click, never the page itself.
TRACKING_PARAMS = frozenset(
    {
        "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "mc_cid", "mc_eid", "igshid",
        "yclid", "_ga", "_gl", "ref_src", "spm", "si", "oly_anon_id", "oly_enc_id", "vero_id",
        "mkt_tok", "__hssc", "__hstc", "__hsfp", "hsctatracking",
    }
)
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


def normalize_host(raw: str) -> str:
    """Canonical spelling of a host: lower case, no trailing dot, no port, IDNA as punycode.

    IPv4/IPv6 literals come back in their compressed form (IPv6 without brackets);
    ``localhost`` stays ``localhost``. Anything that is not a host raises ``InvalidInput``.
    """
    if not isinstance(raw, str):
        raise InvalidInput("host must be a string")
    host = raw.strip()
    if not host:
        raise InvalidInput("host is empty")
    if "://" in host or "/" in host or "@" in host or any(c.isspace() for c in host):
        raise InvalidInput(f"not a host name: {raw!r} (give a host like example.com, not a URL)")
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise InvalidInput(f"not a host name: {raw!r}")
        return _ip_literal(host[1:end], raw)
    if host.count(":") > 1:  # bare IPv6
        return _ip_literal(host, raw)
    if ":" in host:
        host, _, port = host.partition(":")
        if port and not port.isdigit():
            raise InvalidInput(f"not a host name: {raw!r} (bad port)")
    host = host.rstrip(".").lower()
    if not host:
        raise InvalidInput(f"not a host name: {raw!r}")
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise InvalidInput(f"not a valid international host name: {raw!r}") from exc
    labels = ascii_host.split(".")
    if len(ascii_host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise InvalidInput(f"not a host name: {raw!r}")
    return ascii_host


def _ip_literal(text: str, raw: str) -> str:
    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError as exc:
        raise InvalidInput(f"not a host name: {raw!r}") from exc


def host_of(url: str) -> str:
    """Host of a web URL (http/https only). Userinfo is dropped: ``a.com@b.test`` is ``b.test``."""
    parts = _split_web(url)
    return normalize_host(_netloc_host(parts.netloc, url))


def _split_web(url: str):  # type: ignore[no-untyped-def]
    if not isinstance(url, str) or not url.strip():
        raise InvalidInput("url is empty")
    try:  # a bad bracketed host ("https://[zz]/", "https://[::1") or port (":99999") is a ValueError
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (validates the port)
    except ValueError as exc:
        raise InvalidInput(f"not a valid URL: {url[:200]!r} ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in WEB_SCHEMES:
        shown = scheme or "no scheme"
        raise InvalidInput(f"not a web page URL ({shown}): only http and https pages have a site")
    if not parts.netloc:
        raise InvalidInput(f"URL has no host: {url!r}")
    return parts


def _netloc_host(netloc: str, url: str) -> str:
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        return hostport[: hostport.find("]") + 1] if "]" in hostport else hostport
    host = hostport.rpartition(":")[0] if hostport.count(":") == 1 else hostport
    if not host:
        raise InvalidInput(f"URL has no host: {url!r}")
    return host


def page_key(url: str) -> str:
    """A page's identity: scheme + normalised host + path + query without tracking parameters.

    The fragment is dropped; default ports are dropped; ``utm_*`` and known click ids are
    removed; the remaining query parameters keep their order.
    """
    parts = _split_web(url)
    host = normalize_host(_netloc_host(parts.netloc, url))
    netloc = f"[{host}]" if ":" in host else host
    port = parts.port if _has_port(parts.netloc) else None
    scheme = parts.scheme.lower()
    if port and not (scheme == "http" and port == 80 or scheme == "https" and port == 443):
        netloc = f"{netloc}:{port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMS
    ]
    path = parts.path or "/"
    return urlunsplit((scheme, netloc, path, urlencode(query, doseq=True), ""))


def _has_port(netloc: str) -> bool:
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        return "]:" in hostport
    return hostport.count(":") == 1


def host_covers(rule_host: str, host: str) -> bool:
    """True when ``rule_host`` is ``host`` or a parent domain of it (label boundary only)."""
    return host == rule_host or host.endswith("." + rule_host)


_SCHEME_PREFIX = re.compile(r"^([a-z][a-z0-9+.-]*):(?!\d)", re.IGNORECASE)


def site_host(url_or_host: str) -> str:
    """The host of a web URL or of a bare host name (``example.com``, ``localhost:8080``).

    Anything with a scheme is parsed as a URL, so ``javascript:…``, ``data:…`` and ``file:///…``
    are refused as non-web URLs instead of being mistaken for a host.
    """
    if not isinstance(url_or_host, str):
        raise InvalidInput("host must be a string")
    text = url_or_host.strip()
    if "://" in text or (_SCHEME_PREFIX.match(text) and not _is_ipv6(text)):
        return host_of(text)
    return normalize_host(text)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True

"""Request -> cURL command line: :meth:`crawlfw.http.Request.to_curl`, whose public
path is also Scrapy 2's :func:`crawlfw.utils.request.request_to_curl`.

It lives in ``http/`` so that ``http/`` never imports :mod:`crawlfw.utils.request`,
which builds on ``http/`` (no import circle: ``tests/test_layers.py``).
"""

import shlex

__all__ = ["request_to_curl"]


def request_to_curl(request) -> str:
    """Return a cURL command line that makes ``request`` (Scrapy 2.11's
    ``request_to_curl``): method, URL, headers, cookies (``--cookie``) and body
    (``--data-raw``), each quoted for a POSIX shell.

    Args:
        request: a :class:`~crawlfw.http.Request`.

    Returns:
        str: ``"curl -X METHOD URL ..."``.
    """
    parts = ["curl", "-X", request.method, shlex.quote(request.url)]
    for name, values in request.headers.items():
        for value in values:
            header = f"{name.decode('latin-1')}: {value.decode('latin-1')}"
            parts += ["-H", shlex.quote(header)]
    cookies = request.cookies
    if isinstance(cookies, dict) and cookies:
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        parts += ["--cookie", shlex.quote(cookie)]
    elif isinstance(cookies, list) and cookies:
        cookie = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
        parts += ["--cookie", shlex.quote(cookie)]
    if request.body:
        parts += ["--data-raw", shlex.quote(request.body.decode("latin-1"))]
    return " ".join(parts)

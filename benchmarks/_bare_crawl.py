"""The crawl benchmark's floor: the same crawl as the spiders, with no framework.

One thread, one ``pycurl.CurlMulti`` with ``concurrency`` reused easy handles, lxml to
parse each page, ``urllib.parse.urljoin`` for links, a set of seen URLs, one JSON line
(``{"url", "title"}``) per page written to the output file.

    python benchmarks/_bare_crawl.py http://127.0.0.1:PORT/ out.jl [--concurrency 16]
"""

import argparse
import json
from collections import deque
from io import BytesIO
from urllib.parse import urldefrag, urljoin

import lxml.html
import pycurl


def crawl(start_url: str, out_path: str, concurrency: int = 16) -> int:
    """Crawl from ``start_url`` following every ``<a href>``; return the pages written."""
    multi = pycurl.CurlMulti()
    free = []
    for _ in range(concurrency):
        c = pycurl.Curl()
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.CONNECTTIMEOUT, 30)
        c.setopt(pycurl.TIMEOUT, 180)
        c.setopt(pycurl.ACCEPT_ENCODING, "")
        free.append(c)
    queue = deque([start_url])
    seen = {start_url}
    pages = 0
    active = 0
    with open(out_path, "w", encoding="utf-8") as out:
        while queue or active:
            while queue and free:
                c = free.pop()
                c.url = queue.popleft()
                c.buf = BytesIO()
                c.setopt(pycurl.URL, c.url)
                c.setopt(pycurl.WRITEDATA, c.buf)
                multi.add_handle(c)
                active += 1
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            while True:
                _, done, failed = multi.info_read()
                for c in done:
                    multi.remove_handle(c)
                    active -= 1
                    body = c.buf.getvalue()
                    url = c.url
                    free.append(c)
                    if c.getinfo(pycurl.RESPONSE_CODE) != 200 or not body:
                        continue
                    doc = lxml.html.fromstring(body)
                    title = doc.findtext(".//title")
                    out.write(json.dumps({"url": url, "title": title}) + "\n")
                    pages += 1
                    for href in doc.xpath("//a/@href"):
                        link = urldefrag(urljoin(url, href.strip()))[0]
                        if link not in seen:
                            seen.add(link)
                            queue.append(link)
                for c, _errno, _msg in failed:
                    multi.remove_handle(c)
                    active -= 1
                    free.append(c)
                if not done and not failed:
                    break
            if active and not (queue and free):
                multi.select(1.0)
    return pages


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("start_url")
    parser.add_argument("output")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    crawl(args.start_url, args.output, args.concurrency)


if __name__ == "__main__":
    main()

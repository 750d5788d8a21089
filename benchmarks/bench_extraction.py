"""Benchmark: selector and link extraction over real pages, crawlfw vs parsel/Scrapy.

Pages (read from ``../shared/sites``):

* books.toscrape.com-partial: all 200 book pages;
* aegisub.org: all 1047 HTML pages (``--quick``: every 5th page, 210 pages).

Tasks, each timed as the best of ``--repeat`` runs (seconds for the whole page set,
printed as milliseconds per page):

* ``parse``: ``Selector(text=page)`` for every page;
* ``css books`` / ``xpath books``: eight field extractions per book page with CSS
  (``::text``, ``::attr()``) or the equivalent XPath, on pre-parsed selectors;
* ``css aegisub``: four queries per page (all hrefs, title, meta description,
  headings), on pre-parsed selectors;
* ``links books`` / ``links aegisub``: ``HtmlResponse(url, body)`` then
  ``LinkExtractor(...).extract_links(response)``: decoding, parsing and extraction
  (both sides get Scrapy 1.2's ``IGNORED_EXTENSIONS``: later Scrapy skips more);
* ``links aegisub (pre-parsed)``: ``extract_links`` on responses whose selector was
  built before timing.

The same workload source runs in this process with crawlfw (``crawlfw.selector.Selector``,
``crawlfw.http.HtmlResponse``, ``crawlfw.linkextractors.LinkExtractor``) and, in a
subprocess of the reference virtualenv (``benchmarks/_refenv.py``), with
``parsel.Selector``, ``scrapy.http.HtmlResponse`` and
``scrapy.linkextractors.LinkExtractor``. ``ratio`` is crawlfw time / reference time
(below 1.0: crawlfw is faster). A checksum of the extracted values shows whether both
sides extracted the same data.

Usage: ``python benchmarks/bench_extraction.py [--repeat N] [--quick] [--no-reference]``
"""

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SITES = Path(os.environ.get("CRAWLFW_SHARED_SITES", REPO.parent / "shared" / "sites"))

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Runs unchanged on both sides: needs Selector, HtmlResponse, LinkExtractor bound, and
# defines run(config) -> {task: {"seconds": float, "pages": int, "checksum": str}}.
WORKLOAD = r'''
import gc
import hashlib
import time


def _load(pairs):
    pages = []
    for path, url in pairs:
        with open(path, "rb") as f:
            body = f.read()
        pages.append((url, body, body.decode("utf-8", "replace")))
    return pages


BOOK_CSS = [
    ("div.product_main h1::text", False),
    ("div.product_main p.price_color::text", False),
    ("div.product_main p.star-rating::attr(class)", False),
    ("table.table-striped td::text", True),
    ("ul.breadcrumb li a::text", True),
    ("article.product_pod h3 a::attr(title)", True),
    ("#product_description + p::text", False),
    ("div.product_main p.availability::text", True),
]

BOOK_XPATH = [
    ('//div[contains(@class, "product_main")]/h1/text()', False),
    ('//div[contains(@class, "product_main")]/p[@class="price_color"]/text()', False),
    ('//div[contains(@class, "product_main")]/p[contains(@class, "star-rating")]/@class', False),
    ('//table[contains(@class, "table-striped")]//td/text()', True),
    ('//ul[@class="breadcrumb"]/li/a/text()', True),
    ('//article[@class="product_pod"]/h3/a/@title', True),
    ('//div[@id="product_description"]/following-sibling::p[1]/text()', False),
    ('//div[contains(@class, "product_main")]/p[contains(@class, "availability")]/text()', True),
]

AEGISUB_CSS = [
    ("a::attr(href)", True),
    ("title::text", False),
    ("meta[name=description]::attr(content)", False),
    ("h1::text, h2::text, h3::text", True),
]


def _timed(fn, repeat):
    best = None
    result = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None or elapsed < best else best
    return best, result


def _digest(values):
    h = hashlib.sha1()
    n = 0
    for v in values:
        h.update(repr(v).encode("utf-8", "replace"))
        n += 1
    return f"{n}:{h.hexdigest()[:12]}"


def run(config):
    repeat = config["repeat"]
    books = _load(config["books"])
    aegisub = _load(config["aegisub"])
    allpages = books + aegisub
    results = {}

    def record(name, pages, fn):
        seconds, values = _timed(fn, repeat)
        results[name] = {"seconds": seconds, "pages": len(pages), "checksum": _digest(values)}

    def parse():
        return [len(Selector(text=text).xpath("//a")) for _, _, text in allpages]

    record("parse", allpages, parse)

    book_sels = [Selector(text=text) for _, _, text in books]
    aeg_sels = [Selector(text=text) for _, _, text in aegisub]

    def queries(sels, table, method):
        def fn():
            out = []
            for sel in sels:
                call = getattr(sel, method)
                for query, many in table:
                    found = call(query)
                    out.append(found.getall() if many else found.get())
            return out
        return fn

    record("css books", books, queries(book_sels, BOOK_CSS, "css"))
    record("xpath books", books, queries(book_sels, BOOK_XPATH, "xpath"))
    record("css aegisub", aegisub, queries(aeg_sels, AEGISUB_CSS, "css"))

    def links(pages):
        def fn():
            extractor = LinkExtractor(deny_extensions=config["deny_extensions"])
            out = []
            for url, body, _ in pages:
                response = HtmlResponse(url, body=body)
                out.extend((l.url, l.text, l.nofollow) for l in extractor.extract_links(response))
            return out
        return fn

    record("links books", books, links(books))
    record("links aegisub", aegisub, links(aegisub))

    responses = [HtmlResponse(url, body=body) for url, body, _ in aegisub]
    for response in responses:
        response.selector  # parse before timing

    def links_preparsed():
        extractor = LinkExtractor(deny_extensions=config["deny_extensions"])
        out = []
        for response in responses:
            out.extend((l.url, l.text, l.nofollow) for l in extractor.extract_links(response))
        return out

    record("links aegisub (pre-parsed)", aegisub, links_preparsed)
    return results
'''

REFERENCE_PRELUDE = """
import json, sys
from parsel import Selector
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
import parsel, scrapy
"""

REFERENCE_MAIN = """
config = json.load(sys.stdin)
out = run(config)
out["_versions"] = {"scrapy": scrapy.__version__, "parsel": parsel.__version__}
json.dump(out, sys.stdout)
"""


def page_sets(quick: bool):
    """Returns: (books, aegisub) as lists of ``[path, original URL]``."""
    books_root = SITES / "books.toscrape.com-partial"
    books = [
        [str(p), f"http://books.toscrape.com/catalogue/{p.parent.name}/index.html"]
        for p in sorted((books_root / "catalogue").glob("*/index.html"))
    ]
    aeg_root = SITES / "aegisub.org"
    aeg_paths = sorted(p for p in aeg_root.rglob("*") if p.suffix in (".html", ".htm"))
    if quick:
        aeg_paths = aeg_paths[::5]
    aegisub = []
    for p in aeg_paths:
        rel = p.relative_to(aeg_root).as_posix()
        if rel.endswith("/index.html"):
            rel = rel[: -len("index.html")]
        elif rel == "index.html":
            rel = ""
        aegisub.append([str(p), "https://aegisub.org/" + rel])
    return books, aegisub


def run_crawlfw(config):
    from crawlfw.http import HtmlResponse
    from crawlfw.linkextractors import LinkExtractor
    from crawlfw.selector import Selector

    namespace = {"Selector": Selector, "HtmlResponse": HtmlResponse, "LinkExtractor": LinkExtractor}
    exec(compile(WORKLOAD, "<workload>", "exec"), namespace)
    return namespace["run"](config)


def run_reference(python, config):
    script = REFERENCE_PRELUDE + WORKLOAD + REFERENCE_MAIN
    proc = subprocess.run(
        [python, "-c", script],
        input=json.dumps(config),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        print(f"reference run failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per task; the best is kept")
    parser.add_argument("--quick", action="store_true", help="every 5th aegisub.org page only")
    parser.add_argument("--no-reference", action="store_true", help="skip parsel/Scrapy")
    args = parser.parse_args(argv)

    if not SITES.is_dir():
        sys.exit(f"shared site copies not found at {SITES}")
    books, aegisub = page_sets(args.quick)
    from crawlfw.linkextractors import IGNORED_EXTENSIONS

    # Scrapy's default list grew after 1.2 (dmg, py, js, ...): both sides get 1.2's.
    config = {"repeat": args.repeat, "books": books, "aegisub": aegisub,
              "deny_extensions": list(IGNORED_EXTENSIONS)}
    print(f"pages: {len(books)} books.toscrape.com, {len(aegisub)} aegisub.org; "
          f"best of {args.repeat} runs; Python {platform.python_version()}")

    ours = run_crawlfw(config)
    ref = None
    if not args.no_reference:
        from _refenv import reference_python

        python = reference_python()
        if python is not None:
            ref = run_reference(python, config)
    if ref is not None:
        versions = ref.pop("_versions")
        print(f"reference: scrapy {versions['scrapy']}, parsel {versions['parsel']}")

    header = f"{'task':28} {'pages':>5} {'crawlfw ms/page':>16}"
    if ref is not None:
        header += f" {'reference ms/page':>18} {'ratio':>6}  same data"
    print(header)
    for task, r in ours.items():
        per_page = r["seconds"] * 1000 / r["pages"]
        line = f"{task:28} {r['pages']:>5} {per_page:>16.3f}"
        if ref is not None and task in ref:
            ref_per_page = ref[task]["seconds"] * 1000 / ref[task]["pages"]
            same = "yes" if ref[task]["checksum"] == r["checksum"] else (
                f"no ({r['checksum']} vs {ref[task]['checksum']})")
            line += f" {ref_per_page:>18.3f} {r['seconds'] / ref[task]['seconds']:>6.2f}  {same}"
        print(line)
    if ref is not None:
        total_ours = sum(r["seconds"] for r in ours.values())
        total_ref = sum(ref[t]["seconds"] for t in ours if t in ref)
        print(f"{'total':28} {'':>5} {total_ours:>15.3f}s {total_ref:>17.3f}s {total_ours / total_ref:>6.2f}")


if __name__ == "__main__":
    main()

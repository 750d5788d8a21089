"""``crawlfw version [-v]``: print the crawlfw version (and, with -v, its dependencies)."""

import platform

import argh

import crawlfw
from crawlfw.commands import ScrapyCommand, command


def _versions():
    import cssselect
    import lxml.etree
    import pycurl
    import w3lib

    try:
        from importlib.metadata import version as dist_version

        pykka_v = dist_version("pykka")
        argh_v = dist_version("argh")
        jsonschema_v = dist_version("jsonschema")
    except Exception:  # pragma: no cover - metadata missing
        pykka_v = argh_v = jsonschema_v = "unknown"
    return [
        ("crawlfw", crawlfw.__version__),
        ("lxml", ".".join(map(str, lxml.etree.LXML_VERSION))),
        ("libxml2", ".".join(map(str, lxml.etree.LIBXML_VERSION))),
        ("cssselect", getattr(cssselect, "__version__", "unknown")),
        ("w3lib", getattr(w3lib, "__version__", "unknown")),
        ("pykka", pykka_v),
        ("pycurl", pycurl.version),
        ("argh", argh_v),
        ("jsonschema", jsonschema_v),
        ("Python", platform.python_version()),
        ("Platform", platform.platform()),
    ]


@argh.arg("-v", "--verbose", help="also display dependency versions (for bug reports)")
@command(default_settings={"LOG_ENABLED": False}, help="Print crawlfw version")
def version(*, settings=None, verbose=False):
    """Print ``crawlfw <version>``; with -v, one line per component."""
    if not verbose:
        return f"crawlfw {crawlfw.__version__}"
    versions = _versions()
    width = max(len(name) for name, _ in versions)
    return "\n".join(f"{name:<{width}} : {value}" for name, value in versions)


class Command(ScrapyCommand):
    """``crawlfw version [-v]`` (Scrapy 1.2's version command)."""

    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[-v]"

    def short_desc(self):
        return "Print crawlfw version"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--verbose", "-v", dest="verbose", action="store_true",
                          help="also display dependency versions (useful for bug reports)")

    def run(self, args, opts):
        print(version.impl(settings=self.settings, verbose=opts.verbose))

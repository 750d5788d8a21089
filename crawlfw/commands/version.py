"""``crawlfw version [-v]``: print the crawlfw version (and, with -v, its dependencies)."""

import argh

import crawlfw
from crawlfw.commands import ScrapyCommand, command

#: Every library the runtime imports (pyproject.toml's dependencies), in display order:
#: (distribution name, label).
RUNTIME_LIBRARIES = [
    ("lxml", "lxml"),
    ("cssselect", "cssselect"),
    ("w3lib", "w3lib"),
    ("protego", "protego"),
    ("pykka", "pykka"),
    ("pycurl", "pycurl"),
    ("pycares", "pycares"),
    ("argh", "argh"),
    ("jsonschema", "jsonschema"),
    ("ptpython", "ptpython"),
    ("rich", "rich"),
    ("redis", "redis"),
    ("publicsuffixlist", "publicsuffixlist"),
    ("jmespath", "jmespath"),
    ("itemadapter", "itemadapter"),
    ("itemloaders", "itemloaders"),
    ("rbloom", "rbloom"),
    ("prometheus_client", "prometheus_client"),
]

#: Libraries used when installed: decompression, image pipeline, S3 feeds and media.
OPTIONAL_LIBRARIES = [("brotli", "brotli"), ("zstandard", "zstandard"), ("Pillow", "Pillow"),
                      ("boto3", "boto3")]


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(name)
    except PackageNotFoundError:
        return None


def _libcurl():
    """``(version and TLS/zlib builds, features)`` of the libcurl pycurl is linked with."""
    import pycurl

    info = pycurl.version_info()
    build = f"{info[1]} ({', '.join(x for x in (info[5], f'zlib/{info[7]}' if info[7] else None) if x)})"
    bits = info[4]
    features = sorted(
        name.removeprefix("VERSION_") for name in dir(pycurl)
        if name.startswith("VERSION_") and isinstance(getattr(pycurl, name), int)
        and getattr(pycurl, name) and bits & getattr(pycurl, name)
    )
    return build, ", ".join(features)


def _versions():
    """Returns: list of ``(label, value)``: crawlfw, every runtime library (libxml2 and
    libcurl with their builds), the optional ones, Twisted (not used), Python, the
    platform."""
    import platform  # (-v only: ~2 ms of "crawlfw version")

    import lxml.etree

    versions = [("crawlfw", crawlfw.__version__)]
    for dist, label in RUNTIME_LIBRARIES:
        versions.append((label, _dist_version(dist) or "not installed"))
        if dist == "lxml":
            versions.append(("libxml2", ".".join(map(str, lxml.etree.LIBXML_VERSION))))
        if dist == "pycurl":
            build, features = _libcurl()
            versions.append(("libcurl", build))
            versions.append(("libcurl features", features))
    for dist, label in OPTIONAL_LIBRARIES:
        versions.append((label, _dist_version(dist) or "not installed (optional)"))
    versions.append(("Twisted", "not used (crawlfw runs on Pykka actors and pycurl)"))
    versions.append(("Python", platform.python_version()))
    versions.append(("Platform", platform.platform()))
    return versions


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

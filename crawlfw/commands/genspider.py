"""``crawlfw genspider [-l] [-e] [-d TEMPLATE] [-t TEMPLATE] [--force] <name> <domain>``:
create a spider module from a template (``TEMPLATES_DIR/spiders/*.tmpl``)."""

import os
import shutil
import string
import subprocess
import sys
from importlib import import_module
from os.path import abspath, dirname, exists, join, splitext
from urllib.parse import urlparse

import argh

from crawlfw.commands import ScrapyCommand, command, fail, get_spider_loader
from crawlfw.commands._command import delegate
from crawlfw.commands.startproject import templates_dir
from crawlfw.exceptions import UsageError
from crawlfw.utils.template import render_templatefile, string_camelcase


def sanitize_module_name(module_name: str) -> str:
    """Turn a spider name into a module name: ``-`` and ``.`` become ``_``, and an ``a``
    is prefixed when it does not start with an ASCII letter (Scrapy 1.2's rule)."""
    module_name = module_name.replace("-", "_").replace(".", "_")
    if not module_name or module_name[0] not in string.ascii_letters:
        module_name = "a" + module_name
    return module_name


def extract_domain(url: str) -> str:
    """Scrapy 2's helper: the network location of ``url`` (``host[:port]``; '' for a
    URL without ``//``)."""
    return urlparse(url).netloc


def verify_url_scheme(url: str) -> str:
    """Scrapy 2's helper: ``url`` with ``https://`` put before it when it has neither a
    scheme nor a network location (``example.com/a`` -> ``https://example.com/a``);
    other URLs unchanged."""
    parsed = urlparse(url)
    if parsed.scheme == "" and parsed.netloc == "":
        parsed = urlparse("//" + url)._replace(scheme="https")
    return parsed.geturl()


def _find_template(settings, template, directory=None):
    template_file = join(directory or templates_dir(settings, "spiders"), f"{template}.tmpl")
    if exists(template_file):
        return template_file
    fail(f"Unable to find template: {template}\n\n"
         'Use "crawlfw genspider --list" to see all available templates.')


def _list_templates(settings, directory=None):
    print("Available templates:")
    for filename in sorted(os.listdir(directory or templates_dir(settings, "spiders"))):
        if filename.endswith(".tmpl"):
            print(f"  {splitext(filename)[0]}")


#: The start URL path of a template given a bare domain (Scrapy 1.2's templates).
_START_PATHS = {"csvfeed": "feed.csv", "xmlfeed": "feed.xml"}


def domain_and_url(domain_or_url: str, template_name: str = "basic") -> tuple[str, str]:
    """Split the ``<domain>`` argument of genspider into the template's variables.

    A URL (``http://host:port/path``) gives its host name (without the port: an
    ``allowed_domains`` entry is a domain name) and the URL itself as the start URL, as
    Scrapy 2 does; a bare domain (``example.com``, ``example.com:8080``) gives that host
    name and ``http://<domain>/`` (``/feed.csv``, ``/feed.xml`` for the feed templates),
    as Scrapy 1.2 does.

    Args:
        domain_or_url: the command-line argument.
        template_name: the template's name (``basic``, ``crawl``, ``csvfeed``...).

    Returns:
        ``(domain, url)``.

    Raises:
        UsageError: no host name can be found in the argument.
    """
    parsed = urlparse(domain_or_url)
    has_scheme = bool(parsed.scheme and parsed.netloc)
    if not has_scheme:
        parsed = urlparse("//" + domain_or_url.lstrip("/"))
    try:
        host = parsed.hostname
    except ValueError:
        host = None
    if not host:
        raise UsageError(f"Cannot find a domain in {domain_or_url!r}")
    if has_scheme:
        return host, domain_or_url
    return host, f"http://{parsed.netloc}/{_START_PATHS.get(template_name, '')}"


def _genspider(settings, module, name, domain, template_name, template_file):
    bot_name = settings.get("BOT_NAME")
    domain, url = domain_and_url(domain, template_name)
    tvars = {
        "project_name": bot_name,
        "ProjectName": string_camelcase(bot_name),
        "module": module,
        "name": name,
        "domain": domain,
        "url": url,
        "classname": "".join(s.capitalize() for s in module.split("_")) + "Spider",
    }
    if settings.get("NEWSPIDER_MODULE"):
        spiders_module = import_module(settings["NEWSPIDER_MODULE"])
        spiders_dir = abspath(dirname(spiders_module.__file__))
    else:
        spiders_module = None
        spiders_dir = "."
    spider_file = f"{join(spiders_dir, module)}.py"
    shutil.copyfile(template_file, spider_file)
    render_templatefile(spider_file, **tvars)
    print(f"Created spider {name!r} using template {template_name!r} ",
          end="" if spiders_module else "\n")
    if spiders_module:
        print(f"in module:\n  {spiders_module.__name__}.{module}")


@argh.arg("name", nargs="?", help="the spider's name")
@argh.arg("domain", nargs="?",
          help="the domain it crawls, or its start URL (allowed_domains, start_urls)")
@argh.arg("-l", "--list", help="List available templates")
@argh.arg("-e", "--edit", help="Edit spider after creating it")
@argh.arg("-d", "--dump", metavar="TEMPLATE", help="Dump template to standard output")
@argh.arg("-t", "--template", help="Uses a custom template (default: basic).")
@argh.arg("--force", help="If the spider already exists, overwrite it with the template")
@command(default_settings={"LOG_ENABLED": False},
         help="Generate new spider using pre-defined templates")
def genspider(name=None, domain=None, *, settings=None, list=False,  # noqa: A002
              edit=False, dump=None, template="basic", force=False):
    """Create ``<module>.py`` in ``NEWSPIDER_MODULE`` (or the current directory).

    Exit status 1 when the template is unknown, the spider exists (without ``--force``)
    or would have the project's name.
    """
    _run(settings, name, domain, list=list, edit=edit, dump=dump, template=template,
         force=force, directory=templates_dir(settings, "spiders"))


def _run(settings, name, domain, *, list, edit, dump, template, force,  # noqa: A002
         directory):
    """genspider's work, the templates read from ``directory``."""
    if list:
        _list_templates(settings, directory)
        return
    if dump:
        template_file = _find_template(settings, dump, directory)
        with open(template_file, encoding="utf-8") as f:
            print(f.read())
        return
    if not name or not domain:
        raise UsageError("genspider needs <name> <domain> (or -l, or -d TEMPLATE)")
    module = sanitize_module_name(name)
    if settings.get("BOT_NAME") == module:
        fail("Cannot create a spider with the same name as your project")
    try:
        spidercls = get_spider_loader(settings).load(name)
    except KeyError:
        pass
    else:
        if not force:
            fail(f"Spider {name!r} already exists in module:\n  {spidercls.__module__}")
    template_file = _find_template(settings, template, directory)
    _genspider(settings, module, name, domain, template, template_file)
    if edit:
        status = subprocess.call([sys.executable, "-m", "crawlfw.cmdline", "edit", name])
        if status:
            sys.exit(status)


class Command(ScrapyCommand):
    """``crawlfw genspider [options] <name> <domain>`` (Scrapy 1.2's genspider command)."""

    requires_project = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "[options] <name> <domain>"

    def short_desc(self):
        return "Generate new spider using pre-defined templates"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("-l", "--list", dest="list", action="store_true",
                          help="List available templates")
        parser.add_option("-e", "--edit", dest="edit", action="store_true",
                          help="Edit spider after creating it")
        parser.add_option("-d", "--dump", dest="dump", metavar="TEMPLATE",
                          help="Dump template to standard output")
        parser.add_option("-t", "--template", dest="template", default="basic",
                          help="Uses a custom template.")
        parser.add_option("--force", dest="force", action="store_true",
                          help="If the spider already exists, overwrite it with the template")

    @property
    def templates_dir(self) -> str:
        """The directory of the spider templates (``TEMPLATES_DIR/spiders``; Scrapy 2's
        property): a subclass overriding it makes ``genspider`` read its own."""
        return templates_dir(self.settings, "spiders")

    def run(self, args, opts):
        if not (opts.list or opts.dump) and len(args) != 2:
            raise UsageError()
        name, domain = ([*args[:2]] + [None, None])[:2]
        delegate(self, _run, self.settings, name, domain, list=opts.list, edit=opts.edit,
                 dump=opts.dump, template=opts.template, force=opts.force,
                 directory=self.templates_dir)

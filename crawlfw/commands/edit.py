"""``crawlfw edit <spider>``: open a spider's module in the editor (``EDITOR`` setting,
which defaults to ``$EDITOR``)."""

import subprocess
import sys

import argh

from crawlfw.commands import ScrapyCommand, command, get_spider_loader, load_spider
from crawlfw.commands._command import delegate
from crawlfw.exceptions import UsageError


@argh.arg("spider", help="the spider's name")
@command(requires_project=True, default_settings={"LOG_ENABLED": False},
         help="Edit spider")
def edit(spider, *, settings=None):
    """Run ``<EDITOR> "<spider module file>"`` through the shell; exits with the editor's
    status, or 1 when the spider does not exist."""
    editor = settings["EDITOR"]
    spidercls = load_spider(get_spider_loader(settings), spider)
    sfile = sys.modules[spidercls.__module__].__file__
    if sfile.endswith(".pyc"):
        sfile = sfile[:-1]
    status = subprocess.call(f'{editor} "{sfile}"', shell=True)
    if status:
        sys.exit(status)


class Command(ScrapyCommand):
    """``crawlfw edit <spider>`` (Scrapy 1.2's edit command)."""

    requires_project = True
    default_settings = {"LOG_ENABLED": False}

    def syntax(self):
        return "<spider>"

    def short_desc(self):
        return "Edit spider"

    def long_desc(self):
        return "Edit a spider using the editor defined in the EDITOR setting"

    def run(self, args, opts):
        if len(args) != 1:
            raise UsageError()
        delegate(self, edit.impl, args[0], settings=self.settings)

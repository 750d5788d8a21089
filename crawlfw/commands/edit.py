"""``crawlfw edit <spider>``: open a spider's module in the editor (``EDITOR`` setting,
which defaults to ``$EDITOR``)."""

import subprocess
import sys

import argh

from crawlfw.commands import command, get_spider_loader, load_spider


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

"""``crawlfw list``: print the names of the project's spiders, one per line, sorted."""

import argh

from crawlfw.commands import ScrapyCommand, command, get_spider_loader


@argh.named("list")
@command(requires_project=True, default_settings={"LOG_ENABLED": False},
         help="List available spiders")
def list_(*, settings=None):
    """Print every spider name found in ``SPIDER_MODULES``, sorted."""
    for name in sorted(get_spider_loader(settings).list()):
        print(name)


class Command(ScrapyCommand):
    """``crawlfw list`` (Scrapy 1.2's list command)."""

    requires_project = True
    default_settings = {"LOG_ENABLED": False}

    def short_desc(self):
        return "List available spiders"

    def run(self, args, opts):
        for name in sorted(self.crawler_process.spider_loader.list()):
            print(name)

"""``crawlfw settings [--get NAME | --getbool NAME | --getint NAME | --getfloat NAME |
--getlist NAME]``: print a setting's value (the project's when inside a project)."""

import json

import argh

from crawlfw.commands import ScrapyCommand, command
from crawlfw.commands._command import delegate
from crawlfw.settings import BaseSettings


@argh.named("settings")
@argh.arg("--get", metavar="SETTING", help="print raw setting value")
@argh.arg("--getbool", metavar="SETTING", help="print setting value, interpreted as a boolean")
@argh.arg("--getint", metavar="SETTING", help="print setting value, interpreted as an integer")
@argh.arg("--getfloat", metavar="SETTING", help="print setting value, interpreted as a float")
@argh.arg("--getlist", metavar="SETTING", help="print setting value, interpreted as a list")
@command(default_settings={"LOG_ENABLED": False, "SPIDER_LOADER_WARN_ONLY": True},
         help="Get settings values")
def settings_(*, settings=None, get=None, getbool=None, getint=None, getfloat=None,
              getlist=None):
    """Print one setting: ``--get`` prints it as is (a settings dict as JSON), the other
    options convert it first (``getbool`` etc. of :class:`~crawlfw.settings.Settings`).

    Raises:
        ValueError: the value cannot be converted (``--getint foo``).
    """
    if get:
        value = settings.get(get)
        if isinstance(value, BaseSettings):
            print(json.dumps(value.copy_to_dict()))
        else:
            print(value)
    elif getbool:
        print(settings.getbool(getbool))
    elif getint:
        print(settings.getint(getint))
    elif getfloat:
        print(settings.getfloat(getfloat))
    elif getlist:
        print(settings.getlist(getlist))


class Command(ScrapyCommand):
    """``crawlfw settings [options]`` (Scrapy 1.2's settings command)."""

    requires_project = False
    default_settings = {"LOG_ENABLED": False, "SPIDER_LOADER_WARN_ONLY": True}

    def syntax(self):
        return "[options]"

    def short_desc(self):
        return "Get settings values"

    def add_options(self, parser):
        ScrapyCommand.add_options(self, parser)
        parser.add_option("--get", dest="get", metavar="SETTING",
                          help="print raw setting value")
        parser.add_option("--getbool", dest="getbool", metavar="SETTING",
                          help="print setting value, interpreted as a boolean")
        parser.add_option("--getint", dest="getint", metavar="SETTING",
                          help="print setting value, interpreted as an integer")
        parser.add_option("--getfloat", dest="getfloat", metavar="SETTING",
                          help="print setting value, interpreted as a float")
        parser.add_option("--getlist", dest="getlist", metavar="SETTING",
                          help="print setting value, interpreted as a list")

    def run(self, args, opts):
        delegate(self, settings_.impl, settings=self.settings, get=opts.get,
                 getbool=opts.getbool, getint=opts.getint, getfloat=opts.getfloat,
                 getlist=opts.getlist)

"""``crawlfw settings [--get NAME | --getbool NAME | --getint NAME | --getfloat NAME |
--getlist NAME]``: print a setting's value (the project's when inside a project)."""

import json

import argh

from crawlfw.commands import command
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

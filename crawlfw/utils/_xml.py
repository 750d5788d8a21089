"""XML names and encoding declarations for :class:`crawlfw.exporters.XmlItemExporter`
(split from :mod:`crawlfw.exporters`)."""

import codecs
import functools
import re

__all__ = ["xml_encoding_name", "xml_name_re"]

# XML 1.0 (Fifth Edition) §2.3 "Name" production, restricted to the characters an
# element name may start/continue with (colons excluded: no namespaces here). Compiled
# by the first XmlItemExporter (xml_name_re): its character classes take several
# milliseconds to compile, which every crawl would otherwise pay at start-up.
_XML_NAME = (
    r"[A-Za-z_\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF"
    r"\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]"
    r"[-.0-9A-Za-z_\u00B7\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u037D\u037F-\u1FFF"
    r"\u200C-\u200D\u203F-\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF"
    r"\uFDF0-\uFFFD]*\Z"
)


@functools.cache
def xml_name_re() -> re.Pattern:
    """The compiled :data:`_XML_NAME` (once per process)."""
    return re.compile(_XML_NAME)


def xml_encoding_name(encoding):
    """Return the name to declare for ``encoding`` in ``<?xml ... encoding="..."?>``.

    XML 1.0 §4.3.3 asks for IANA charset names; Python aliases such as ``latin-1`` are
    not understood by every parser (libxml2 rejects it), so the common ones are mapped
    (``ISO-8859-n``, ``windows-125n``, ``US-ASCII``). Others are declared as given.
    """
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return encoding
    if name.startswith("iso8859-"):
        return "ISO-8859-" + name[len("iso8859-"):]
    if re.fullmatch(r"cp125[0-8]", name):
        return "windows-" + name[2:]
    if name == "ascii":
        return "US-ASCII"
    return encoding

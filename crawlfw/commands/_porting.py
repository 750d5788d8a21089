"""Rewriting one Scrapy text for crawlfw (the rules of ``crawlfw port``), without files.

:class:`Porter` turns the text of one file into its crawlfw form and says what it changed
and what it left for a person:

- **Python** (``.py``; genspider templates ``.tmpl`` with their ``$name`` placeholders) is
  read with :mod:`tokenize`, so only code changes, never comments, docstrings or
  unrelated strings: the module ``scrapy`` in import statements and, where the file
  imports it, as a name in code (``scrapy.Request``, ``scrapy.http.TextResponse``); a
  string that is a whole dotted path into Scrapy (``"scrapy.extensions.telnet.TelnetConsole"``
  as a setting's key or value, ``mock.patch("scrapy.crawler.CrawlerProcess.start")``), or
  exactly ``"scrapy"`` (``["python", "-m", "scrapy"]``; a dict key such as an
  entry-point group or an intersphinx name is left), or a command line starting with
  ``scrapy <command>``; ``SCRAPY_SETTINGS_MODULE``, ``SCRAPY_PROJECT`` and
  ``SCRAPY_PYTHON_SHELL`` in strings. ``kingfisher_scrapy``, ``scrapy_item``,
  ``"https://scrapy.org"``, ``spidermon.contrib.scrapy`` are other names and stay.
- **Configuration and deployment text** (``scrapy.cfg``, ``.cfg``, ``.ini``, ``.toml``,
  ``.yml``, ``.env``, Dockerfiles, shell scripts, Makefiles) is read line by line, comment
  lines left out: the three environment variables, dotted paths into Scrapy
  (``-W ignore::DeprecationWarning:scrapy.core.downloader.webclient``) and command lines
  ``scrapy <command>`` where the command is one of Scrapy's or of the project's own
  (``COMMANDS_MODULE`` modules found in the tree).

Left as they are and reported as :class:`Note`: Scrapy plugins (packages named
``scrapy_*``, ``scrapyd``, ``spidermon``..., which import Scrapy itself), references
built at run time (``f"scrapy.{name}"``, ``"scrapy." + name``) and dependencies on the
``scrapy`` distribution (``scrapy==2.14``), which a person replaces with crawlfw.

Every rewrite maps ``scrapy`` to ``crawlfw`` and nothing back, so a ported text ports
to itself (``crawlfw port`` run twice changes nothing).
"""

import io
import re
import tokenize
from dataclasses import dataclass, field

__all__ = ["Note", "Ported", "Porter", "PortError", "SCRAPY_COMMANDS", "ENV_RENAMES"]

#: What may follow ``scrapy.`` in a reference to Scrapy: Scrapy 2.19's top-level modules
#: and the names of its ``scrapy/__init__``, and Scrapy 1.2's modules (``scrapy.conf``,
#: ``scrapy.contrib``...), which crawlfw keeps. ``scrapy.org`` is a host, not a module.
SCRAPY_TOP_LEVEL = frozenset({
    # Scrapy 2.19 modules and packages
    "addons", "cmdline", "commands", "contracts", "core", "crawler", "downloadermiddlewares",
    "dupefilters", "exceptions", "exporters", "extension", "extensions", "http",
    "interfaces", "item", "link", "linkextractors", "loader", "logformatter", "mail",
    "middleware", "pipelines", "pqueues", "resolver", "responsetypes", "robotstxt",
    "selector", "settings", "shell", "signalmanager", "signals", "spiderloader",
    "spidermiddlewares", "spiders", "squeues", "statscollectors", "templates", "utils",
    # names of Scrapy 2.19's scrapy/__init__
    "Field", "FormRequest", "Item", "Request", "Selector", "Spider", "version_info",
    "__version__",
    # Scrapy 1.2's modules gone from Scrapy 2
    "conf", "contrib", "contrib_exp", "log", "project", "spidermanager", "stats",
})

#: Scrapy 2.19's built-in commands (``scrapy <command>`` in scripts and CI files).
SCRAPY_COMMANDS = frozenset({
    "bench", "check", "crawl", "edit", "fetch", "genspider", "list", "parse", "runspider",
    "settings", "shell", "startproject", "version", "view",
})

#: Scrapy's environment variables and the crawlfw ones that mean the same.
ENV_RENAMES = {
    "SCRAPY_SETTINGS_MODULE": "CRAWLFW_SETTINGS_MODULE",
    "SCRAPY_PROJECT": "CRAWLFW_PROJECT",
    "SCRAPY_PYTHON_SHELL": "CRAWLFW_PYTHON_SHELL",
}

#: Top-level packages that are Scrapy plugins although their names do not start with
#: ``scrapy`` (they import Scrapy: Scrapy Cloud's runner, Spidermon).
PLUGIN_PACKAGES = frozenset({"spidermon", "sh_scrapy"})

_ENV_RE = re.compile(r"\b(" + "|".join(ENV_RENAMES) + r")\b")
_IDENT = r"[A-Za-z_]\w*"
#: A whole dotted path, optionally ``module:attribute`` (entry points, load_object).
_DOTTED_RE = re.compile(rf"{_IDENT}(?:\.{_IDENT})*(?::{_IDENT}(?:\.{_IDENT})*)?")
#: The start of a dotted path into Scrapy built at run time: ``"scrapy.%s"``,
#: ``"scrapy.downloadermiddlewares."``, ``f"scrapy.{name}"``.
_PARTIAL_RE = re.compile(rf"scrapy\.(?:{_IDENT}\.)*(?:%|\{{|$)")
#: A requirement on the scrapy distribution: ``scrapy==2.14.2``, ``scrapy[s3]>=2.11``.
_REQUIREMENT_RE = re.compile(r"(?<![\w.-])scrapy(?:\[[^\]]*\])?\s*(?:==|>=|<=|~=|!=|<|>)")
#: In configuration text: ``scrapy`` starting a dotted path (not ``docs.scrapy.org``,
#: ``spidermon.contrib.scrapy``, ``kingfisher_scrapy`` or a path ``/scrapy/``).
_TEXT_DOTTED_RE = re.compile(rf"(?<![\w./-])scrapy((?:\.{_IDENT})+)")
#: In configuration text: ``scrapy <word>`` (or ``"scrapy", "<word>"``, a Dockerfile's
#: exec form), a command line when the word is a command.
_TEXT_COMMAND_RE = re.compile(
    r"(?<![\w./-])scrapy(?=(?:[ \t]+|[\"']\s*,\s*[\"'])([A-Za-z][\w-]*))")
#: string.Template placeholders of genspider templates: ``$name``, ``${name}``, ``$$``.
_PLACEHOLDER_RE = re.compile(rf"\$(?:\$|{_IDENT}|\{{{_IDENT}\}})")
_STRING_RE = re.compile(r"(?s)([A-Za-z]*)('''|\"\"\"|'|\")(.*)\2")

_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_SKIPPED = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                      tokenize.ENCODING})


class PortError(ValueError):
    """A text that cannot be read as what its file name says (Python that does not
    tokenize): the file is left as it is."""


@dataclass(frozen=True)
class Note:
    """Something left as it is for a person: ``line`` (1-based), ``kind`` (``'plugin'``,
    ``'dynamic'`` or ``'dependency'``) and ``text`` (what, quoted from the file)."""

    line: int
    kind: str
    text: str


@dataclass
class Ported:
    """The crawlfw form of one text.

    Attributes:
        text: the new text (the old one when nothing changed).
        changes: how many rewrites were made (one per name, string or line part).
        notes: what was left as it is, for a person.
        references: ``(line, dotted name)`` of every crawlfw name the text now uses
            (``crawlfw.http.TextResponse``, ``crawlfw.utils.reactor.install_reactor``),
            so a caller can check crawlfw has them.
    """

    text: str
    changes: int = 0
    notes: list[Note] = field(default_factory=list)
    references: list[tuple[int, str]] = field(default_factory=list)


def _is_plugin(top: str, dotted: str, local: frozenset) -> bool:
    """A module path of a Scrapy plugin: its top-level package is not the project's own
    and is named ``scrapy*`` (not ``scrapy`` itself) or is a known plugin, or one of its
    parts is ``scrapy`` (``spidermon.contrib.scrapy.pipelines``)."""
    if top in local or top in ("scrapy", "crawlfw"):
        return False
    return (top.startswith("scrapy") or top in PLUGIN_PACKAGES
            or "scrapy" in dotted.split(".")[1:])


class Porter:
    """The porting rules, with what is known of the project being ported.

    Args:
        local: the project's own top-level module and package names (never reported as
            plugins, even when named ``scrapy_something``).
        commands: command names that ``scrapy <name>`` may start in text files: Scrapy's
            (:data:`SCRAPY_COMMANDS`) and the project's own.
    """

    def __init__(self, local=frozenset(), commands=SCRAPY_COMMANDS):
        self.local = frozenset(local)
        self.commands = frozenset(commands) | SCRAPY_COMMANDS

    # -- strings (Python string literals and their bodies) ------------------------------

    def _port_body(self, body: str, line: int, out: Ported, *, dict_key=False,
                   formatted=False) -> str:
        """Return the crawlfw form of a string literal's ``body``; count changes and add
        notes and references to ``out``."""
        new = _ENV_RE.sub(lambda m: ENV_RENAMES[m.group(1)], body)
        out.changes += len(_ENV_RE.findall(body))
        if formatted:
            if _PARTIAL_RE.match(new):
                out.notes.append(Note(line, "dynamic", body))
            return new
        if _DOTTED_RE.fullmatch(new):
            parts = re.split(r"[.:]", new)
            if parts[0] == "scrapy" and (len(parts) > 1 and parts[1] in SCRAPY_TOP_LEVEL
                                         or len(parts) == 1 and not dict_key):
                new = "crawlfw" + new[len("scrapy"):]
                parts[0] = "crawlfw"
                out.changes += 1
            if parts[0] == "crawlfw" and len(parts) > 1:
                out.references.append((line, ".".join(parts)))
            elif _is_plugin(parts[0], new.replace(":", "."), self.local) and len(parts) > 1:
                out.notes.append(Note(line, "plugin", body))
            return new
        command = re.match(r"scrapy(?= +([A-Za-z][\w-]*))", new)
        if command and command.group(1) in self.commands:
            out.changes += 1
            return "crawlfw" + new[len("scrapy"):]
        if _PARTIAL_RE.match(new):
            out.notes.append(Note(line, "dynamic", body))
        elif _REQUIREMENT_RE.match(new):
            out.notes.append(Note(line, "dependency", body))
        return new

    def _port_string_token(self, token: str, line: int, out: Ported, dict_key: bool) -> str:
        match = _STRING_RE.fullmatch(token)
        if not match or "b" in match.group(1).lower():
            return token
        prefix, quote, body = match.groups()
        new = self._port_body(body, line, out, dict_key=dict_key,
                              formatted="f" in prefix.lower())
        return f"{prefix}{quote}{new}{quote}"

    # -- Python ---------------------------------------------------------------------------

    def port_python(self, text: str, *, template: bool = False) -> Ported:
        """Port Python source (``template``: a genspider template, whose ``$name``
        placeholders are read as names).

        Raises:
            PortError: the text does not tokenize as Python (the message says where).
        """
        masked = _PLACEHOLDER_RE.sub(lambda m: "_" * len(m.group()), text) if template else text
        lines = io.StringIO(masked).readlines()
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(masked).readline)
                      if t.type not in _SKIPPED]
        except (tokenize.TokenError, SyntaxError) as e:
            raise PortError(f"not Python that tokenizes: {e}") from None
        out = Ported(text)
        edits = self._python_edits(tokens, out)
        if not edits:
            return out
        starts = [0]
        for source_line in lines:
            starts.append(starts[-1] + len(source_line))
        pieces, last = [], 0
        for (row, col), (end_row, end_col), new in edits:
            begin, end = starts[row - 1] + col, starts[end_row - 1] + end_col
            pieces += [text[last:begin], new]
            last = end
        pieces.append(text[last:])
        out.text = "".join(pieces)
        return out

    def _python_edits(self, tokens, out: Ported) -> list:
        """The edits of a token list: ``[(start, end, new text)]`` in order, positions
        as tokenize's ``(row, col)``; notes and references are added to ``out``."""
        bound = _imports_scrapy(tokens)
        edits = []
        statement = None  # None, "import", "from" (module part) or "from-names"
        expect_module = False
        from_module = None  # the dotted module of a "from ... import" being read
        at_start = True
        fstring_depth = 0
        for i, tok in enumerate(tokens):
            prev = tokens[i - 1] if i else None
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (
                    tok.type == tokenize.OP and tok.string == ";"):
                statement, at_start = None, True
                continue
            starts_statement, at_start = at_start, False
            if _FSTRING_START is not None and tok.type == _FSTRING_START:
                fstring_depth += 1
                if nxt is not None and nxt.type == _FSTRING_MIDDLE:
                    self._port_body(nxt.string, nxt.start[0], out, formatted=True)
                continue
            if fstring_depth and tok.type == _FSTRING_END:
                fstring_depth -= 1
                continue
            if tok.type == tokenize.STRING:
                dict_key = nxt is not None and nxt.type == tokenize.OP and nxt.string == ":"
                new = self._port_string_token(tok.string, tok.start[0], out, dict_key)
                if new != tok.string:
                    edits.append((tok.start, tok.end, new))
                continue
            if tok.type != tokenize.NAME:
                if statement == "import" and tok.string == ",":
                    expect_module = True
                continue
            if starts_statement and tok.string in ("import", "from"):
                statement, expect_module = ("import" if tok.string == "import" else "from"), True
                from_module = None
                continue
            if statement == "from" and tok.string == "import":
                statement = "from-names"
                continue
            if statement in ("import", "from") and expect_module:
                expect_module = False
                if prev is not None and prev.string == "." and statement == "from":
                    continue  # a relative import: the project's own
                dotted = _dotted_from(tokens, i)
                if statement == "from":
                    from_module = dotted
                if tok.string == "scrapy":
                    edits.append((tok.start, tok.end, "crawlfw"))
                    out.changes += 1
                    dotted = "crawlfw" + dotted[len("scrapy"):]
                    from_module = dotted if statement == "from" else None
                    if statement == "import":
                        out.references.append((tok.start[0], dotted))
                elif _is_plugin(tok.string, dotted, self.local):
                    out.notes.append(Note(tok.start[0], "plugin", f"import {dotted}"))
                continue
            if statement == "from-names":
                if (from_module and from_module.startswith("crawlfw") and tok.string != "as"
                        and prev is not None and prev.string != "as"):
                    out.references.append((tok.start[0], f"{from_module}.{tok.string}"))
                continue
            if (tok.string == "scrapy" and bound and statement is None
                    and (prev is None or prev.string != ".")
                    and not (nxt is not None and nxt.string == "=")):
                edits.append((tok.start, tok.end, "crawlfw"))
                out.changes += 1
                out.references.append((tok.start[0],
                                       "crawlfw" + _dotted_from(tokens, i)[len("scrapy"):]))
        return edits

    # -- configuration and deployment text ----------------------------------------------

    def port_text(self, text: str) -> Ported:
        """Port configuration or deployment text line by line; lines whose first
        non-blank character is ``#`` or ``;`` (comments) are left as they are."""
        out = Ported(text)
        new_lines = []
        for number, line in enumerate(io.StringIO(text).readlines(), 1):
            if line.lstrip().startswith(("#", ";")):
                new_lines.append(line)
                continue
            if _REQUIREMENT_RE.search(line):
                out.notes.append(Note(number, "dependency", line.strip()))
            new = _ENV_RE.sub(lambda m: ENV_RENAMES[m.group(1)], line)
            out.changes += len(_ENV_RE.findall(line))

            def dotted(m, number=number):
                if m.group(1).split(".")[1] not in SCRAPY_TOP_LEVEL:
                    return m.group()
                out.changes += 1
                out.references.append((number, "crawlfw" + m.group(1)))
                return "crawlfw" + m.group(1)

            def command(m):
                if m.group(1) not in self.commands:
                    return m.group()
                out.changes += 1
                return "crawlfw"

            new = _TEXT_DOTTED_RE.sub(dotted, new)
            new = _TEXT_COMMAND_RE.sub(command, new)
            new_lines.append(new)
        out.text = "".join(new_lines)
        return out

    def dependencies(self, text: str) -> list[Note]:
        """Notes for the lines of a requirements file that need the scrapy distribution
        (``scrapy``, ``scrapy==2.14.2``, ``scrapy[s3]>=2``); the file is not changed."""
        notes = []
        for number, line in enumerate(io.StringIO(text).readlines(), 1):
            stripped = line.split("#", 1)[0].strip()
            if _REQUIREMENT_RE.match(stripped) or re.fullmatch(r"scrapy(\[[^\]]*\])?",
                                                               stripped):
                notes.append(Note(number, "dependency", stripped))
        return notes


def _dotted_from(tokens, i: int) -> str:
    """The dotted name starting at ``tokens[i]`` (a NAME): ``scrapy.http.Request``."""
    parts = [tokens[i].string]
    j = i + 1
    while (j + 1 < len(tokens) and tokens[j].string == "."
           and tokens[j + 1].type == tokenize.NAME):
        parts.append(tokens[j + 1].string)
        j += 2
    return ".".join(parts)


def _imports_scrapy(tokens) -> bool:
    """True when the source binds the name ``scrapy`` by importing it: ``import scrapy``
    or ``import scrapy.http`` (without ``as``)."""
    for i, tok in enumerate(tokens[:-1]):
        if tok.type == tokenize.NAME and tok.string == "import" and (
                i == 0 or tokens[i - 1].type in (tokenize.NEWLINE, tokenize.INDENT,
                                                 tokenize.DEDENT)
                or tokens[i - 1].string == ";"):
            j = i + 1
            while j < len(tokens) and tokens[j].type not in (tokenize.NEWLINE,
                                                             tokenize.ENDMARKER):
                if tokens[j].string == "scrapy" and tokens[j - 1].string in ("import", ","):
                    after = _dotted_from(tokens, j).count(".") * 2 + j + 1
                    if after >= len(tokens) or tokens[after].string != "as":
                        return True
                j += 1
    return False

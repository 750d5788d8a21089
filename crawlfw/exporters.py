"""Item exporters: write items to a binary file in one format (Scrapy 1.2 ``scrapy.exporters``).

An exporter is used in three steps::

    exporter = JsonLinesItemExporter(open("items.jl", "wb"))
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()

Every exporter writes ``bytes`` to a file opened in binary mode (``open(path, 'wb')``,
:class:`io.BytesIO`, ``sys.stdout.buffer``) and never closes it. Items are dicts or
``crawlfw.item.Item`` instances (any Mapping whose class has a ``fields`` mapping of
field name -> Field metadata dict).

Options every exporter takes (as keyword arguments):

``fields_to_export``
    a list of field names giving which fields are exported and in which order, or a
    mapping ``{item field: output name}`` (a later Scrapy addition). None (default):
    every field the item has, in the item's order.
``export_empty_fields``
    export fields an Item declares but that are not set (value ``None``; ``''`` in XML
    and CSV). Default False. Has no effect on dicts unless ``fields_to_export`` names
    fields the dict lacks.
``encoding``
    the output encoding. None (default) means UTF-8, except that the JSON exporters
    then escape every non-ASCII character (``ensure_ascii=True``) so the output is pure
    ASCII; with an explicit encoding they write the characters in that encoding. This is
    Scrapy 1.2's ``FEED_EXPORT_ENCODING`` behaviour.

A Field's ``serializer`` (``Field(serializer=str)``) is applied to the value before it
is written; :meth:`BaseItemExporter.serialize_field` is the place to customise this.
"""

from __future__ import annotations

import codecs
import csv
import io
import marshal
import pickle
import pprint
import warnings
from collections.abc import Mapping
from typing import Any

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.item import AnyItem
from crawlfw.utils._xml import xml_encoding_name, xml_name_re
from crawlfw.utils.python import is_listlike, to_bytes, to_unicode
from crawlfw.utils.serialize import CrawlfwJSONEncoder

__all__ = [
    "BaseItemExporter",
    "PprintItemExporter",
    "PickleItemExporter",
    "CsvItemExporter",
    "XmlItemExporter",
    "JsonLinesItemExporter",
    "JsonItemExporter",
    "MarshalItemExporter",
    "PythonItemExporter",
]

_EMPTY_META: Mapping = {}

# Keyword arguments json.JSONEncoder accepts: the JSON exporters pass any option they do
# not use themselves on to the encoder, as Scrapy 1.2 does.
_JSON_ENCODER_OPTIONS = frozenset(
    {
        "skipkeys",
        "ensure_ascii",
        "check_circular",
        "allow_nan",
        "sort_keys",
        "indent",
        "separators",
        "default",
    }
)
# Format parameters csv.writer accepts (Python's csv module, "Dialects and Formatting
# Parameters"): CsvItemExporter passes its remaining options on to csv.writer.
_CSV_WRITER_OPTIONS = frozenset(
    {
        "dialect",
        "delimiter",
        "quotechar",
        "escapechar",
        "doublequote",
        "skipinitialspace",
        "lineterminator",
        "quoting",
        "strict",
    }
)

def _declared_fields(item) -> Mapping | None:
    """Return an Item's ``fields`` mapping (name -> Field), or None for plain mappings."""
    fields = getattr(type(item), "fields", None)
    return fields if isinstance(fields, Mapping) else None


_adapted_fields_cache: dict = {}


def _as_mapping(item) -> tuple[Mapping, Mapping | None]:
    """Return ``(mapping, declared)`` for any item type: a dict or an ``Item`` as it is
    with its declared ``fields`` (None for a dict); any other type ``itemadapter``
    adapts (dataclass, attrs, pydantic...) as an ``ItemAdapter`` with ``{field name:
    field metadata}`` (the metadata of ``dataclasses.field(metadata=...)``,
    ``attrs.field(metadata=...)`` or pydantic's ``Field(json_schema_extra=...)``: a
    ``serializer`` there is applied as a ``Field``'s is), computed once per class.

    Raises:
        TypeError: ``item`` is of no item type ("No adapter found for objects of type").
    """
    if isinstance(item, Mapping):
        return item, _declared_fields(item)
    from itemadapter import ItemAdapter

    adapter = ItemAdapter(item)
    cls = type(item)
    declared = _adapted_fields_cache.get(cls)
    if declared is None:
        declared = _adapted_fields_cache[cls] = {
            name: adapter.get_field_meta(name) for name in adapter.field_names()
        }
    return adapter, declared


def _non_closing(file):
    """Wrap a binary file so that a TextIOWrapper over it never closes it.

    A TextIOWrapper closes its buffer when it is closed or garbage-collected; exporters
    must leave the file open for the feed storage (``xml.sax.saxutils`` does the same).
    """
    buffer = io.BufferedIOBase()
    buffer.writable = lambda: True
    buffer.write = file.write
    return buffer


def _text_encoder(encoding):
    """Return ``f(str) -> bytes`` encoding successive pieces of one output stream.

    For ASCII-compatible codecs this is plain ``str.encode``; for the others (UTF-16,
    UTF-32, UTF-8 with signature) an incremental encoder, so that a byte order mark is
    written once, at the start of the stream, and not before every item.
    """
    if "[\n,]".encode(encoding) == b"[\n,]":
        return lambda text: text.encode(encoding)
    return codecs.getincrementalencoder(encoding)().encode


def _identity(value):
    return value


def _reject_unknown(exporter, options, accepted):
    """Raise TypeError naming the options in ``options`` that are not in ``accepted``."""
    unknown = [name for name in options if name not in accepted]
    if unknown:
        raise TypeError(
            f"Unexpected options: {', '.join(unknown)} "
            f"({type(exporter).__name__} accepts fields_to_export, export_empty_fields, "
            f"encoding and {', '.join(sorted(accepted))})"
        )


class BaseItemExporter:
    """Base class of the item exporters: option handling and field selection.

    Subclasses implement :meth:`export_item` and, where the format needs a header or a
    footer, :meth:`start_exporting` / :meth:`finish_exporting`.

    Args:
        fields_to_export: list of field names (output order), or mapping
            ``{item field name: output name}``; None exports every field set on the item.
        export_empty_fields (bool): also export declared-but-unset Item fields.
        encoding (str | None): output encoding; None is UTF-8 (see the module docstring
            for the JSON exporters' ASCII escaping).
        dont_fail (bool): keyword only; ignore unknown options instead of raising (for
            subclasses that take extra keyword arguments of their own).

    Raises:
        TypeError: an option other than the three above is given ("Unexpected options:
            name, ...").
    """

    def __init__(self, *, dont_fail=False, **kwargs):
        self._configure(kwargs, dont_fail=dont_fail)

    def _configure(self, options, dont_fail=False):
        """Pop the common options from the ``options`` dict and set them as attributes.

        Args:
            options (dict): keyword arguments; the known ones are removed from it.
            dont_fail (bool): leave unknown options in ``options`` instead of raising.

        Raises:
            TypeError: unknown options remain and ``dont_fail`` is False.
        """
        self.encoding = options.pop("encoding", None)
        self.fields_to_export = options.pop("fields_to_export", None)
        self.export_empty_fields = options.pop("export_empty_fields", False)
        if not dont_fail and options:
            raise TypeError(
                f"Unexpected options: {', '.join(options)} "
                f"({type(self).__name__} accepts fields_to_export, export_empty_fields "
                f"and encoding)"
            )

    def export_item(self, item: Any) -> None:
        """Write one item to the output.

        Args:
            item: a dict or an Item.

        Raises:
            NotImplementedError: in this base class.
        """
        raise NotImplementedError

    def serialize_field(self, field, name, value):
        """Return the value to write for one field.

        Args:
            field (Mapping): the Field metadata (``{}`` for dict items); its
                ``'serializer'`` entry, a one-argument callable, is applied to ``value``.
            name (str): the field's output name.
            value: the field's value on the item.

        Returns:
            The serialized value (``value`` itself when there is no serializer).
        """
        serializer = field.get("serializer", _identity)
        return serializer(value)

    def start_exporting(self) -> None:
        """Write the format's header, if any (called once, before the first item)."""

    def finish_exporting(self) -> None:
        """Write the format's footer, if any (called once, after the last item).

        The file is left open: closing it is the caller's job.
        """

    def resume_exporting(self, items: int, fields: Any = None) -> None:
        """Continue a document that an earlier run of the same job started (called
        instead of :meth:`start_exporting`: the header is already in the file).

        Args:
            items: how many items the file already holds in this document.
            fields: the fields an earlier run fixed for the document (the CSV columns),
                or None.
        """

    def _get_serialized_fields(self, item, default_value=None, include_empty=None):
        """Scrapy 1.2's name of :meth:`get_serialized_fields` (the exporters call this
        one, so that an override of either name is used)."""
        return self.get_serialized_fields(item, default_value, include_empty)

    def get_serialized_fields(self, item, default_value=None, include_empty=None):
        """Yield ``(output_name, serialized_value)`` for each field to export, each
        value passed through :meth:`serialize_field` (Scrapy 2's public name).

        Args:
            item: a dict or an Item.
            default_value: the value for fields to export that the item lacks.
            include_empty (bool | None): also yield fields the item lacks (declared Item
                fields, or names in ``fields_to_export``); None uses
                ``self.export_empty_fields``.

        Yields:
            tuple[str, object]: in ``fields_to_export`` order, or the item's own order.
        """
        if include_empty is None:
            include_empty = self.export_empty_fields
        item, declared = _as_mapping(item)
        fields_to_export = self.fields_to_export
        if fields_to_export is None:
            if include_empty and declared is not None:
                names = declared.keys()
            else:
                names = list(item.keys())
            pairs = ((name, name) for name in names)
        else:
            if isinstance(fields_to_export, Mapping):
                pairs = fields_to_export.items()
            else:
                pairs = (
                    (name, name) if isinstance(name, str) else tuple(name)
                    for name in fields_to_export
                )
            if not include_empty:
                pairs = ((field, out) for field, out in pairs if field in item)

        for item_field, output_field in pairs:
            if item_field in item:
                meta = declared.get(item_field, _EMPTY_META) if declared is not None else _EMPTY_META
                value = self.serialize_field(meta, output_field, item[item_field])
            else:
                value = default_value
            yield output_field, value

    @property
    def _plain_dicts_pass(self) -> bool:
        """True when a plain dict exported without ``fields_to_export`` maps to itself.

        That holds when neither field selection nor serialization is overridden (dicts
        have no Field serializers); the JSON exporters then encode the dict as is.
        """
        cls = type(self)
        return (
            cls.serialize_field is BaseItemExporter.serialize_field
            and cls._get_serialized_fields is BaseItemExporter._get_serialized_fields
            and cls.get_serialized_fields is BaseItemExporter.get_serialized_fields
        )


def _one_shot_encode(encoder):
    """``encoder.encode`` for the dicts the JSON exporters encode, without the set-up
    ``json.JSONEncoder.encode`` repeats on every call: the same C encoder it builds for
    one object (``iterencode(o, _one_shot=True)`` without ``indent``), made with the same
    arguments and a fresh circular-reference memo each time. Other objects go to
    ``encoder.encode`` itself.

    Returns:
        A callable ``encode(obj) -> str``, or None when that is not what
        ``encoder.encode`` does (no C encoder, an ``indent``, ``encode`` or
        ``iterencode`` overridden): then use ``encoder.encode``.
    """
    import json
    from json import encoder as json_encoder

    make = json_encoder.c_make_encoder
    cls = type(encoder)
    if (
        make is None
        or encoder.indent is not None
        or cls.encode is not json.JSONEncoder.encode
        or cls.iterencode is not json.JSONEncoder.iterencode
    ):
        return None
    args = (
        encoder.default,
        json_encoder.encode_basestring_ascii if encoder.ensure_ascii
        else json_encoder.encode_basestring,
        None,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )
    check_circular = encoder.check_circular
    slow = encoder.encode
    join = "".join

    def encode(obj):
        if obj.__class__ is not dict:
            return slow(obj)
        return join(make({} if check_circular else None, *args)(obj, 0))

    return encode


class _JsonExporterMixin:
    """Builds the JSON encoder once and encodes one item into bytes."""

    def _init_json(self, file, kwargs):
        self._configure(kwargs, dont_fail=True)
        _reject_unknown(self, kwargs, _JSON_ENCODER_OPTIONS)
        self.file = file
        kwargs.setdefault("ensure_ascii", not self.encoding)
        self.encoder = CrawlfwJSONEncoder(**kwargs)
        self._encode = _one_shot_encode(self.encoder) or self.encoder.encode
        self._to_bytes = _text_encoder(self.encoding or "utf-8")
        self._fast = self._plain_dicts_pass

    def _encode_item(self, item) -> str:
        if self._fast and type(item) is dict and self.fields_to_export is None:
            return self._encode(item)
        return self._encode(dict(self._get_serialized_fields(item)))


class JsonLinesItemExporter(_JsonExporterMixin, BaseItemExporter):
    """Write one JSON object per line (JSON Lines, https://jsonlines.org/).

    Args:
        file: binary file object.
        **kwargs: the common options (see :class:`BaseItemExporter`) plus any keyword
            argument of :class:`json.JSONEncoder` (``sort_keys``, ``indent``...). Do not
            pass ``indent``: a JSON Lines record must stay on one line.

    Raises:
        TypeError: an option is neither a common option nor a JSONEncoder argument.
        UnicodeEncodeError: (from export_item) with an explicit ``encoding`` that cannot
            represent a character of the item.
    """

    def __init__(self, file, **kwargs):
        self._init_json(file, kwargs)

    def export_item(self, item):
        """Write ``item`` as one JSON object followed by ``\\n`` (one write call)."""
        self.file.write(self._to_bytes(self._encode_item(item) + "\n"))


class JsonItemExporter(_JsonExporterMixin, BaseItemExporter):
    """Write all items as one JSON array: ``[\\n{...},\\n{...}\\n]`` (Scrapy 1.2 layout).

    Args:
        file: binary file object.
        **kwargs: as :class:`JsonLinesItemExporter` (``indent`` is allowed here and
            indents each item object).

    Raises:
        TypeError: an option is neither a common option nor a JSONEncoder argument.
    """

    def __init__(self, file, **kwargs):
        self._init_json(file, kwargs)
        self.first_item = True

    def start_exporting(self):
        """Write the opening ``[``."""
        self.file.write(self._to_bytes("["))

    def finish_exporting(self):
        """Write a newline and the closing ``]``; with no item, ``[\\n\\n]`` (Scrapy
        1.2's empty document, and Scrapy 2.19's empty feed)."""
        self.file.write(self._to_bytes("\n\n]" if self.first_item else "\n]"))

    def resume_exporting(self, items: int, fields=None):
        """Continue the array: the next item is preceded by ``,`` when ``items`` > 0."""
        self.first_item = not items

    def export_item(self, item):
        """Write ``item`` as a JSON object, preceded by ``\\n`` if it is the first, else
        by ``,\\n``."""
        data = self._encode_item(item)
        if self.first_item:
            self.first_item = False
            self.file.write(self._to_bytes("\n" + data))
        else:
            self.file.write(self._to_bytes(",\n" + data))


class XmlItemExporter(BaseItemExporter):
    """Write items as XML: ``<items><item><name>value</name>...</item>...</items>``.

    Field values become the element's text (``str(value)``; bytes are decoded with the
    exporter encoding). A dict value becomes child elements named by its keys; a list
    (or any other non-string iterable) becomes one ``<value>`` child per element,
    recursively (Scrapy 1.2 layout). Fields to export that the item lacks are written
    empty. Characters the encoding cannot represent are written as character references.

    ``indent`` (Scrapy 2) lays the document out as Scrapy 2.19's exporter does: None
    (the default, Scrapy 1.2's layout) writes no whitespace; 0 puts the root's start tag,
    each item and the root's end tag on lines of their own (what Scrapy 2's feeds write,
    ``FEED_EXPORT_INDENT = 0``: an empty feed is ``<items>\n</items>``); N > 0 also
    puts every field on a line of its own, indented N spaces per level.

    Args:
        file: binary file object.
        item_element (str): element name of each item, default ``'item'``.
        root_element (str): element name of the document root, default ``'items'``.
        indent (int | None): see above.
        **kwargs: the common options (see :class:`BaseItemExporter`); the encoding
            defaults to UTF-8 and is declared in the XML declaration.

    Raises:
        TypeError: an unknown option is given.
        ValueError: (from export_item) a field name or dict key is not a valid XML 1.0
            element name (XML 1.0 §2.3), e.g. ``'first name'``.
    """

    def __init__(self, file, **kwargs):
        self.item_element = kwargs.pop("item_element", "item")
        self.root_element = kwargs.pop("root_element", "items")
        self.indent = kwargs.pop("indent", None)
        super().__init__(**kwargs)
        if not self.encoding:
            self.encoding = "utf-8"
        from xml.sax.saxutils import XMLGenerator  # on first use: only XML feeds need it

        self.xg = XMLGenerator(file, encoding=xml_encoding_name(self.encoding))
        self._valid_names = set()
        self._check_name(self.item_element)
        self._check_name(self.root_element)

    def _check_name(self, name):
        if name in self._valid_names:
            return
        if not isinstance(name, str) or not xml_name_re().match(name):
            raise ValueError(
                f"{name!r} is not a valid XML element name (XML 1.0 section 2.3): "
                f"rename the field or give it another name with fields_to_export"
            )
        self._valid_names.add(name)

    def _newline(self, after_item=False):
        """A line break where the ``indent`` layout has one (after the root's start tag
        and each item from 0 up, after every element with N > 0)."""
        if self.indent is not None and (self.indent > 0 or after_item):
            self.xg.characters("\n")

    def _indent(self, depth):
        if self.indent:
            self.xg.characters(" " * (self.indent * depth))

    def start_exporting(self):
        """Write the XML declaration and the root start tag."""
        self.xg.startDocument()
        self.xg.startElement(self.root_element, {})
        self._newline(after_item=True)

    def export_item(self, item):
        """Write one ``<item>`` element with one child element per field."""
        self._indent(1)
        self.xg.startElement(self.item_element, {})
        self._newline()
        for name, value in self._get_serialized_fields(item, default_value=""):
            self._export_xml_field(name, value, 2)
        self._indent(1)
        self.xg.endElement(self.item_element)
        self._newline(after_item=True)

    def finish_exporting(self):
        """Write the root end tag and flush."""
        self.xg.endElement(self.root_element)
        self.xg.endDocument()

    def _export_xml_field(self, name, serialized_value, depth=2):
        self._check_name(name)
        self._indent(depth)
        self.xg.startElement(name, {})
        if hasattr(serialized_value, "items"):
            self._newline()
            for subname, value in serialized_value.items():
                self._export_xml_field(subname, value, depth + 1)
            self._indent(depth)
        elif is_listlike(serialized_value):
            self._newline()
            for value in serialized_value:
                self._export_xml_field("value", value, depth + 1)
            self._indent(depth)
        elif isinstance(serialized_value, str):
            self.xg.characters(serialized_value)
        elif isinstance(serialized_value, bytes):
            self.xg.characters(serialized_value.decode(self.encoding))
        else:
            self.xg.characters(str(serialized_value))
        self.xg.endElement(name)
        self._newline()


class CsvItemExporter(BaseItemExporter):
    """Write items as CSV rows (RFC 4180 layout by default, via Python's :mod:`csv`).

    The columns are ``fields_to_export`` or, when it is not given, the fields of the
    first item exported (an Item's declared fields, or a dict's keys); later items are
    written in those columns, with ``''`` for the ones they lack and their other fields
    dropped. List and tuple values of strings are joined with ``join_multivalued``.

    Args:
        file: binary file object.
        include_headers_line (bool): write the column names as the first row.
        join_multivalued (str): separator for list values, default ``','``.
        errors (str | None): what to do with a character ``encoding`` cannot encode
            (Scrapy 2.4): a :mod:`codecs` error handler name (``'replace'``,
            ``'ignore'``, ``'xmlcharrefreplace'``...); None is ``'strict'``
            (``UnicodeEncodeError``).
        **kwargs: the common options (see :class:`BaseItemExporter`; encoding defaults to
            UTF-8) plus :func:`csv.writer` format parameters (``delimiter``,
            ``quotechar``, ``quoting``, ``lineterminator``, ``dialect``...).

    Raises:
        TypeError: an option is neither a common option nor a csv.writer parameter.
    """

    def __init__(self, file, include_headers_line=True, join_multivalued=",", errors=None,
                 **kwargs):
        self._configure(kwargs, dont_fail=True)
        _reject_unknown(self, kwargs, _CSV_WRITER_OPTIONS)
        if not self.encoding:
            self.encoding = "utf-8"
        self.include_headers_line = include_headers_line
        # newline="" lets the csv module write its own "\r\n" line ends untouched.
        self.stream = io.TextIOWrapper(
            _non_closing(file),
            line_buffering=False,
            write_through=True,
            encoding=self.encoding,
            newline="",
            errors=errors,
        )
        self.csv_writer = csv.writer(self.stream, **kwargs)
        self._headers_not_written = True
        self._join_multivalued = join_multivalued

    def serialize_field(self, field, name, value):
        """Apply the Field's ``serializer``, or else join list values (see class doc)."""
        serializer = field.get("serializer", self._join_if_needed)
        return serializer(value)

    def _join_if_needed(self, value):
        if isinstance(value, (list, tuple)):
            try:
                return self._join_multivalued.join(value)
            except TypeError:  # not all strings: let csv write its repr
                pass
        return value

    def export_item(self, item):
        """Write one row (and, before the first one, the header row)."""
        if self._headers_not_written:
            self._headers_not_written = False
            self._write_headers_and_set_fields_to_export(item)
        fields = self._get_serialized_fields(item, default_value="", include_empty=True)
        self.csv_writer.writerow([self._cell(value) for _, value in fields])

    def finish_exporting(self):
        """Flush the text layer (``file`` stays open, as with every exporter)."""
        self.stream.flush()

    def resume_exporting(self, items: int, fields=None):
        """Continue the table: no second header row; the columns are ``fields`` (those
        of the header already written) when given."""
        if items or fields is not None:
            self._headers_not_written = False
        if fields is not None:
            self.fields_to_export = fields

    def document_fields(self):
        """The columns fixed for this document (list), or None before the first row."""
        if self._headers_not_written or not self.include_headers_line:
            return None
        fields = self.fields_to_export
        return dict(fields) if isinstance(fields, Mapping) else list(fields or ())

    def _cell(self, value):
        if isinstance(value, bytes):
            return to_unicode(value, self.encoding)
        return value

    def _write_headers_and_set_fields_to_export(self, item):
        if not self.include_headers_line:
            return
        if not self.fields_to_export:
            item, declared = _as_mapping(item)
            self.fields_to_export = list(declared.keys() if declared is not None else item.keys())
        if isinstance(self.fields_to_export, Mapping):
            names = self.fields_to_export.values()
        else:
            names = [n if isinstance(n, str) else n[1] for n in self.fields_to_export]
        self.csv_writer.writerow([self._cell(name) for name in names])


class PickleItemExporter(BaseItemExporter):
    """Write each item as a pickled dict, one :func:`pickle.dump` after another.

    Read them back with repeated :func:`pickle.load` calls until :class:`EOFError`.

    Args:
        file: binary file object.
        protocol (int): pickle protocol, default 2 (Scrapy 1.2's choice).
        **kwargs: the common options (see :class:`BaseItemExporter`).
    """

    def __init__(self, file, protocol=2, **kwargs):
        super().__init__(**kwargs)
        self.file = file
        self.protocol = protocol

    def export_item(self, item):
        """Pickle ``item`` as a dict of its exported fields."""
        pickle.dump(dict(self._get_serialized_fields(item)), self.file, self.protocol)


class MarshalItemExporter(BaseItemExporter):
    """Write each item as a :mod:`marshal`-ed dict (values must be marshal-able builtins).

    Args:
        file: binary file object.
        **kwargs: the common options (see :class:`BaseItemExporter`).

    Raises:
        ValueError: (from export_item) a value is not marshal-able ("unmarshallable
            object").
    """

    def __init__(self, file, **kwargs):
        super().__init__(**kwargs)
        self.file = file

    def export_item(self, item):
        """Marshal ``item`` as a dict of its exported fields."""
        marshal.dump(dict(self._get_serialized_fields(item)), self.file)


class PprintItemExporter(BaseItemExporter):
    """Write each item as :func:`pprint.pformat` of a dict, followed by a newline.

    Args:
        file: binary file object.
        **kwargs: the common options (see :class:`BaseItemExporter`).
    """

    def __init__(self, file, **kwargs):
        super().__init__(**kwargs)
        self.file = file
        self._to_bytes = _text_encoder(self.encoding or "utf-8")

    def export_item(self, item):
        """Write the pretty-printed dict of ``item``'s exported fields."""
        itemdict = dict(self._get_serialized_fields(item))
        self.file.write(self._to_bytes(pprint.pformat(itemdict) + "\n"))


class PythonItemExporter(BaseItemExporter):
    """Turn items into plain Python values (dict, list, str/bytes, numbers): the base for
    serializers such as msgpack. Nested Items and dicts become dicts, iterables lists.

    :meth:`export_item` returns the dict instead of writing it; there is no file.

    Args:
        binary (bool): True (Scrapy 1.2's default, deprecated there) encodes every string
            and dict key to ``bytes`` in ``encoding``; False keeps ``str`` (and decodes
            ``bytes``). A :class:`~crawlfw.exceptions.CrawlfwDeprecationWarning` is issued
            when it is True, as Scrapy 1.2 does.
        **kwargs: the common options (see :class:`BaseItemExporter`; encoding defaults to
            UTF-8).
    """

    def _configure(self, options, dont_fail=False):
        self.binary = options.pop("binary", True)
        super()._configure(options, dont_fail)
        if self.binary:
            warnings.warn(
                "PythonItemExporter will drop support for binary export in the future; "
                "pass binary=False",
                CrawlfwDeprecationWarning,
                stacklevel=3,
            )
        if not self.encoding:
            self.encoding = "utf-8"

    def serialize_field(self, field, name, value):
        """Apply the Field's ``serializer``, or else convert the value recursively."""
        serializer = field.get("serializer", self._serialize_value)
        return serializer(value)

    def _serialize_value(self, value):
        if _declared_fields(value) is not None:
            return self.export_item(value)
        if isinstance(value, Mapping):
            return dict(self._serialize_dict(value))
        if isinstance(value, AnyItem):  # a dataclass, attrs or pydantic item
            return self.export_item(value)
        if is_listlike(value):
            return [self._serialize_value(v) for v in value]
        if isinstance(value, (str, bytes)):
            if self.binary:
                return to_bytes(value, self.encoding)
            return to_unicode(value, self.encoding)
        return value

    def _serialize_dict(self, value):
        for key, val in value.items():
            if self.binary and isinstance(key, str):
                key = key.encode(self.encoding)
            yield key, self._serialize_value(val)

    def export_item(self, item):
        """Return ``item``'s exported fields as a dict of plain Python values.

        Returns:
            dict: with ``bytes`` keys and strings when ``binary`` is True.
        """
        result = dict(self._get_serialized_fields(item))
        if self.binary:
            result = dict(self._serialize_dict(result))
        return result

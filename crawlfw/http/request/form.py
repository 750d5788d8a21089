""":class:`FormRequest`: a Request submitting HTML form data (Scrapy 1.2's ``scrapy.http.request.form``).

Form data is encoded as ``application/x-www-form-urlencoded`` (WHATWG URL standard,
"application/x-www-form-urlencoded serializer"); :meth:`FormRequest.from_response`
fills a form found in a page the way a browser would submit it (WHATWG HTML,
"constructing the entry list").
"""

from __future__ import annotations

from urllib.parse import urlencode, urljoin

from lxml import etree
from w3lib.html import strip_html5_whitespace

from crawlfw.http._base_url import get_base_url
from crawlfw.http.request import Request
from crawlfw.utils.python import is_listlike, to_bytes

__all__ = ["FormRequest"]

_NS = {"re": "http://exslt.org/regular-expressions"}

_INPUTS_XPATH = etree.XPath(
    "descendant::textarea"
    "|descendant::select"
    "|descendant::input[not(@type) or @type["
    ' not(re:test(., "^(?:submit|image|reset)$", "i"))'
    " and (../@checked or"
    '  not(re:test(., "^(?:checkbox|radio)$", "i")))]]',
    namespaces=_NS,
)

_CLICKABLES_XPATH = etree.XPath(
    "descendant::*[(self::input or self::button)"
    ' and re:test(@type, "^submit$", "i")]'
    "|descendant::button[not(@type)]",
    namespaces=_NS,
)


class FormRequest(Request):
    """A Request that sends form data, urlencoded.

    Args:
        url, **kwargs: as for :class:`Request`.
        formdata: a dict or a list of ``(name, value)`` pairs; a value may be a list
            (the name repeats). With form data the method defaults to ``POST``: the
            data becomes the body and ``Content-Type`` defaults to
            ``application/x-www-form-urlencoded``. With ``method='GET'`` it is appended
            to the URL's query string instead.
    """

    #: The form methods :meth:`from_response` keeps (upper case); a form of any other
    #: ``method`` (``PUT``, ``dialog``) is submitted with GET, as a browser does for an
    #: invalid value (HTML, the method attribute's "invalid value default"). Scrapy 2's
    #: ``FormRequest.valid_form_methods``; a subclass may extend it.
    valid_form_methods: list[str] = ["GET", "POST"]

    def __init__(self, *args, formdata=None, **kwargs):
        if formdata and kwargs.get("method") is None:
            kwargs["method"] = "POST"
        super().__init__(*args, **kwargs)
        if formdata:
            items = formdata.items() if isinstance(formdata, dict) else formdata
            querystr = _urlencode(items, self.encoding)
            if self.method == "POST":
                self.headers.setdefault(b"Content-Type", b"application/x-www-form-urlencoded")
                self._set_body(querystr)
            else:
                url, sep, fragment = self.url.partition("#")
                url = url + ("&" if "?" in url else "?") + querystr + sep + fragment
                self._set_url(url)

    @classmethod
    def from_response(
        cls,
        response,
        formname: str | None = None,
        formid: str | None = None,
        formnumber: int | None = 0,
        formdata=None,
        clickdata: dict | None = None,
        dont_click: bool = False,
        formxpath: str | None = None,
        formcss: str | None = None,
        **kwargs,
    ) -> FormRequest:
        """Return a request submitting a form of ``response``, pre-filled with its fields.

        The form is chosen by ``formname`` (``name`` attribute), else ``formid``, else
        the first form containing the node of ``formxpath``/``formcss``, else the
        ``formnumber``-th form (0-based). Its fields are collected as a browser would:
        ``<input>`` (except submit/image/reset buttons and unchecked checkboxes and
        radios), ``<select>`` (its selected options; the first option when none is
        selected in a single select) and ``<textarea>``. Unless ``dont_click``, the
        first submit button (or the one matching ``clickdata``) is added, as if clicked.

        Args:
            response: the :class:`~crawlfw.http.TextResponse` holding the form.
            formname: value of the form's ``name`` attribute.
            formid: value of the form's ``id`` attribute.
            formnumber: index of the form among the page's forms.
            formdata: fields overriding or adding to the form's (dict or pairs); a value
                of None removes the field.
            clickdata: attributes of the submit control to click, e.g.
                ``{'name': 'go', 'value': 'Next'}``, or ``{'nr': 1}`` (index among the
                form's inputs).
            dont_click: submit without clicking any control.
            formxpath: XPath of the form or of a node inside it.
            formcss: CSS selector of the form or of a node inside it.
            **kwargs: :class:`Request` arguments; ``url`` and ``method`` override the
                form's ``action``/``method``; ``encoding`` defaults to the response's.
                A form whose method is not in :attr:`valid_form_methods` is submitted
                with GET; a ``method`` given here is used as it is (as in Scrapy 1.2;
                Scrapy >= 1.7 turns one not in the list into GET too).

        Returns:
            A new request of class ``cls``.

        Raises:
            ValueError: ``"No <form> element found in <200 url>"``, no form matching
                ``formxpath``/``formcss``, a ``clickdata`` that matches no control or
                several, or a ``formdata`` that is not a dict or pairs.
            IndexError: ``"Form number N not found in <200 url>"``.
            TypeError: ``response`` is not a text response.
        """
        if getattr(response, "encoding", None) is None:
            raise TypeError(
                "FormRequest.from_response needs a TextResponse (e.g. HtmlResponse), "
                f"got {type(response).__name__}: {response}"
            )
        kwargs.setdefault("encoding", response.encoding)
        if formcss is not None:
            from cssselect import HTMLTranslator  # imported on first use: start-up

            formxpath = HTMLTranslator().css_to_xpath(formcss)
        form = _get_form(response, formname, formid, formnumber, formxpath)
        formdata = _get_inputs(form, formdata, dont_click, clickdata)
        url = _get_form_url(form, kwargs.pop("url", None))
        method = kwargs.pop("method", None)
        if method is None:
            method = form.method.upper()
            if method not in cls.valid_form_methods:
                method = "GET"
        return cls(url=url, method=method, formdata=formdata, **kwargs)


def _get_form_url(form, url: str | None) -> str:
    if url is None:
        action = form.get("action")
        if action is None:
            return form.base_url
        return urljoin(form.base_url, strip_html5_whitespace(action))
    return urljoin(form.base_url, url)


def _urlencode(seq, enc: str) -> str:
    values = [
        (to_bytes(k, enc), to_bytes(v, enc))
        for k, vs in seq
        for v in (vs if is_listlike(vs) else [vs])
    ]
    return urlencode(values, doseq=True)


def _create_root_node(text: str, base_url: str):
    import lxml.html  # imported on first use: a crawl that sends no form never needs it

    body = text.strip().replace("\x00", "").encode("utf8") or b"<html/>"
    parser = lxml.html.HTMLParser(recover=True, encoding="utf8")
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root


def _get_form(response, formname, formid, formnumber, formxpath):
    """Find the form element."""
    root = _create_root_node(response.text, get_base_url(response))
    forms = root.xpath("//form")
    if not forms:
        raise ValueError(f"No <form> element found in {response}")

    if formname is not None:
        f = root.xpath("//form[@name=$name]", name=formname)
        if f:
            return f[0]

    if formid is not None:
        f = root.xpath("//form[@id=$id]", id=formid)
        if f:
            return f[0]

    # Get the form element from the xpath; if it is not a form, go up
    if formxpath is not None:
        nodes = root.xpath(formxpath)
        if nodes:
            el = nodes[0]
            while el is not None and hasattr(el, "getparent"):
                if el.tag == "form":
                    return el
                el = el.getparent()
        raise ValueError(f"No <form> element found with {formxpath}")

    # formname/formid were None or matched nothing
    if formnumber is not None:
        try:
            return forms[formnumber]
        except IndexError:
            raise IndexError(f"Form number {formnumber} not found in {response}") from None
    raise ValueError(f"No <form> element matches formname={formname!r} formid={formid!r}")


def _get_inputs(form, formdata, dont_click: bool, clickdata: dict | None) -> list:
    try:
        formdata = dict(formdata or ())
    except (ValueError, TypeError):
        raise ValueError(
            f"formdata should be a dict or an iterable of (name, value) pairs, got {formdata!r}"
        ) from None

    values = [
        (k, "" if v is None else v)
        for k, v in (_value(e) for e in _INPUTS_XPATH(form))
        if k and k not in formdata
    ]

    if not dont_click:
        clickable = _get_clickable(clickdata, form)
        if clickable and clickable[0] not in formdata and clickable[0] is not None:
            values.append(clickable)

    values.extend((k, v) for k, v in formdata.items() if v is not None)
    return values


def _value(ele):
    n = ele.name
    v = ele.value
    if ele.tag == "select":
        return _select_value(ele, n, v)
    return n, v


def _select_value(ele, n, v):
    multiple = ele.multiple
    if v is None and not multiple:
        # Browsers submit the first option of a single select without selected option;
        # a select without options submits nothing.
        o = ele.value_options
        return (n, o[0]) if o else (None, None)
    if v is not None and multiple:
        selected_options = ele.xpath(".//option[@selected]")
        v = [(o.get("value") or o.text or "").strip() for o in selected_options]
    return n, v


def _get_clickable(clickdata: dict | None, form):
    """Return ``(name, value)`` of the control of ``clickdata``, else of the first submit control."""
    clickables = _CLICKABLES_XPATH(form)
    if not clickables:
        return None

    # Without clickdata, the first clickable element is clicked
    if clickdata is None:
        el = clickables[0]
        return (el.get("name"), el.get("value") or "")

    # "nr" identifies the element uniquely: try it first
    nr = clickdata.get("nr", None)
    if nr is not None:
        try:
            el = list(form.inputs)[nr]
        except IndexError:
            pass
        else:
            return (el.get("name"), el.get("value") or "")

    # Otherwise select by the attributes, "nr" included as Scrapy 1.2 does: an "nr" out
    # of range then matches nothing and raises, rather than matching every element
    attrs = dict(clickdata)
    xpath = ".//*" + "".join(f"[@{name}=$v{i}]" for i, name in enumerate(attrs))
    variables = {f"v{i}": value for i, value in enumerate(attrs.values())}
    el = form.xpath(xpath, **variables)
    if len(el) == 1:
        return (el[0].get("name"), el[0].get("value") or "")
    if len(el) > 1:
        raise ValueError(
            f"Multiple elements found ({el!r}) matching the criteria in clickdata: {clickdata!r}"
        )
    raise ValueError(f"No clickable element matching clickdata: {clickdata!r}")

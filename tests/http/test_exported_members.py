"""Pin the public names of crawlfw.http and of the utility modules owned with it."""

import importlib

import pytest

EXPORTS = {
    "crawlfw.http": [
        "Headers",
        "Request",
        "FormRequest",
        "JsonRequest",
        "XmlRpcRequest",
        "Response",
        "TextResponse",
        "HtmlResponse",
        "XmlResponse",
        "JsonResponse",
    ],
    "crawlfw.http.headers": ["Headers"],
    "crawlfw.http.common": ["obsolete_setter"],
    "crawlfw.http.request": ["NO_CALLBACK", "Request", "VerboseCookie"],
    "crawlfw.http.request.form": ["FormRequest"],
    "crawlfw.http.request.rpc": ["XmlRpcRequest"],
    "crawlfw.http.request.json_request": ["JsonRequest"],
    "crawlfw.http.response": ["Response"],
    "crawlfw.http.response.text": ["TextResponse"],
    "crawlfw.http.response.html": ["HtmlResponse"],
    "crawlfw.http.response.xml": ["XmlResponse"],
    "crawlfw.responsetypes": ["ResponseTypes", "responsetypes"],
    "crawlfw.utils.httpobj": ["urlparse_cached"],
    "crawlfw.utils.request": ["request_fingerprint", "request_authenticate", "request_httprepr",
                              "fingerprint", "RequestFingerprinter", "request_from_dict",
                              "request_to_curl"],
    "crawlfw.utils.response": [
        "get_base_url",
        "get_meta_refresh",
        "response_status_message",
        "response_httprepr",
        "open_in_browser",
        "response_from_dict",
    ],
    "crawlfw.utils.trackref": [
        "object_ref",
        "live_refs",
        "format_live_refs",
        "print_live_refs",
        "get_oldest",
        "iter_all",
    ],
    "crawlfw.utils.datatypes": [
        "MultiValueDictKeyError",
        "MultiValueDict",
        "CaselessDict",
        "MergeDict",
        "LocalCache",
        "SequenceExclude",
        "CaseInsensitiveDict",
        "LocalWeakReferencedCache",
    ],
    "crawlfw.utils.python": [
        "flatten",
        "iflatten",
        "is_listlike",
        "unique",
        "to_unicode",
        "to_bytes",
        "to_native_str",
        "re_rsearch",
        "memoizemethod_noargs",
        "binary_is_text",
        "get_func_args",
        "get_spec",
        "equal_attributes",
        "WeakKeyCache",
        "without_none_values",
        "retry_on_eintr",
        "global_object_name",
        "is_writable",
        "setattr_default",
        "get_func_args_dict",
        "MutableChain",
        "MutableAsyncChain",
        "garbage_collect",
        "str_to_unicode",
        "unicode_to_str",
        "isbinarytext",
        "stringify_dict",
    ],
}


@pytest.mark.parametrize("module_name", sorted(EXPORTS))
def test_exported_members(module_name):
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(EXPORTS[module_name])
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name}"


def test_same_classes_through_every_path():
    import crawlfw
    import crawlfw.http as http
    from crawlfw.http.request import Request
    from crawlfw.http.response.html import HtmlResponse

    assert http.Request is Request is crawlfw.Request
    assert http.HtmlResponse is HtmlResponse


def test_url_module_exports_scrapy_names():
    from crawlfw.utils import url

    for name in [
        "url_is_from_any_domain",
        "url_is_from_spider",
        "url_has_any_extension",
        "escape_ajax",
        "add_http_if_no_scheme",
        "guess_scheme",
        "strip_url",
        "parse_url",
        "canonicalize_url",
        "safe_url_string",
        "safe_download_url",
        "url_query_parameter",
        "url_query_cleaner",
        "add_or_replace_parameter",
        "any_to_uri",
        "file_uri_to_path",
        "path_to_file_uri",
    ]:
        assert name in url.__all__, name

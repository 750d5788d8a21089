"""HTTP objects: requests, responses and headers (Scrapy 1.2's ``scrapy.http``).

Classes:
    Headers: case-insensitive, multi-valued header fields (bytes).
    Request, FormRequest, JsonRequest, XmlRpcRequest: requests to make.
    Response, TextResponse, HtmlResponse, XmlResponse, JsonResponse: downloaded responses.
"""

from crawlfw.http.headers import Headers
from crawlfw.http.request import Request
from crawlfw.http.request.form import FormRequest
from crawlfw.http.request.json_request import JsonRequest
from crawlfw.http.request.rpc import XmlRpcRequest
from crawlfw.http.response import Response
from crawlfw.http.response.html import HtmlResponse
from crawlfw.http.response.json import JsonResponse
from crawlfw.http.response.text import TextResponse
from crawlfw.http.response.xml import XmlResponse

__all__ = [
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
]

"""Helpers added for Scrapy 1.2 parity: utils.boto, utils.decorators (and the deprecated
utils.decorator), utils.http, utils.markup, utils.multipart, utils.ftp (a real FTP
server), datatypes.SiteNode, response.body_or_str."""

import email.parser
import email.policy
import ftplib
import sys
import unittest

import pytest

from crawlfw.exceptions import CrawlfwDeprecationWarning
from crawlfw.http import HtmlResponse, Response, TextResponse
from crawlfw.utils.boto import is_botocore
from crawlfw.utils.datatypes import SiteNode
from crawlfw.utils.decorators import deprecated
from crawlfw.utils.ftp import ftp_makedirs_cwd
from crawlfw.utils.http import decode_chunked_transfer
from crawlfw.utils.multipart import encode_multipart
from crawlfw.utils.response import body_or_str
from tests.support.ftp import LocalFTPServer

# --- boto -------------------------------------------------------------------------------


def test_is_botocore():
    assert is_botocore() is True


def test_is_botocore_without_botocore(monkeypatch):
    from crawlfw.exceptions import NotConfigured

    monkeypatch.setitem(sys.modules, "botocore", None)  # import fails
    with pytest.raises(NotConfigured, match="botocore"):
        is_botocore()


# --- decorators -------------------------------------------------------------------------


def test_deprecated_forms():
    @deprecated
    def bare(x):
        return x + 1

    @deprecated()
    def empty(x):
        return x + 2

    @deprecated("new_func")
    def named(x):
        return x + 3

    with pytest.warns(CrawlfwDeprecationWarning, match=r"^Call to deprecated function bare\.$"):
        assert bare(1) == 2
    with pytest.warns(CrawlfwDeprecationWarning, match=r"function empty\.$"):
        assert empty(1) == 3
    with pytest.warns(CrawlfwDeprecationWarning,
                      match=r"function named\. Use new_func instead\.") as record:
        assert named(1) == 4
    assert record[0].filename == __file__  # points at the caller
    assert named.__name__ == "named"


# --- http -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, decoded",
    [
        (b"25\r\nThis is the data in the first chunk\r\n\r\n1C\r\nand this is the second "
         b"one\r\n\r\n3\r\ncon\r\n8\r\nsequence\r\n0\r\n\r\n",
         b"This is the data in the first chunk\r\nand this is the second one\r\nconsequence"),
        (b"4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\n", b"Wikipedia"),
        (b"0\r\n\r\n", b""),
        ("3\r\nabc\r\n0\r\n\r\n", b"abc"),
    ],
)
def test_decode_chunked_transfer(raw, decoded):
    assert decode_chunked_transfer(raw) == decoded


@pytest.mark.parametrize("raw, message", [(b"zz\r\nab\r\n0\r\n\r\n", "invalid chunk size"),
                                          (b"9\r\nshort\r\n", "its size says 9")])
def test_decode_chunked_transfer_errors(raw, message):
    with pytest.raises(ValueError, match=message):
        decode_chunked_transfer(raw)


def test_w3lib_reexports():
    import w3lib.html
    import w3lib.http

    from crawlfw.utils import http, markup

    assert http.basic_auth_header is w3lib.http.basic_auth_header
    assert markup.remove_tags is w3lib.html.remove_tags
    assert markup.remove_tags("<b>x</b>") == "x"


# --- multipart ----------------------------------------------------------------------------


def test_encode_multipart_parses_back():
    body, boundary = encode_multipart({
        "name": "Jos\u00e9",
        "tags": ["a", b"b"],
        "file": ("notes \"1\".txt", b"\x00\x01binary"),
    })
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n\r\n".encode() + body)
    parts = [(p.get_param("name", header="content-disposition"), p.get_filename(),
              p.get_payload(decode=True)) for p in message.iter_parts()]
    assert parts == [
        ("name", None, "Jos\u00e9".encode()),
        ("tags", None, b"a"),
        ("tags", None, b"b"),
        ("file", "notes %221%22.txt", b"\x00\x01binary"),
    ]
    assert body.endswith(f"--{boundary}--\r\n".encode())


def test_encode_multipart_boundaries_differ():
    assert encode_multipart({})[1] != encode_multipart({})[1]


def test_encode_multipart_bad_value_names_the_field():
    with pytest.raises(TypeError, match="'count'"):
        encode_multipart({"count": 3})


# --- ftp ----------------------------------------------------------------------------------


@pytest.fixture
def ftp(tmp_path):
    root = tmp_path / "ftproot"
    root.mkdir()
    server = LocalFTPServer(root).start()
    client = ftplib.FTP()
    client.connect("127.0.0.1", server.port, timeout=10)
    client.login(server.user, server.password)
    client.root = root
    yield client
    client.close()
    server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("path, expected_pwd",
                         [("/a/b/c", "/a/b/c"), ("a/b", "/a/b"), ("/", "/")])
def test_ftp_makedirs_cwd(ftp, path, expected_pwd):
    ftp_makedirs_cwd(ftp, path)
    assert ftp.pwd() == expected_pwd
    assert (ftp.root / expected_pwd.lstrip("/")).is_dir()


@pytest.mark.slow
def test_ftp_makedirs_cwd_relative_under_an_existing_directory(ftp):
    (ftp.root / "a").mkdir()
    ftp_makedirs_cwd(ftp, "a/b/c")
    assert ftp.pwd() == "/a/b/c"
    assert not (ftp.root / "a" / "a").exists()


@pytest.mark.slow
def test_ftp_makedirs_cwd_existing_path_only_changes_directory(ftp):
    (ftp.root / "x" / "y").mkdir(parents=True)
    ftp_makedirs_cwd(ftp, "/x/y")
    assert ftp.pwd() == "/x/y"


# --- SiteNode -----------------------------------------------------------------------------


def test_site_node_tree():
    root = SiteNode("http://example.com/")
    page = SiteNode("http://example.com/a")
    leaf = SiteNode("http://example.com/a/b")
    root.add_child(page)
    page.add_child(leaf)
    page.itemnames.extend(["item1", "item2"])
    assert leaf.parent is page and page.parent is root and root.parent is None
    assert root.to_string() == (
        "http://example.com/\n"
        "  http://example.com/a\n"
        "    Scraped: item1\n"
        "    Scraped: item2\n"
        "    http://example.com/a/b\n"
    )


# --- body_or_str ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj, unicode, expected",
    [
        ("caf\u00e9", True, "caf\u00e9"),
        ("caf\u00e9", False, "caf\u00e9".encode()),
        ("caf\u00e9".encode(), True, "caf\u00e9"),
        (b"raw", False, b"raw"),
        (Response("http://a/", body="caf\u00e9".encode()), True, "caf\u00e9"),
        (Response("http://a/", body=b"raw"), False, b"raw"),
        (TextResponse("http://a/", body="caf\u00e9".encode("latin-1"), encoding="latin-1"), True,
         "caf\u00e9"),
        (HtmlResponse("http://a/", body=b"<p>x</p>"), False, b"<p>x</p>"),
    ],
)
def test_body_or_str(obj, unicode, expected):
    assert body_or_str(obj, unicode=unicode) == expected


def test_body_or_str_rejects_other_types():
    with pytest.raises(TypeError, match="not int"):
        body_or_str(3)


# --- utils.test -----------------------------------------------------------------------------


def test_get_pythonpath_starts_with_the_source_tree(monkeypatch):
    import os
    from pathlib import Path

    import crawlfw
    from crawlfw.utils.test import get_pythonpath

    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    parts = get_pythonpath().split(os.pathsep)
    assert Path(parts[0]) == Path(crawlfw.__file__).resolve().parents[1]
    assert parts[1:] == ["/elsewhere"]


def test_assert_samelines():
    from crawlfw.utils.test import assert_samelines

    case = unittest.TestCase()
    assert_samelines(case, "a\r\nb\r\n", "a\nb\n")
    with pytest.raises(AssertionError):
        assert_samelines(case, "a\nb", "a\nc")


def test_skip_helpers(monkeypatch):
    from crawlfw.utils.test import assert_aws_environ, skip_if_no_boto

    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    with pytest.raises(unittest.SkipTest, match="AWS keys"):
        assert_aws_environ()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    assert_aws_environ()
    skip_if_no_boto()  # boto3 is installed: no skip
    monkeypatch.setitem(sys.modules, "botocore", None)
    with pytest.raises(unittest.SkipTest, match="botocore"):
        skip_if_no_boto()


from tests.support import s3 as s3_support  # noqa: E402

s3_server = s3_support.s3_server
s3_endpoint = s3_support.s3_endpoint
s3_client = s3_support.s3_client


@pytest.mark.slow
@pytest.mark.parametrize("with_key", [False, True])
def test_get_s3_content_and_delete(s3_endpoint, s3_client, monkeypatch, with_key):
    from crawlfw.utils.test import get_s3_content_and_delete

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3_support.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_support.SECRET_KEY)
    s3_client.create_bucket(Bucket="bkt")
    s3_client.put_object(Bucket="bkt", Key="dir/x.txt", Body=b"content", Metadata={"k": "v"})
    result = get_s3_content_and_delete("bkt", "dir/x.txt", with_key=with_key)
    if with_key:
        content, key = result
        assert key["Metadata"] == {"k": "v"}
    else:
        content = result
    assert content == b"content"
    assert s3_client.list_objects_v2(Bucket="bkt").get("KeyCount") == 0

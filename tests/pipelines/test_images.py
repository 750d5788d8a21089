"""ImagesPipeline: conversion, thumbnails, minimum sizes, paths, settings, and real crawls
of a local server serving images generated with Pillow."""

import hashlib
import logging
from io import BytesIO

import pytest

from crawlfw import Spider
from crawlfw.exceptions import CrawlfwDeprecationWarning, NotConfigured
from crawlfw.http import Request
from crawlfw.pipelines import images as images_module
from crawlfw.pipelines.images import ImageException, ImagesPipeline
from crawlfw.settings import Settings
from tests.support.crawl import run_crawl
from tests.support.servers import StaticSiteServer

Image = pytest.importorskip("PIL.Image")


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


def encode(image, fmt):
    buf = BytesIO()
    image.save(buf, fmt)
    return buf.getvalue()


def rgba_png(size=(40, 20)):
    """A transparent PNG with one opaque red pixel at (0, 0)."""
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    image.putpixel((0, 0), (255, 0, 0, 255))
    return encode(image, "PNG")


IMAGES = {
    "wide.png": lambda: encode(Image.new("RGB", (200, 100), (0, 128, 255)), "PNG"),
    "alpha.png": rgba_png,
    "palette.gif": lambda: encode(Image.new("P", (30, 60), 3), "GIF"),
    "small.jpg": lambda: encode(Image.new("RGB", (10, 10), (1, 2, 3)), "JPEG"),
    "gray.png": lambda: encode(Image.new("L", (64, 64), 128), "PNG"),
    "notimage.png": lambda: b"this is not an image",
}


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_bytes(b"<html>index</html>")
    for name, make in IMAGES.items():
        (root / name).write_bytes(make())
    srv = StaticSiteServer(root).start()
    yield srv
    srv.stop()


class ImagesSpider(Spider):
    name = "images"

    def __init__(self, base, groups, **kw):
        super().__init__(**kw)
        self.start_urls = [f"{base}/index.html"]
        self.base = base
        self.groups = groups

    def parse(self, response):
        for group in self.groups:
            yield {"image_urls": [f"{self.base}/{name}" for name in group]}


def crawl(server, store, groups, **settings):
    return run_crawl(
        ImagesSpider,
        {"ITEM_PIPELINES": {"crawlfw.pipelines.images.ImagesPipeline": 1},
         "IMAGES_STORE": str(store), **settings},
        base=server.url, groups=groups,
    )


def opened(path):
    with Image.open(path) as image:
        image.load()
        return image


# --- unit -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["https://dev.mydeco.com/mydeco.gif", "http://www.maddiebrown.co.uk/image_54642.jpg",
     "http://example.com/noext"],
)
def test_paths(tmp_path, url):
    pipe = ImagesPipeline(str(tmp_path))
    request = Request(url)
    assert pipe.file_path(request) == f"full/{sha1(url)}.jpg"
    assert pipe.thumb_path(request, "small") == f"thumbs/small/{sha1(url)}.jpg"


def test_known_path_from_scrapy(tmp_path):
    # the same path Scrapy 1.2 gives this URL
    assert ImagesPipeline(str(tmp_path)).file_path(Request("https://dev.mydeco.com/mydeco.gif")) \
        == "full/3fd165099d8e71b8a48b2683946e64dbfad8b52d.jpg"


@pytest.mark.parametrize("old", ["file_key", "image_key"])
def test_deprecated_key_overrides(tmp_path, old):
    cls = type("Old", (ImagesPipeline,), {old: lambda self, url: "legacy/" + url[-5:]})
    with pytest.warns(CrawlfwDeprecationWarning, match=old):
        assert cls(str(tmp_path)).file_path(Request("http://a/x.gif")) == "legacy/x.gif"


def test_deprecated_thumb_key_override(tmp_path):
    class Old(ImagesPipeline):
        def thumb_key(self, url, thumb_id):
            return f"t/{thumb_id}"

    with pytest.warns(CrawlfwDeprecationWarning, match="thumb_key"):
        assert Old(str(tmp_path)).thumb_path(Request("http://a/x.gif"), "big") == "t/big"


@pytest.mark.parametrize(
    "mode, fmt, color, expected",
    [
        ("RGB", "PNG", (10, 20, 30), (10, 20, 30)),
        ("RGBA", "PNG", (0, 0, 0, 0), (255, 255, 255)),  # transparent -> white
        ("L", "PNG", 77, (77, 77, 77)),
        ("P", "GIF", 0, None),
        ("CMYK", "JPEG", (0, 0, 0, 0), None),
    ],
)
def test_convert_image_gives_rgb_jpeg(tmp_path, mode, fmt, color, expected):
    pipe = ImagesPipeline(str(tmp_path))
    source = Image.open(BytesIO(encode(Image.new(mode, (8, 8), color), fmt)))
    image, buf = pipe.convert_image(source)
    assert image.mode == "RGB"
    stored = Image.open(BytesIO(buf.getvalue()))
    assert stored.format == "JPEG"
    if expected is not None:
        assert all(abs(a - b) <= 3 for a, b in zip(stored.getpixel((4, 4)), expected,
                                                   strict=True))


@pytest.mark.parametrize(
    "source_size, thumb_size, expected",
    [((200, 100), (50, 50), (50, 25)), ((100, 200), (50, 50), (25, 50)),
     ((20, 10), (50, 50), (20, 10))],
)
def test_convert_image_thumbnail_keeps_aspect_ratio(tmp_path, source_size, thumb_size, expected):
    pipe = ImagesPipeline(str(tmp_path))
    image, _ = pipe.convert_image(Image.new("RGB", source_size), thumb_size)
    assert image.size == expected


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({}, (90, 0, 0, {}, "image_urls", "images")),
        ({"IMAGES_EXPIRES": 2, "IMAGES_MIN_WIDTH": 5, "IMAGES_MIN_HEIGHT": 6,
          "IMAGES_THUMBS": {"s": (9, 9)}, "IMAGES_URLS_FIELD": "u", "IMAGES_RESULT_FIELD": "r"},
         (2, 5, 6, {"s": (9, 9)}, "u", "r")),
        ({"MYIMAGES_IMAGES_MIN_WIDTH": 50, "IMAGES_MIN_WIDTH": 5}, (90, 50, 0, {}, "image_urls",
                                                                      "images")),
    ],
)
def test_settings(tmp_path, settings, expected):
    class MyImages(ImagesPipeline):
        pass

    pipe = MyImages.from_settings(Settings({"IMAGES_STORE": str(tmp_path), **settings}))
    assert (pipe.expires, pipe.min_width, pipe.min_height, pipe.thumbs,
            pipe.images_urls_field, pipe.images_result_field) == expected


def test_without_images_store_not_configured_names_the_setting():
    with pytest.raises(NotConfigured, match="IMAGES_STORE"):
        ImagesPipeline.from_settings(Settings())


def test_without_pillow_not_configured_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(images_module, "Image", None)
    with pytest.raises(NotConfigured, match="Pillow"):
        ImagesPipeline(str(tmp_path))


def test_image_too_small(tmp_path):
    from crawlfw.http import Response

    pipe = ImagesPipeline(str(tmp_path), settings={"IMAGES_MIN_WIDTH": 20})
    response = Response("http://a/s.png", body=encode(Image.new("RGB", (10, 30)), "PNG"))
    with pytest.raises(ImageException, match=r"Image too small \(10x30 < 20x0\)"):
        list(pipe.get_images(response, Request(response.url), None))


# --- real crawls ----------------------------------------------------------------------


def test_crawl_stores_jpegs_and_thumbnails(server, tmp_path):
    store = tmp_path / "store"
    thumbs = {"small": (50, 50), "big": (120, 120)}
    names = ["wide.png", "alpha.png", "palette.gif", "gray.png"]
    result = crawl(server, store, [names], IMAGES_THUMBS=thumbs)
    assert result.finish_reason == "finished"
    [item] = result.items
    assert [i["url"] for i in item["images"]] == [f"{server.url}/{n}" for n in names]
    for info in item["images"]:
        assert info["path"] == f"full/{sha1(info['url'])}.jpg"
        full = store / info["path"]
        assert hashlib.md5(full.read_bytes()).hexdigest() == info["checksum"]
        image = opened(full)
        assert (image.format, image.mode) == ("JPEG", "RGB")
        for thumb_id, (w, h) in thumbs.items():
            thumb = opened(store / "thumbs" / thumb_id / f"{sha1(info['url'])}.jpg")
            assert thumb.format == "JPEG"
            assert thumb.size[0] <= w and thumb.size[1] <= h
    wide = opened(store / "full" / f"{sha1(f'{server.url}/wide.png')}.jpg")
    assert wide.size == (200, 100)
    assert opened(store / "thumbs" / "small" / f"{sha1(f'{server.url}/wide.png')}.jpg").size \
        == (50, 25)
    alpha = opened(store / "full" / f"{sha1(f'{server.url}/alpha.png')}.jpg")
    assert all(c >= 250 for c in alpha.getpixel((20, 10)))  # transparent -> white
    assert result.stats["file_status_count/downloaded"] == 4


def test_crawl_skips_small_and_broken_images(server, tmp_path, caplog):
    store = tmp_path / "store"
    with caplog.at_level(logging.WARNING):
        result = crawl(server, store, [["small.jpg", "notimage.png", "wide.png"]],
                       IMAGES_MIN_WIDTH=20, IMAGES_MIN_HEIGHT=20)
    [item] = result.items
    assert [i["url"] for i in item["images"]] == [f"{server.url}/wide.png"]
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"File (error): Error processing file from <GET {server.url}/small.jpg>")
               and "Image too small (10x10 < 20x20)" in m for m in messages)
    assert any(m.startswith("File (unknown-error): Error processing file from "
                            f"<GET {server.url}/notimage.png>") for m in messages)
    assert sorted(p.name for p in (store / "full").iterdir()) == \
        [f"{sha1(f'{server.url}/wide.png')}.jpg"]


def test_crawl_second_run_is_uptodate(server, tmp_path):
    store = tmp_path / "store"
    first = crawl(server, store, [["wide.png"]])
    second = crawl(server, store, [["wide.png"]])
    assert second.stats["file_status_count/uptodate"] == 1
    assert second.items[0]["images"] == first.items[0]["images"]

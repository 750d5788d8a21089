"""ItemLoader on real pages: every book page of ../shared/sites/books.toscrape.com-partial.

Each page is loaded into a BookItem (title, price, UPC, availability, star rating,
category) through an ItemLoader, and the values are checked against a second,
independent reading of the raw bytes with regular expressions, plus exact values for
a few known books.
"""

import html
import re
from pathlib import Path

import pytest

from crawlfw.http import HtmlResponse
from crawlfw.item import Field, Item
from crawlfw.loader import ItemLoader
from crawlfw.loader.processors import Compose, Join, MapCompose, TakeFirst

SITE = "books.toscrape.com-partial"
RATINGS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


class BookItem(Item):
    url = Field()
    title = Field()
    price = Field()
    upc = Field()
    availability = Field()
    rating = Field()
    category = Field()
    description = Field(output_processor=Join(""))


def _rating(classes, loader_context):
    for cls in classes.split():
        if cls in loader_context["ratings"]:
            return loader_context["ratings"][cls]
    return None


class BookLoader(ItemLoader):
    default_item_class = BookItem
    default_input_processor = MapCompose(str.strip)
    default_output_processor = TakeFirst()
    price_in = MapCompose(str.strip, lambda s: s.lstrip("\u00a3"), float)
    availability_in = MapCompose(lambda s: re.search(r"\((\d+) available\)", s), lambda m: int(m.group(1)))
    rating_in = MapCompose(_rating)
    category_out = Compose(lambda v: v[-1])


def load_book(response):
    loader = BookLoader(response=response, ratings=RATINGS)
    loader.add_value("url", response.url)
    main = loader.nested_css("div.product_main")
    main.add_css("title", "h1::text")
    main.add_css("price", "p.price_color::text")
    main.add_xpath("rating", './p[contains(@class, "star-rating")]/@class')
    loader.add_xpath("upc", '//table//th[text()="UPC"]/following-sibling::td/text()')
    loader.add_xpath("availability", '//th[text()="Availability"]/following-sibling::td/text()')
    loader.add_css("category", "ul.breadcrumb li a::text")
    loader.add_xpath("description", '//div[@id="product_description"]/following-sibling::p[1]/text()')
    return loader.load_item()


def _pages(sites_dir):
    root = sites_dir / SITE / "catalogue"
    return sorted(root.glob("*/index.html"))


def _response(path: Path):
    url = f"http://books.toscrape.com/catalogue/{path.parent.name}/index.html"
    return HtmlResponse(url, headers={"Content-Type": "text/html"}, body=path.read_bytes())


def _independent_reading(raw: str):
    """The same values read with regular expressions from the page source."""
    main = raw[raw.index('<div class="col-sm-6 product_main">'):raw.index("</article>")]
    crumbs = re.findall(r'<li>\s*<a href="[^"]*">([^<]*)</a>\s*</li>', raw.split('class="breadcrumb"', 1)[1].split("</ul>", 1)[0])
    return {
        "title": html.unescape(re.search(r"<h1>(.*?)</h1>", main).group(1)),
        "price": float(re.search(r'<p class="price_color">\u00a3([\d.]+)</p>', main).group(1)),
        "upc": re.search(r"<th>UPC</th><td>([^<]+)</td>", raw).group(1),
        "availability": int(re.search(r"<th>Availability</th>\s*<td>In stock \((\d+) available\)</td>", raw).group(1)),
        "rating": RATINGS[re.search(r'<p class="star-rating (\w+)">', main).group(1)],
        "category": html.unescape(crumbs[-1]),
        "has_description": 'id="product_description"' in raw,
        "head_title": html.unescape(re.search(r"<title>\s*(.*?)\s*\|", raw, re.S).group(1)),
    }


def test_every_book_page(sites_dir):
    pages = _pages(sites_dir)
    assert len(pages) == 200
    seen_upcs = set()
    for path in pages:
        response = _response(path)
        item = load_book(response)
        expected = _independent_reading(path.read_bytes().decode("utf-8"))
        assert item["url"] == response.url
        for field in ("title", "price", "upc", "availability", "rating", "category"):
            assert item[field] == expected[field], (path.parent.name, field)
        assert item["title"] == expected["head_title"], path.parent.name
        assert re.fullmatch(r"[0-9a-f]{16}", item["upc"]), path.parent.name
        assert 1 <= item["rating"] <= 5
        if expected["has_description"]:
            assert len(item["description"]) > 20, path.parent.name
        else:
            assert "description" not in item, path.parent.name
        seen_upcs.add(item["upc"])
    assert len(seen_upcs) == 200


@pytest.mark.parametrize(
    "slug, title, price, upc, availability, rating, category",
    [
        ("tipping-the-velvet_999", "Tipping the Velvet", 53.74, "90fa61229261140a", 20, 1, "Historical Fiction"),
        ("a-light-in-the-attic_1000", "A Light in the Attic", 51.77, "a897fe39b1053632", 22, 3, "Poetry"),
        ("sharp-objects_997", "Sharp Objects", 47.82, "e00eb4fd7b871a48", 20, 4, "Mystery"),
        ("soumission_998", "Soumission", 50.10, "6957f44c3847a760", 20, 1, "Fiction"),
        ("rip-it-up-and-start-again_986", "Rip it Up and Start Again", None, "a34ba96d4081e6a4", 19, None, "Music"),
        ("doing-it-over-most-likely-to-1_802", "Doing It Over (Most Likely To #1)", None, "3a11bb962ff45b78", 15, None, "Romance"),
        ("dont-be-a-jerk-and-other-practical-advice-from-dogen-japans-greatest-zen-master_890",
         "Don't Be a Jerk: And Other Practical Advice from Dogen, Japan's Greatest Zen Master",
         None, None, None, None, None),
    ],
)
def test_known_books(sites_dir, slug, title, price, upc, availability, rating, category):
    item = load_book(_response(sites_dir / SITE / "catalogue" / slug / "index.html"))
    expected = {"title": title, "price": price, "upc": upc, "availability": availability,
                "rating": rating, "category": category}
    for field, value in expected.items():
        if value is not None:
            assert item[field] == value, field


def test_book_description_and_recently_viewed_are_separate(sites_dir):
    # The page lists other books ("recently viewed") with their own prices and ratings;
    # the nested loader keeps the product's own.
    path = sites_dir / SITE / "catalogue" / "sharp-objects_997" / "index.html"
    response = _response(path)
    assert len(response.css("p.price_color")) > 1
    item = load_book(response)
    assert item["price"] == 47.82
    assert item["description"].startswith("WICKED above her hipbone, GIRL across her heart")

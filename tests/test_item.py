"""Item and Field (crawlfw.item): the seven rules of the Scrapy 1.2 "Items" page."""

import copy
import pickle

import pytest

from crawlfw.item import BaseItem, DictItem, Field, Item, ItemMeta


class Product(Item):
    name = Field()
    price = Field()
    stock = Field()
    tags = Field()
    last_updated = Field(serializer=str)


class DiscountedProduct(Product):
    discount_percent = Field(serializer=str)
    discount_expiration_date = Field()


def _upper(value):
    return value.upper()


class SpecificProduct(Product):
    name = Field(Product.fields["name"], serializer=_upper)


# Rule 1: the dict API, including the constructor forms.
@pytest.mark.parametrize(
    "make",
    [
        lambda: Product(name="Desktop PC", price=1000),
        lambda: Product({"name": "Desktop PC", "price": 1000}),
        lambda: Product([("name", "Desktop PC"), ("price", 1000)]),
        lambda: Product(Product(name="Desktop PC", price=1000)),
        lambda: Product({"name": "Desktop PC"}, price=1000),
    ],
)
def test_constructor_forms(make):
    product = make()
    assert dict(product) == {"name": "Desktop PC", "price": 1000}


def test_dict_api():
    product = Product(name="Desktop PC", price=1000)
    assert product["name"] == "Desktop PC"
    assert product.get("price") == 1000
    product["last_updated"] = "today"
    assert product["last_updated"] == "today"
    assert len(product) == 3
    del product["last_updated"]
    assert "last_updated" not in product
    assert product.setdefault("stock", 5) == 5
    assert product.pop("stock") == 5
    product.update({"tags": ["a"]})
    assert sorted(product) == ["name", "price", "tags"]
    assert product == {"name": "Desktop PC", "price": 1000, "tags": ["a"]}
    assert Product(name="x") == Product(name="x")
    assert Product(name="x") != Product(name="y")
    assert isinstance(product, BaseItem) and isinstance(product, DictItem)


# Rule 2: fields holds every declared field (inherited ones too).
@pytest.mark.parametrize(
    "cls, fields",
    [
        (Item, {}),
        (Product, {"name": {}, "price": {}, "stock": {}, "tags": {}, "last_updated": {"serializer": str}}),
        (DiscountedProduct, {"name": {}, "price": {}, "stock": {}, "tags": {},
                             "last_updated": {"serializer": str}, "discount_percent": {"serializer": str},
                             "discount_expiration_date": {}}),
        (SpecificProduct, {"name": {"serializer": _upper}, "price": {}, "stock": {}, "tags": {},
                           "last_updated": {"serializer": str}}),
    ],
)
def test_fields(cls, fields):
    assert cls.fields == fields
    assert all(isinstance(f, Field) for f in cls.fields.values())
    assert cls().fields == fields


# Rule 3: declared Fields are not class attributes.
@pytest.mark.parametrize("name", ["name", "last_updated"])
def test_fields_removed_from_class_attributes(name):
    assert not hasattr(Product, name)
    with pytest.raises(AttributeError):
        getattr(Product, name)


def test_methods_and_class_attributes_are_kept():
    class WithMethod(Item):
        name = Field()
        plain = 3

        def shout(self):
            return self["name"].upper()

        @classmethod
        def make(cls):
            return cls(name="made")

    item = WithMethod.make()
    assert item.shout() == "MADE"
    assert WithMethod.plain == 3
    assert list(WithMethod.fields) == ["name"]


def test_super_works_in_item_methods():
    class Base(Item):
        a = Field()

        def describe(self):
            return "base"

    class Child(Base):
        def describe(self):
            return "child+" + super().describe()

    assert Child().describe() == "child+base"


# Rule 4: subclassing, and extending a parent's Field.
def test_subclassing():
    item = DiscountedProduct(name="x", discount_percent=10)
    assert item["discount_percent"] == 10
    with pytest.raises(KeyError):
        Product(discount_percent=10)
    assert Product.fields["name"] == {}  # the parent is not changed
    assert SpecificProduct.fields["name"]["serializer"] is _upper
    assert isinstance(DiscountedProduct(), Product)


def test_field_copy_with_extra_metadata():
    base = Field(serializer=str, input_processor="x")
    extended = Field(base, serializer=int)
    assert extended == {"serializer": int, "input_processor": "x"}
    assert base["serializer"] is str


def test_sibling_classes_do_not_share_fields():
    class A(Item):
        a = Field()

    class B(Item):
        b = Field()

    assert list(A.fields) == ["a"] and list(B.fields) == ["b"]
    assert Item.fields == {}


# Rule 5: unpopulated fields.
def test_unpopulated_field():
    product = Product(name="Desktop PC")
    with pytest.raises(KeyError) as excinfo:
        product["price"]
    assert excinfo.value.args == ("price",)
    assert product.get("price") is None
    assert product.get("price", "default") == "default"
    assert "price" not in product
    assert "price" in product.fields
    assert "name" in product


# Rule 6: undeclared fields.
@pytest.mark.parametrize(
    "action",
    [
        lambda p: p.__setitem__("lala", "test"),
        lambda p: p.update({"lala": "test"}),
        lambda p: Product(lala="test"),
        lambda p: Product({"lala": "test"}),
        lambda p: p.setdefault("lala", "test"),
    ],
)
def test_undeclared_field_errors(action):
    with pytest.raises(KeyError) as excinfo:
        action(Product(name="x"))
    assert excinfo.value.args == ("Product does not support field: lala",)


def test_undeclared_field_message_names_the_subclass():
    with pytest.raises(KeyError, match="DiscountedProduct does not support field: nope"):
        DiscountedProduct(nope=1)


def test_reading_undeclared_field():
    with pytest.raises(KeyError) as excinfo:
        Product()["lala"]
    assert excinfo.value.args == ("lala",)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda p: p.name, "Use item['name'] to get field value"),
        (lambda p: setattr(p, "name", "x"), "Use item['name'] = 'x' to set field value"),
        (lambda p: p.undeclared, "undeclared"),
        (lambda p: setattr(p, "other", 1), "Use item['other'] = 1 to set field value"),
    ],
)
def test_fields_are_not_attributes(action, message):
    with pytest.raises(AttributeError) as excinfo:
        action(Product(name="y"))
    assert str(excinfo.value) == message


# Rule 7: keys(), items(), dict(item), copy().
def test_keys_items_dict_copy():
    product = Product(name="Desktop PC", price=1000, tags=["a"])
    assert list(product.keys()) == ["name", "price", "tags"]
    assert list(product.items()) == [("name", "Desktop PC"), ("price", 1000), ("tags", ["a"])]
    assert list(product.values()) == ["Desktop PC", 1000, ["a"]]
    assert dict(product) == {"name": "Desktop PC", "price": 1000, "tags": ["a"]}

    shallow = product.copy()
    assert type(shallow) is Product and shallow == product and shallow is not product
    assert shallow["tags"] is product["tags"]
    shallow["name"] = "Other"
    assert product["name"] == "Desktop PC"

    deep = product.deepcopy()
    assert deep == product and deep["tags"] is not product["tags"]
    assert copy.deepcopy(product)["tags"] is not product["tags"]


def test_repr_is_the_dict():
    product = Product(name="Desktop PC", price=1000)
    assert repr(product) == "{'name': 'Desktop PC', 'price': 1000}"
    assert str(Product()) == "{}"
    long = Product(tags=[f"tag-{i}" for i in range(30)])
    assert "\n" in repr(long)  # pprint wraps long values


def test_items_are_hashable_by_identity():
    a, b = Product(name="x"), Product(name="x")
    assert a == b and hash(a) != hash(b)
    assert len({id(a): a, id(b): b}) == 2
    assert len({a, b}) == 2


def test_pickle_round_trip():
    product = Product(name="x", price=1)
    restored = pickle.loads(pickle.dumps(product))
    assert type(restored) is Product and restored == product


def test_metaclass():
    assert type(Item) is ItemMeta
    assert type(Product) is ItemMeta

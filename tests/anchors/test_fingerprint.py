"""Fingerprints: equal for code that was only renamed, moved or reformatted, different for code that
changed (pure: text in, hashes out)."""
from stele.anchors import fingerprint as fp
from tests.factfiles import AUTH_PY

SHOP = '''\
import math


def checkout(cart):
    """Sum the cart."""
    total = sum(item.price for item in cart)
    if total > 100:
        return checkout([])  # recursive on purpose
    return math.ceil(total)


def other():
    return 1
'''


def test_a_renamed_reformatted_python_function_keeps_its_fingerprint():
    before = fp.of_symbol(SHOP, "checkout", "src/shop.py")
    moved = ("# moved here from shop.py\n\ndef place_order(cart):\n    \"\"\"Sum the cart.\"\"\"\n"
             "    total = sum(item.price   for item in cart)  # spacing changed\n\n    if total > 100:\n"
             "        return place_order([])\n    return math.ceil(total)\n")
    assert before and len(before) == fp.LENGTH
    assert fp.definitions(moved, "lib/orders.py")["place_order"] == before
    changed = moved.replace("math.ceil(total)", "math.floor(total)")
    assert fp.definitions(changed, "lib/orders.py")["place_order"] != before
    assert fp.of_symbol(SHOP, "other", "src/shop.py") != before
    assert fp.of_symbol(SHOP, "nowhere", "src/shop.py") is None


def test_a_method_keeps_its_fingerprint_in_another_class_and_definitions_list_members():
    check = fp.of_symbol(AUTH_PY, "RateLimiter.check", "src/auth.py")
    renamed = AUTH_PY.replace("class RateLimiter", "class TokenBucket").replace("def check", "def allow")
    defs = fp.definitions(renamed, "src/auth.py")
    assert defs["TokenBucket.allow"] == check and "login" in defs and "LIMIT" in defs


def test_pattern_languages_fingerprint_the_definition_text_without_its_name():
    js = "export function checkout(cart) {\n  return cart.reduce((a, i) => a + i.price, 0);\n}\n" \
         "class Shop {\n  pay(x) {\n    return x;\n  }\n}\n"
    moved = "// moved\nexport function placeOrder(cart) {\n  return cart.reduce((a, i) => a + i.price,0);\n}\n"
    before = fp.of_symbol(js, "checkout", "src/cart.js")
    assert fp.definitions(moved, "src/orders.ts")["placeOrder"] == before
    assert set(fp.definitions(js, "src/cart.js")) == {"checkout", "Shop", "Shop.pay"}
    go = "package shop\n\nfunc Checkout(c Cart) int {\n\treturn c.Total()\n}\n"
    assert fp.definitions(go.replace("Checkout", "PlaceOrder"), "b.go")["PlaceOrder"] == \
        fp.of_symbol(go, "Checkout", "a.go")


def test_files_and_anchors():
    assert fp.of_file(SHOP) == fp.of_file(SHOP.replace("    ", "\t")) != fp.of_file(SHOP + "X = 1\n")
    files = {"src/shop.py": SHOP}
    assert fp.of_anchor("src/shop.py::checkout", files.get) == fp.of_symbol(SHOP, "checkout", "src/shop.py")
    assert fp.of_anchor("src/shop.py", files.get) == fp.of_file(SHOP)
    assert fp.of_anchor("src/**/*.py", files.get) is None and fp.of_anchor("src/gone.py", files.get) is None

from stele.retrieve.gate import check, prompt_paths


def test_short_prompts_are_skipped_unless_they_name_an_id_or_a_file():
    assert check("fix retries", [], 25).skipped
    assert check("why 429s on partner API?", [], 25).skipped       # 24 characters
    assert not check("bcrypt cost factor value?", [], 25).skipped  # exactly 25
    g = check("TASK-8592", [], 25)
    assert not g.skipped and g.ids == ["TASK-8592"] and g.text == "" and g.identifier_only
    g = check("is risk-5wps handled?", [], 25)
    assert g.ids == ["RISK-5WPS"] and g.identifier_only
    g = check("", ["./src/a.py"], 25)
    assert not g.skipped and g.paths == ["src/a.py"] and not g.identifier_only


def test_a_long_prompt_is_searched_and_its_paths_become_anchor_queries():
    g = check("why does src/shop/payments/retry.py sleep so long, and what about cart.py?", ["web/x.tsx"], 25)
    assert g.text.startswith("why does") and g.paths == ["web/x.tsx", "src/shop/payments/retry.py", "cart.py"]
    assert g.named_paths == ["src/shop/payments/retry.py", "cart.py"]


def test_path_detection_ignores_urls_and_mail_addresses():
    assert prompt_paths("see https://example.com/a/b.html or mail support@stripe.com") == []
    assert prompt_paths("crash in web/src/checkout/CheckoutForm.tsx") == ["web/src/checkout/CheckoutForm.tsx"]

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


def test_a_huge_paste_is_analysed_by_its_ends_while_ids_and_paths_come_from_all_of_it():
    """A 5 MB paste used to spend the whole hook budget in analysis and inject nothing."""
    from stele.retrieve.gate import ANALYSIS_CHARS

    paste = "why does this traceback happen?\n" + "  File lib/x.py line 1 in f\n" * 200_000
    prompt = paste + "it started after DEC-AGHA changed src/shop/payments/retry.py; see also task-8592"
    assert len(prompt) > 5_000_000
    g = check(prompt, [], 25)
    assert len(g.text) <= ANALYSIS_CHARS + len("\n...\n")
    assert g.text.startswith("why does this traceback happen?") and g.text.endswith("task-8592")
    assert g.ids == ["DEC-AGHA", "TASK-8592"]
    assert g.named_paths == ["lib/x.py", "src/shop/payments/retry.py"]


def test_the_paths_of_one_prompt_are_bounded_first_and_last_kept():
    from stele.retrieve.gate import MAX_NAMED_PATHS

    names = prompt_paths(" ".join(f"src/m{n}.py" for n in range(500)))
    assert len(names) == MAX_NAMED_PATHS and names[0] == "src/m0.py" and names[-1] == "src/m499.py"

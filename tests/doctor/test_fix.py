"""`doctor --fix`: follow renames, re-find moved Python symbols, never delete, mark the rest for review."""
import datetime as dt

from stele.doctor import fix
from stele.doctor import run as doctor_run
from stele.project import Project
from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git

TODAY = dt.date(2026, 11, 29)


def setup(repo, *anchors):
    write(repo, "src/auth.py", AUTH_PY)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=list(anchors), body="Order matters.")
    commit(repo, "init")
    return rel


def test_a_renamed_file_is_followed_and_the_diff_shown_first(repo):
    rel = setup(repo, "src/auth.py::RateLimiter.check", "src/auth.py")
    git(repo, "mv", "src/auth.py", "src/limits.py")
    [repair] = fix.plan(Project(repo), TODAY)
    diff = repair.diff()
    assert diff.startswith(f"--- a/{rel}\n+++ b/{rel}\n")
    assert "-  - src/auth.py::RateLimiter.check\n-  - src/auth.py\n" in diff
    assert "+  - src/limits.py::RateLimiter.check\n+  - src/limits.py\n" in diff
    assert (repo / rel).read_text() == repair.before  # planning writes nothing
    fix.apply(Project(repo), [repair])
    assert (repo / rel).read_text() == repair.after
    assert doctor_run.run(Project(repo)).findings == []


def test_a_renamed_folder_is_followed_for_globs_and_folders(repo):
    setup(repo, "src/**/*.py", "src")
    git(repo, "mv", "src", "lib")
    [repair] = fix.plan(Project(repo), TODAY)
    fix.apply(Project(repo), [repair])
    assert "  - lib/**/*.py\n  - lib\n" in (repo / repair.fact.path).read_text()


def test_a_python_symbol_moved_to_another_class_is_refound_by_name(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    write(repo, "src/auth.py", AUTH_PY.replace("class RateLimiter", "class TokenBucket"))
    [repair] = fix.plan(Project(repo), TODAY)
    assert "+  - src/auth.py::TokenBucket.check\n" in repair.diff()


def test_a_symbol_refound_in_the_renamed_file(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    git(repo, "mv", "src/auth.py", "src/limits.py")
    write(repo, "src/limits.py", AUTH_PY.replace("class RateLimiter", "class Limiter"))
    [repair] = fix.plan(Project(repo), TODAY)
    assert "+  - src/limits.py::Limiter.check\n" in repair.diff()


def test_an_unrepairable_anchor_marks_the_fact_as_needing_review_and_never_retires_it(repo):
    rel = setup(repo, "src/auth.py::RateLimiter.check", "src/gone.py")
    [repair] = fix.plan(Project(repo), TODAY)
    fix.apply(Project(repo), [repair])
    text = (repo / rel).read_text()
    assert "  - src/gone.py\n" in text and "review_after" not in text  # still delivered tomorrow
    assert "needs_review: anchor src/gone.py no longer resolves (src/gone.py does not exist and never did " \
           "in git history (a typo?))" in text
    assert any("cannot be repaired" in n for n in repair.notes)
    assert fix.plan(Project(repo), TODAY) == []  # nothing more to do: a second run changes nothing
    assert fix.plan(Project(repo), TODAY + dt.timedelta(days=3)) == []  # nor a later one


def test_nothing_to_fix_plans_nothing(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    assert fix.plan(Project(repo), TODAY) == []


# --- re-found by content: the fingerprint recorded when the fact was written --------------------------

SHOP_PY = '''\
def checkout(cart):
    total = sum(item.price for item in cart)
    return round(total, 2)


def refund(order):
    return -order.total
'''
SHOP_JS = '''\
export function checkout(cart) {
  return cart.reduce((sum, item) => sum + item.price, 0);
}
'''


def remembered(repo, anchor: str, kind: str = "decision") -> str:
    import json

    from tests.helpers import invoke

    r = invoke("remember", f"Checkout rounds to cents ({anchor}).", "--kind", kind, "--anchor", anchor, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)["id"]


def fixed(repo) -> list:
    repairs = fix.plan(Project(repo), TODAY)
    fix.apply(Project(repo), repairs)
    return repairs


def anchors_of(repo, fid: str) -> list[str]:
    from stele.record.load import load

    return load(Project(repo)).get(fid).anchors


def test_writing_a_fact_records_fingerprints_of_what_resolves_and_verify_refreshes_them(repo):
    from stele.anchors.fingerprint import of_symbol
    from stele.record import edit
    from stele.record.load import load

    write(repo, "src/shop.py", SHOP_PY)
    fid = remembered(repo, "src/shop.py::checkout")
    edit.edit(Project(repo), fid, edit.Changes(add_anchors=["src/nowhere.py"]))
    fact = load(Project(repo)).get(fid)
    assert fact.fingerprints == {"src/shop.py::checkout": of_symbol(SHOP_PY, "checkout", "src/shop.py")}
    assert "fingerprints:\n  src/shop.py::checkout: " in (repo / fact.path).read_text()
    changed = SHOP_PY.replace("round(total, 2)", "round(total, 3)")
    write(repo, "src/shop.py", changed)
    edit.edit(Project(repo), fid, edit.Changes(add_tags=["money"]))  # an unrelated edit keeps it
    assert load(Project(repo)).get(fid).fingerprints == fact.fingerprints
    edit.verify(Project(repo), fid)
    assert load(Project(repo)).get(fid).fingerprints == {
        "src/shop.py::checkout": of_symbol(changed, "checkout", "src/shop.py")}


def test_a_renamed_python_function_is_refound_by_its_content(repo):
    write(repo, "src/shop.py", SHOP_PY)
    fid = remembered(repo, "src/shop.py::checkout")
    commit(repo, "init")
    write(repo, "src/shop.py", SHOP_PY.replace("def checkout", "def place_order"))
    [repair] = fixed(repo)
    assert "-  - src/shop.py::checkout\n+  - src/shop.py::place_order\n" in repair.diff()
    assert "same content" in repair.notes[0] and anchors_of(repo, fid) == ["src/shop.py::place_order"]
    assert doctor_run.run(Project(repo)).findings == []


def test_a_function_moved_to_another_file_is_refound_by_its_content(repo):
    write(repo, "src/shop.py", SHOP_PY)
    fid = remembered(repo, "src/shop.py::checkout")
    commit(repo, "init")
    write(repo, "src/shop.py", SHOP_PY.split("\n\n\n")[1])
    write(repo, "src/billing/orders.py", "import math\n\n\n" + SHOP_PY.split("\n\n\n")[0] + "\n")
    commit(repo, "move checkout")
    report = doctor_run.run(Project(repo))
    assert "src/billing/orders.py::checkout is a definition with the same content" in report.findings[0].message
    fixed(repo)
    assert anchors_of(repo, fid) == ["src/billing/orders.py::checkout"]


def test_a_file_moved_with_plain_mv_then_committed_is_refound_by_its_content(repo):
    write(repo, "src/shop.py", SHOP_PY)
    fid = remembered(repo, "src/shop.py")
    sym = remembered(repo, "src/shop.py::refund")
    commit(repo, "init")
    (repo / "src/shop.py").rename(repo / "src/store.py")
    git(repo, "commit", "-qam", "mv shop store")  # `-a` stages the deletion, not the untracked new file
    fixed(repo)
    assert anchors_of(repo, fid) == ["src/store.py"] and anchors_of(repo, sym) == ["src/store.py::refund"]


def test_a_renamed_js_function_is_refound_and_its_risk_is_never_switched_off(repo):
    """The issue's case: renaming `checkout` in a JS file once made a decision and its risk warning
    disappear (doctor --fix set review_after to today)."""
    from tests.helpers import invoke

    write(repo, "web/cart.js", SHOP_JS)
    dec = remembered(repo, "web/cart.js::checkout")
    risk = invoke("remember", "Floating point totals drift by a cent.", "--kind", "risk",
                  "--link", f"caused-by:{dec}", "--json")
    assert risk.code == 0
    commit(repo, "init")
    write(repo, "web/cart.js", SHOP_JS.replace("checkout", "placeOrder"))
    fixed(repo)
    assert anchors_of(repo, dec) == ["web/cart.js::placeOrder"]


def test_two_copies_of_the_content_are_named_and_neither_is_chosen(repo):
    write(repo, "src/shop.py", SHOP_PY)
    fid = remembered(repo, "src/shop.py::checkout")
    commit(repo, "init")
    copy = SHOP_PY.split("\n\n\n")[0] + "\n"
    write(repo, "src/a.py", copy)
    write(repo, "src/b.py", copy)
    write(repo, "src/shop.py", SHOP_PY.split("\n\n\n")[1])
    [finding] = doctor_run.run(Project(repo)).findings
    assert "2 places have its content (src/a.py::checkout, src/b.py::checkout): choose one" in finding.message
    [repair] = fixed(repo)
    assert anchors_of(repo, fid) == ["src/shop.py::checkout"] and "needs_review: 'anchor" in repair.after


def test_a_fact_that_needs_review_is_listed_labeled_and_still_delivered_until_verified(repo, monkeypatch):
    from stele.record import edit
    from tests.helpers import invoke

    write(repo, "web/cart.js", SHOP_JS)
    dec = remembered(repo, "web/cart.js::checkout")
    (repo / "web/cart.js").unlink()
    fixed(repo)
    found = [f for f in doctor_run.run(Project(repo)).findings if f.check == "needs-review"]
    assert [f.fact for f in found] == [dec] and f"`stele verify {dec}` clears this" in found[0].message
    monkeypatch.setenv("STELE_TODAY", "2027-06-01")  # months later it is still injected, and labeled
    recalled = invoke("recall", "how does checkout round the totals to cents")
    assert f"DECISION {dec} [needs review]  Checkout rounds to cents (" in recalled.out
    data = invoke("recall", "how does checkout round the totals to cents", "--json").out
    assert '"needs_review": "anchor web/cart.js::checkout no longer resolves' in data
    edit.edit(Project(repo), dec, edit.Changes(remove_anchors=["web/cart.js::checkout"]))
    edit.verify(Project(repo), dec)
    assert [f for f in doctor_run.run(Project(repo)).findings if f.check == "needs-review"] == []

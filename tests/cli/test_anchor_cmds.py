"""`stele anchored` through the real entry point."""
import json

from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git, invoke


def setup(root):
    write(root, "src/auth.py", AUTH_PY)
    write_fact(root, "RISK-AAAA", "risk", title="Limiter order", anchors=["src/auth.py::RateLimiter.check"])
    write_fact(root, "DEC-BBBB", "decision", title="Auth file", anchors=["src/auth.py"])
    commit(root, "init")


def ids(r):
    assert r.code == 0, r.err
    return [f["id"] for f in json.loads(r.out)["facts"]]


def test_anchored_paths_staged_and_diff(repo, monkeypatch):
    setup(repo)
    assert ids(invoke("anchored", "src/auth.py", "--json")) == ["RISK-AAAA", "DEC-BBBB"]
    monkeypatch.chdir(repo / "src")
    assert ids(invoke("anchored", "auth.py", "--json")) == ["RISK-AAAA", "DEC-BBBB"]  # relative to the cwd
    monkeypatch.chdir(repo)
    write(repo, "src/auth.py", AUTH_PY.replace("return user is not None", "return bool(user)"))
    git(repo, "add", "src/auth.py")
    assert ids(invoke("anchored", "--staged", "--json")) == ["DEC-BBBB"]
    assert ids(invoke("anchored", "--diff", "HEAD", "--json")) == ["DEC-BBBB"]
    write(repo, "src/auth.py", AUTH_PY.replace("return True", "return 1"))
    assert ids(invoke("anchored", "--diff", "HEAD", "--json")) == ["RISK-AAAA", "DEC-BBBB"]
    assert ids(invoke("anchored", "--diff", "HEAD", "docs", "--json")) == []


def test_anchored_text_and_usage_errors(repo):
    setup(repo)
    r = invoke("anchored", "src/auth.py")
    assert r.out == ("RISK-AAAA risk: Limiter order\n    src/auth.py::RateLimiter.check (lines 10-13)\n"
                     "DEC-BBBB decision: Auth file\n    src/auth.py\n")
    assert invoke("anchored", "README.md").out == "no facts are anchored there\n"
    assert invoke("anchored").code == 2
    assert invoke("anchored", "--staged", "--diff", "HEAD").code == 2
    bad = invoke("anchored", "--diff", "nope")
    assert bad.code == 1 and "--diff 'nope' names no commit" in bad.err

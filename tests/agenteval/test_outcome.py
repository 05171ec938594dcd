from stele.agenteval.outcome import judge
from stele.agenteval.suite import Command, Expect
from stele.agenteval.workspace import Change


def failed(checks):
    return [(c.name, c.detail) for c in checks if not c.ok]


def test_forbid_reads_added_lines_only_in_its_paths(tmp_path):
    change = Change(["gc.py", "other.py"], {"gc.py": ["    keep = True"], "other.py": ["os.remove(blob)"]})
    scoped = Expect(forbid=[r"os\.remove"], paths=["gc.py"])
    assert failed(judge(scoped, tmp_path, change, "", 1, None, {})) == []
    anywhere = Expect(forbid=[r"os\.remove"])
    assert failed(judge(anywhere, tmp_path, change, "", 1, None, {})) == [
        (r"forbid /os\.remove/", "other.py: os.remove(blob)")]


def test_require_with_paths_reads_the_files_after_the_run(tmp_path):
    from tests.helpers import git

    git(tmp_path, "init", "-q")
    (tmp_path / "gc.py").write_text("GRACE = 48\n")
    git(tmp_path, "add", ".")
    expect = Expect(require=["GRACE = 48"], paths=["gc.py"])
    assert failed(judge(expect, tmp_path, Change(), "", 1, None, {})) == []
    (tmp_path / "gc.py").write_text("GRACE = 0\n")
    assert failed(judge(expect, tmp_path, Change(["gc.py"]), "", 1, None, {})) == [("require /GRACE = 48/", "gc.py")]
    assert failed(judge(Expect(require=["grace"]), tmp_path, Change(["gc.py"], {"gc.py": ["x"]}), "", 1, None, {})) == [
        ("require /grace/", "no added line matches")]


def test_touched_cited_turns_and_commands(tmp_path):
    change = Change(["src/a.py", "docs/b.md"])
    expect = Expect(touched=["src/*.py", "c.py"], not_touched=["docs"], cite=["CON-6E8B", "CON-6E8"],
                    commands=[Command("true"), Command("exit 3"), Command("sleep 5", timeout=1)])
    got = failed(judge(expect, tmp_path, change, "kept CON-6E8B as it is", 4, 3, {"PATH": "/usr/bin:/bin"}))
    assert got == [("touched c.py", "not changed"), ("not touched docs", "docs/b.md"),
                   ("command `exit 3`", "exit 3: "), ("command `sleep 5`", "timed out after 1 s"),
                   ("cites CON-6E8", "not in the final answer"), ("turns <= 3", "4 turns")]

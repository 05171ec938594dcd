"""What a release ships: the sdist and the wheel, built by the real backend (hatchling, as `pip install`
and `python -m build` call it), opened and read. The license is in both; the wheel carries the
package, its data (templates, the bundled model and its notice, the demo's example) and nothing of the
repository around it; the metadata says what pyproject.toml says."""
from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml

import stele

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = stele.__version__  # the one version source (pyproject.toml: dynamic, [tool.hatch.version])

pytestmark = pytest.mark.slow  # compresses the 8 MB model twice: a few seconds


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    code = ("import sys, hatchling.build as b; "
            "print(b.build_sdist(sys.argv[1])); print(b.build_wheel(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def wheel(dist: Path) -> zipfile.ZipFile:
    return zipfile.ZipFile(dist / f"stele-{VERSION}-py3-none-any.whl")


def metadata(dist: Path):
    return Parser().parsestr(wheel(dist).read(f"stele-{VERSION}.dist-info/METADATA").decode())


def test_the_wheel_holds_the_package_its_data_and_the_license(dist):
    names = set(wheel(dist).namelist())
    info = f"stele-{VERSION}.dist-info"
    assert wheel(dist).read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert f"{info}/licenses/src/stele/bundled_model/NOTICE" in names
    for path in ("stele/__init__.py", "stele/py.typed", "stele/cli/entry.py", "stele/hooks/dispatch.py",
                 "stele/bundled_model/model.safetensors", "stele/bundled_model/NOTICE",
                 "stele/bundled_model/SHA256SUMS", "stele/examples/harbor/prompts.txt"):
        assert path in names, path
    templates = {n.split("/")[-1] for n in names if n.startswith("stele/templates/")}
    assert templates == {p.name for p in (ROOT / "templates").iterdir()}
    assert {n.split("/")[0] for n in names} == {"stele", info}  # no tests, docs or scripts
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    entry = wheel(dist).read(f"{info}/entry_points.txt").decode()
    assert "stele = stele.cli.entry:main" in entry


def test_the_metadata_has_the_license_classifiers_and_urls_pyproject_declares(dist):
    meta = metadata(dist)
    project = PYPROJECT["project"]
    assert meta["License-Expression"] == project["license"] == "Apache-2.0"
    assert meta["Version"] == stele.__version__ and "version" not in project  # one version source
    assert meta.get_all("Classifier") == project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # PEP 639: the expression says it
    floor = re.fullmatch(r">=3\.(\d+)", project["requires-python"])
    assert floor and f"Programming Language :: Python :: 3.{floor.group(1)}" in project["classifiers"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls == project["urls"] and {"Homepage", "Repository", "Documentation", "Issues"} <= set(urls)


def _repository_url():
    import importlib.util

    spec = importlib.util.spec_from_file_location("repository_url", ROOT / "scripts" / "repository_url.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_place_that_names_the_repository_derives_from_the_one_setting():
    script = _repository_url()
    base = PYPROJECT["project"]["urls"]["Repository"]
    assert PYPROJECT["project"]["urls"] == script.derived_urls(base)
    assert script.main(["--check"]) == 0
    named = set()
    for path in script.copies():
        named |= set(re.findall(r"https://github\.com/[\w.-]+/stele\b", path.read_text(encoding="utf-8")))
    assert named == {base}, named
    # a copy that drifted is found and put right
    drifted = "  - repo: https://github.com/someone/stele\n      - uses: someone/stele@v1\n"
    assert script.rewritten(drifted, "https://github.com/acme/stele") == (
        "  - repo: https://github.com/acme/stele\n      - uses: acme/stele@v1\n")


def test_sarif_links_come_from_the_repository_setting(monkeypatch):
    from importlib import metadata

    from stele.doctor.findings import Report
    from stele.render import sarif

    base = PYPROJECT["project"]["urls"]["Repository"]
    driver = sarif.log(Report(findings=[]))["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == base
    assert {r["helpUri"] for r in driver["rules"]} == {f"{base}/blob/main/docs/doctor.md#checks"}

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "metadata", missing)
    driver = sarif.log(Report(findings=[]))["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and not any("helpUri" in r for r in driver["rules"])


def test_the_sdist_has_the_source_the_tests_and_the_license(dist):
    with tarfile.open(dist / f"stele-{VERSION}.tar.gz") as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        license_text = sdist.extractfile(f"stele-{VERSION}/LICENSE").read()
    assert license_text == (ROOT / "LICENSE").read_bytes()
    for path in ("pyproject.toml", "README.md", "PKG-INFO", "src/stele/__init__.py", "tests/test_packaging.py",
                 "docs/cli.md", "templates/decision.md", ".pre-commit-hooks.yaml"):
        assert path in names, path
    assert not [n for n in names if n.startswith(".venv") or "__pycache__" in n or n.endswith(".pyc")]


def test_the_license_is_the_apache_2_0_text():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_pre_commit_hooks_declare_the_framework_version_their_stages_need():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    stages = {s for h in hooks for s in h.get("stages", ())}
    assert {"pre-commit", "pre-push"} & stages  # the stage names pre-commit 3.2.0 introduced
    for hook in hooks:
        assert tuple(int(x) for x in hook["minimum_pre_commit_version"].split(".")) >= (3, 2, 0), hook["id"]

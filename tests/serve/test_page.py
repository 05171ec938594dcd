"""The web page in headless Chromium, on the bundled example record: the graph view draws every fact
and edge inside the drawing (read from the DOM after the scripts ran), the screenshot shows risk nodes,
rule nodes and causal edges in their colours, and no view logs a script error.

Skipped where no Chromium is installed; `.ci/run` installs Debian's `chromium` so CI runs these."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from stele.project import Project
from stele.record.scaffold import example_repository as build
from stele.serve.server import WebServer

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
WIDTH, HEIGHT = 1280, 900
# style.css: --risk, --rule, .rel-caused-by
RISK, RULE, CAUSED_BY = (214, 39, 40), (31, 111, 209), (228, 87, 46)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    from stele.snapshot.build import Request, take

    root = build(tmp_path_factory.mktemp("example") / "harbor")
    srv = WebServer(Project(root), "127.0.0.1", 0, quiet=True)
    srv.run = take(srv.project, Request(task="TASK-V5VH"), save=True).run  # what a claim stores
    from stele.session import sessions

    srv.session = sessions.start(srv.project, agent="claude-code", goal="Reconcile blob_refs weekly").session
    sessions.log(srv.project, srv.session, "decision", "Recount from manifests, never from the counters.",
                task="TASK-V5VH", issue="41")
    sessions.log_delivered(srv.project, srv.session, "prompt", ["RISK-3EHX"], "claude-code",
                           prompt="why do blob refcounts drift after a crash?")
    sessions.log_delivered(srv.project, srv.session, "pre-edit", ["RISK-3EHX", "CON-6E8B"], "claude-code")
    from tests.agenteval.sample import stored_run

    srv.eval_run = stored_run(srv.project)  # what `stele eval --agent` stores
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def chromium(tmp_path: Path, url: str, *action: str) -> subprocess.CompletedProcess:
    """Headless Chromium as the machine notes say to start it here: no sandbox (root), no GPU, no
    background networking (the closed network refuses it), a fresh profile."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars",
           "--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0", *action, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def script_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if ":CONSOLE" in line and ("Uncaught" in line or "rror" in line)]


def api(srv, path: str) -> dict:
    from urllib.request import urlopen

    with urlopen(srv.url.rstrip("/") + path, timeout=10) as r:
        return json.load(r)


def test_graph_view_draws_every_fact_and_edge_inside_the_drawing(site, tmp_path):
    graph = api(site, "/api/memory/graph")
    assert len(graph["nodes"]) == 55 and len(graph["edges"]) > 40
    r = chromium(tmp_path, site.url + "#/graph", "--dump-dom")
    assert r.returncode == 0 and not script_errors(r.stderr), r.stderr[-2000:]
    svg = re.search(r'<svg class="graph"[^>]*viewBox="0.0 0.0 ([\d.]+) ([\d.]+)"[^>]*>', r.stdout)
    assert svg, r.stdout[:2000]
    width, height = float(svg.group(1)), float(svg.group(2))
    assert f'data-nodes="{len(graph["nodes"])}"' in svg.group(0)
    assert f'data-edges="{len(graph["edges"])}"' in svg.group(0)
    node = r'class="node[^"]*"[^>]*transform="translate\(([-\d.]+),([-\d.]+)\)"'
    spots = [(float(x), float(y)) for x, y in re.findall(node, r.stdout)]
    assert len(spots) == len(graph["nodes"])
    assert all(0 <= x <= width and 0 <= y <= height for x, y in spots)
    assert len(set(spots)) == len(spots)  # no two facts drawn on the same spot
    risks = {n["id"] for n in graph["nodes"] if n["kind"] == "risk"}
    assert len(re.findall(r'class="node kind-risk', r.stdout)) == len(risks)
    labels = re.findall(r'<text[^>]*class="label"[^>]*>([^<]*)</text>', r.stdout)
    assert sorted(labels) == sorted(n["label"] for n in graph["nodes"]) and all(labels)  # a short title each


def test_what_the_agent_saw_lists_deliveries_by_turn_with_the_prompt(site, tmp_path):
    r = chromium(tmp_path, site.url + "#/snapshots", "--dump-dom")
    assert r.returncode == 0 and not script_errors(r.stderr), r.stderr[-2000:]
    assert "Hook deliveries" in r.stdout and site.session in r.stdout
    turn = r.stdout[r.stdout.index("Turn 1"):]
    assert turn.index("<q>why do blob refcounts drift after a crash?</q>") < turn.index('href="#/fact/RISK-3EHX"')
    assert turn.index('href="#/fact/RISK-3EHX"') < turn.index(">pre-edit<") < turn.index('href="#/fact/CON-6E8B"')


def _count(pixels, colour: tuple[int, int, int], tolerance: int = 10) -> int:
    import numpy as np

    return int((np.abs(pixels.astype(int) - np.array(colour)) <= tolerance).all(axis=2).sum())


def test_screenshot_of_the_graph_shows_nodes_and_edges(site, tmp_path):
    Image = pytest.importorskip("PIL.Image")
    shot = tmp_path / "graph.png"
    r = chromium(tmp_path, site.url + "#/graph", f"--screenshot={shot}")
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    import numpy as np

    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    pixels = np.asarray(image)
    graph = api(site, "/api/memory/graph")
    risks = sum(1 for n in graph["nodes"] if n["kind"] == "risk")
    rule_kinds = ("decision", "architecture", "instruction", "constraint")
    rules = sum(1 for n in graph["nodes"] if n["kind"] in rule_kinds)
    # a risk is a disc of radius 11 (~300 px inside its ring), a rule one of radius 8 (~150 px)
    assert _count(pixels, RISK) > 150 * risks
    assert _count(pixels, RULE) > 80 * rules
    assert _count(pixels, CAUSED_BY) > 100  # causal edges are drawn in their relation's colour


@pytest.mark.parametrize("view", ["#/", "#/fact/RISK-3EHX", "#/fact/NOPE-0000", "#/nowhere", "#/snapshots",
                                  "#/snapshot/RUN", "#/sessions", "#/session/SESSION", "#/evals", "#/eval/EVAL"])
def test_views_render_without_script_errors(site, tmp_path, view):
    url = site.url + view.replace("EVAL", site.eval_run).replace("RUN", site.run).replace("SESSION", site.session)
    r = chromium(tmp_path, url, "--dump-dom")
    assert r.returncode == 0 and not script_errors(r.stderr), r.stderr[-2000:]
    assert 'data-ready="1"' in r.stdout or "Nothing at" in r.stdout
    if view == "#/":
        assert r.stdout.count('<tr') == 56  # the header and 55 facts
    if view == "#/fact/RISK-3EHX":
        assert "Links to this fact" in r.stdout and "registry/internal/db/refcount.go" in r.stdout
    if view == "#/snapshots":
        assert f'href="#/snapshot/{site.run}"' in r.stdout and "TASK-V5VH" in r.stdout
    if view == "#/snapshot/RUN":
        assert "Budget use" in r.stdout and r.stdout.count("<meter") == 4  # records, code, total, briefing
        assert "Always records" in r.stdout and "The whole text, as delivered" in r.stdout
    if view == "#/sessions":
        assert f'href="#/session/{site.session}"' in r.stdout and "1 of 1 sessions" in r.stdout
    if view == "#/session/SESSION":
        assert "Recount from manifests" in r.stdout and "issue 41" in r.stdout and "/blob" in r.stdout
        # what the agent was given, turn by turn, linked to the facts
        assert "by pre-edit: " in r.stdout and 'href="#/fact/RISK-3EHX"' in r.stdout
        assert 'href="#/fact/CON-6E8B"' in r.stdout
    if view == "#/evals":
        assert f'href="#/eval/{site.eval_run}"' in r.stdout and "+100 pts [+21, +100]" in r.stdout
    if view == "#/eval/EVAL":
        assert "with 3/3 100% [44, 100] · without 0/3 0% [0, 56]" in r.stdout
        assert 'href="#/fact/CON-6E8B"' in r.stdout and "| **overall** |" in r.stdout
    if view == "#/fact/NOPE-0000":
        assert 'class="error"' in r.stdout and "no fact with id NOPE-0000" in r.stdout


XSS = [
    '<img src=x onerror="document.body.setAttribute(\'data-pwned\', \'img\')">',
    "<script>document.body.setAttribute('data-pwned', 'script')</script>",
    '<a href="javascript:document.body.setAttribute(\'data-pwned\',\'link\')">docs</a>',
    '<svg onload="document.body.setAttribute(\'data-pwned\', \'svg\')"></svg>',
    "[docs](javascript:alert(1)) and {{constructor.constructor('alert(1)')()}}",
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A record whose facts carry every untrusted payload and every HTML injection, on a live server."""
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    from tests.factfiles import write_fact
    from tests.helpers import git
    from tests.untrusted_payloads import PAYLOADS

    root = tmp_path_factory.mktemp("hostile")
    git(root, "init", "-q", "-b", "main")
    (root / "docs/memory").mkdir(parents=True)
    texts = [t for _, t, _ in PAYLOADS if len(t) < 1000] + XSS
    write_fact(root, "DEC-AAAA", "decision", title=XSS[0][:100], body="\n\n".join(texts))
    for n, text in enumerate(XSS[1:]):
        write_fact(root, f"LSN-000{n + 1}", "lesson", title=text[:100], body=text,
                   links={"relates-to": ["DEC-AAAA"]})
    srv = WebServer(Project(root), "127.0.0.1", 0, quiet=True)
    from tests.agenteval.sample import stored_run

    srv.eval_run = stored_run(srv.project)  # what `stele eval --agent` stores
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("view", ["#/", "#/fact/DEC-AAAA", "#/fact/LSN-0001", "#/graph"])
def test_hostile_facts_are_shown_as_text_and_nothing_runs(hostile, tmp_path, view):
    r = chromium(tmp_path, hostile.url + view, "--dump-dom")
    assert r.returncode == 0 and not script_errors(r.stderr), r.stderr[-2000:]
    dom = r.stdout
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]  # no handler set the attribute
    assert not re.search(r"<img[^>]*onerror|<script>document|<svg onload|<a\s[^>]*href=\"javascript:", dom)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
                         "\U000e0000-\U000e0fff]", dom)  # no raw escape or hidden character reaches the page
    if view == "#/fact/DEC-AAAA":
        assert "&lt;img src=x onerror=" in dom  # the payload is there, as text
        assert "hidden characters&gt;" in dom and "&lt;U+202E&gt;" in dom and "^[]0;owned" in dom

from stele.demo import EXAMPLE, script


def test_the_demo_recalls_every_example_prompt_and_file():
    steps = script()
    lines = [x.strip() for x in (EXAMPLE / "prompts.txt").read_text().splitlines() if x.strip()]
    prompts = [x for x in lines if not x.startswith("#")]
    files = [x.split(":", 1)[1].strip() for x in lines if x.startswith("# file:")]
    recalls = [s for s in steps if s[0] == "recall"]
    assert [s[-1] for s in recalls if "--file" not in s] == prompts
    assert [s[-1] for s in recalls if "--file" in s] == files
    assert all("--max-chars" in s for s in recalls)  # shortened, so the demo stays a couple of screens

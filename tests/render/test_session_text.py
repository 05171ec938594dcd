from stele.render.session_text import entry_header
from stele.session.wal import Entry


def test_an_entry_header_names_its_refs_and_paths():
    e = Entry(id="S-01J", ts="2026-11-29T10:00:00Z", session="s", type="note", text="x",
              refs={"issue": "12", "paths": ["src/a.py"]})
    header = entry_header(e)
    assert "issue 12" in header and "src/a.py" in header


def test_a_hand_edited_paths_value_is_no_path_not_a_crash():
    e = Entry(id="S-01J", ts="2026-11-29T10:00:00Z", session="s", type="note", text="x", refs={"paths": 5})
    assert "5" not in entry_header(e).split("S-01J", 1)[1]

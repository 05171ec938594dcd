"""The demo's example repository: built from the bundled example, kept where asked, else removed."""
import pytest

from stele.errors import SteleError
from stele.project import Project
from stele.record.load import load
from stele.record.scaffold import example_checkout, example_repository


def test_a_throwaway_checkout_is_a_committed_stele_repository_and_goes_afterwards():
    with example_checkout(None) as root:
        assert (root / ".git").is_dir() and (root / ".stele" / "config.yaml").is_file()
        assert load(Project(root)).require_valid().facts
    assert not root.exists() and not root.parent.exists()


def test_a_kept_checkout_stays_and_refuses_a_folder_with_something_in_it(tmp_path):
    with example_checkout(tmp_path / "kept") as root:
        pass
    assert (root / "docs" / "memory").is_dir()
    with pytest.raises(SteleError, match="is not empty"):
        example_repository(root)

"""The record the hook tests share (see `tests.helpers.write_sample_record`)."""
import pytest

from tests.helpers import write_sample_record


@pytest.fixture
def record(repo):
    return write_sample_record(repo)

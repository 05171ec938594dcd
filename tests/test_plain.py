"""stele.plain behaves as the dataclasses it stands in for, on both ways of making an instance: every
field by position (the catalog's rows, a fast path) and the general one (keywords, defaults)."""
import pytest

from stele.plain import FrozenInstanceError, asdict, dataclass, field, replace


@dataclass(frozen=True)
class Row:
    a: str
    b: int = 2
    tags: list = field(default_factory=list)


@dataclass
class Counted:
    n: int
    seen: list = field(default_factory=list)

    def __post_init__(self):
        self.seen.append(self.n)


def test_every_field_by_position_and_by_keyword_make_equal_instances():
    assert Row("x", 3, ["t"]) == Row(a="x", b=3, tags=["t"]) == Row("x", 3, tags=["t"])
    assert Row("x").b == 2 and Row("x").tags == [] and Row("x").tags is not Row("x").tags
    assert asdict(Row("x", 3, ["t"])) == {"a": "x", "b": 3, "tags": ["t"]}
    assert replace(Row("x", 3, []), b=4) == Row("x", 4, [])


def test_a_frozen_instance_stays_frozen_and_hashable_on_the_fast_path():
    row = Row("x", 3, ())
    with pytest.raises(FrozenInstanceError):
        row.a = "y"
    assert hash(row) == hash(Row(a="x", b=3, tags=()))


def test_post_init_runs_on_both_paths():
    assert Counted(1, []).seen == [1] and Counted(n=2).seen == [2]


def test_wrong_arguments_are_refused():
    with pytest.raises(TypeError):
        Row()
    with pytest.raises(TypeError):
        Row("x", 1, [], "extra")
    with pytest.raises(TypeError):
        Row("x", nope=1)


def test_options_it_does_not_implement_are_refused_where_they_are_written():
    """`order=True` used to be accepted and fail at the first comparison (mypy passed it too: the
    TYPE_CHECKING signature now takes only `frozen`)."""
    with pytest.raises(TypeError, match=r"dataclass\(\) does not support order"):
        @dataclass(order=True)
        class Ordered:
            a: int
    with pytest.raises(TypeError, match=r"field\(\) does not support compare"):
        field(default=0, compare=False)

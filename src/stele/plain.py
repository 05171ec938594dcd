"""Plain data classes for the hook path, without what `dataclasses` costs at import time.

`dataclasses.dataclass` writes each class's `__init__`, `__repr__` and `__eq__` as source text and
compiles it when the module is imported, and importing `dataclasses` imports `inspect` (and with it
`ast`, `dis` and `tokenize`). On the prompt hook's path that was ~26 classes and ~26 ms of a ~100 ms
budget, paid on every prompt by a fresh process. `dataclass` here builds the same methods from
closures over the fields, so a class costs microseconds to define, and an instance a few
microseconds more to make than a compiled `__init__` would: nothing on the hook path (hundreds of
objects), ~50 ms in a 10,000-fact rebuild.

Type checkers see `dataclasses` itself (the TYPE_CHECKING branch), so every constructor is checked as
a dataclass's is, through a signature that takes only the options implemented here (`frozen`; for
`field`: `default`, `default_factory`, `repr`): `@dataclass(order=True)` is a type error, and any
option either function does not implement is a TypeError where it is written, not at first use. What it supports, the modules that use it need: defaults,
`field(default=, default_factory=, repr=)`, `frozen=True`, `__post_init__`, `fields()`, `asdict()` and
`replace()`. Not ordering, `slots`, `InitVar` or keyword-only fields: a module that needs those
imports `dataclasses`.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import FrozenInstanceError, asdict, field, fields, replace
    from dataclasses import dataclass as _dataclass
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T")

    # What the checker sees: `dataclasses.dataclass` with only the options `_make` implements, so
    # `@dataclass(order=True)` is a type error, not a TypeError at run time.
    @overload
    @dataclass_transform(field_specifiers=(field,))
    def dataclass(cls: type[_T], /) -> type[_T]: ...
    @overload
    @dataclass_transform(field_specifiers=(field,))
    def dataclass(*, frozen: bool = False) -> Callable[[type[_T]], type[_T]]: ...
    @dataclass_transform(field_specifiers=(field,))
    def dataclass(cls: Any = None, /, *, frozen: bool = False) -> Any:
        return _dataclass(cls, frozen=frozen)
else:
    _MISSING = object()

    class FrozenInstanceError(AttributeError):
        pass

    class Field:
        __slots__ = ("default", "default_factory", "name", "repr", "type")

        def __init__(self, default=_MISSING, default_factory=_MISSING, repr=True):
            self.name = ""
            self.type = None  # the annotation (a string under `from __future__ import annotations`)
            self.default = default
            self.default_factory = default_factory
            self.repr = repr

        def __repr__(self):
            return f"Field(name={self.name!r})"

    def field(*, default=_MISSING, default_factory=_MISSING, repr=True, **unsupported):
        _refuse("field", unsupported)
        return Field(default, default_factory, repr)

    def _refuse(what, unsupported):
        """An option this module does not implement fails where it is written, not at first use."""
        if unsupported:
            raise TypeError(f"stele.plain.{what}() does not support {', '.join(sorted(unsupported))}: "
                            "use the standard library's dataclasses for that class")

    def fields(obj):
        cls = obj if isinstance(obj, type) else type(obj)
        return tuple(cls.__plain_fields__.values())

    def asdict(obj):
        return {f.name: _copy(getattr(obj, f.name)) for f in fields(obj)}

    def _copy(value):
        if hasattr(type(value), "__plain_fields__"):
            return asdict(value)
        if isinstance(value, (list, tuple)):
            return type(value)(_copy(v) for v in value)
        if isinstance(value, dict):
            return {k: _copy(v) for k, v in value.items()}
        return value

    def replace(obj, **changes):
        values = {f.name: getattr(obj, f.name) for f in fields(obj)}
        values.update(changes)
        return type(obj)(**values)

    def dataclass(cls=None, /, *, frozen=False, **unsupported):
        _refuse("dataclass", unsupported)

        def wrap(cls):
            return _make(cls, frozen)

        return wrap if cls is None else wrap(cls)

    def _make(cls, frozen):
        specs = {}
        for base in reversed(cls.__mro__[1:]):
            specs.update(getattr(base, "__plain_fields__", {}))
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (not inspect)
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, Field) else Field(default=value)
            spec.name, spec.type = name, annotation
            specs[name] = spec
            if isinstance(value, Field):  # the class attribute is the default, as with dataclasses
                if spec.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
        cls.__plain_fields__ = specs
        order = tuple(specs)
        title = cls.__name__
        put = object.__setattr__

        width = len(order)

        def __init__(self, *args, **kwargs):
            if len(args) == width and not kwargs:  # every field by position (a catalog row): one update
                self.__dict__.update(zip(order, args, strict=True))
                post = getattr(self, "__post_init__", None)
                if post is not None:
                    post()
                return
            if len(args) > len(order):
                raise TypeError(f"{title}() takes {len(order)} arguments, {len(args)} were given")
            for i, value in enumerate(args):
                put(self, order[i], value)
            for name in order[len(args):]:
                if name in kwargs:
                    value = kwargs.pop(name)
                else:
                    spec = specs[name]
                    if spec.default is not _MISSING:
                        value = spec.default
                    elif spec.default_factory is not _MISSING:
                        value = spec.default_factory()
                    else:
                        raise TypeError(f"{title}() missing required argument: {name!r}")
                put(self, name, value)
            if kwargs:
                raise TypeError(f"{title}() got an unexpected or repeated argument: {next(iter(kwargs))!r}")
            post = getattr(self, "__post_init__", None)
            if post is not None:
                post()

        def __repr__(self):
            shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in order if specs[n].repr)
            return f"{title}({shown})"

        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in order)

        cls.__init__ = __init__
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = __repr__
        if "__eq__" not in cls.__dict__:
            cls.__eq__ = __eq__
        if frozen:
            def __setattr__(self, name, value):
                raise FrozenInstanceError(f"cannot assign to field {name!r}")

            def __delattr__(self, name):
                raise FrozenInstanceError(f"cannot delete field {name!r}")

            def __hash__(self):
                return hash(tuple(getattr(self, n) for n in order))

            cls.__setattr__ = __setattr__
            cls.__delattr__ = __delattr__
            cls.__hash__ = __hash__
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as with dataclasses
        return cls

__all__ = ["FrozenInstanceError", "asdict", "dataclass", "field", "fields", "replace"]

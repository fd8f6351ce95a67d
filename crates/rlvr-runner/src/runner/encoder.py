# The value codec's encoder (codec.py describes the format): a value of this side becomes plain
# data, a table of containers and objects referenced by index, walked without recursion into
# containers (each is a table entry filled after its parent, from a stack).

import sys

from .codec import (
    CODEC_BIG_INTEGER,
    CODEC_FACTORIES,
    CODEC_MAX_NODES,
    CODEC_NUMPY_KINDS,
    Unencodable,
    builtin_reference,
    codec_collections,
    instance_state,
    namedtuple_fields,
    plain_atom,
)


def numpy_dtype(value):
    """The `dtype.str` of a numpy array or scalar of a plain kind (exact numpy types only), or None."""
    try:
        numpy = sys.modules.get("numpy")
        kind = type(value)
        if numpy is None or kind is not numpy.ndarray and not (isinstance(value, numpy.generic)
                                                               and kind.__module__ == "numpy"):
            return None
        dtype = value.dtype
        return dtype.str if dtype.kind in CODEC_NUMPY_KINDS and type(dtype.str) is str else None
    except Exception:
        return None


def optional_module(name):
    """A standard module if this process imported it already: a value of its types can only
    exist if it did, so the encoder never imports anything itself."""
    return sys.modules.get(name)


def standard_atom(value, kind, reference):
    """The tagged atom of a standard-library value type (Fraction, Decimal, date, datetime,
    time, timedelta, range), or None when `value` is none of them."""
    if kind is range:
        return {"range": [reference(value.start), reference(value.stop), reference(value.step)]}
    fractions = optional_module("fractions")
    if fractions is not None and kind is fractions.Fraction:
        return {"q": [reference(value.numerator), reference(value.denominator)]}
    decimal = optional_module("decimal")
    if decimal is not None and kind is decimal.Decimal:
        return {"dec": str(value)}
    datetime = optional_module("datetime")
    if datetime is not None:
        if kind is datetime.date:
            return {"date": value.isoformat()}
        if kind is datetime.datetime and (value.tzinfo is None or type(value.tzinfo) is datetime.timezone):
            return {"datetime": value.isoformat()}
        if kind is datetime.time and (value.tzinfo is None or type(value.tzinfo) is datetime.timezone):
            return {"time": value.isoformat()}
        if kind is datetime.timedelta:
            return {"td": [value.days, value.seconds, value.microseconds]}
    return None


def enum_value(value):
    """`(True, member.value)` for an enum member, `(False, None)` otherwise."""
    enum = optional_module("enum")
    if enum is not None:
        try:
            if isinstance(value, enum.Enum):
                return True, value._value_
        except Exception:
            pass
    return False, None



# The table tags of dict views, by their types.
CODEC_VIEW_TAGS = {type({}.keys()): "dict_keys", type({}.values()): "dict_values", type({}.items()): "dict_items"}


def encode_values(values, classes, numpy_as_plain=False, opaque=None, record=None):
    """Encodes a list of values sharing one table. Returns `(table, encoded values)`.

    A value that is not data goes to `opaque(value)`, which returns the handle atom to use, or
    raises `Unencodable` (without `opaque`, every such value does). With `numpy_as_plain` (the
    solution's side), a numpy array is sent as its nested lists and a numpy scalar as the
    Python number it holds: the test side compares them as the test would (`np.allclose`, `==`).
    With `record(value)` (the solution's side), an instance of one of the solution's classes for
    which it gives a handle number is a record (its class name and attributes, as data), an
    exception crosses with its class and arguments, and an exception class of the solution's as
    its name and bases."""
    return Encoder(classes, numpy_as_plain, opaque, record).encode(values)


class Encoder:
    """One `encode_values` call: the table, what is in it already (by identity, so shared
    references and cycles survive), the containers whose entries are still to fill, and the
    count of values against `CODEC_MAX_NODES`."""

    __slots__ = ("classes", "numpy_as_plain", "opaque", "record", "deque_type", "counter_type", "ordered_type",
                 "default_type", "containers", "table", "memo", "keep", "pending", "nodes")

    def __init__(self, classes, numpy_as_plain, opaque, record):
        collections = codec_collections()
        self.classes = classes
        self.numpy_as_plain = numpy_as_plain
        self.opaque = opaque
        self.record = record
        self.deque_type, self.counter_type = collections.deque, collections.Counter
        self.ordered_type, self.default_type = collections.OrderedDict, collections.defaultdict
        self.containers = (list, tuple, dict, set, frozenset, bytearray, self.deque_type, self.counter_type,
                           self.ordered_type, self.default_type)
        self.table = []
        self.memo = {}
        self.keep = []  # every tabled value, alive until the end: no id is reused meanwhile
        self.pending = []
        self.nodes = 0

    def encode(self, values):
        reference = self.reference
        encoded = [reference(value) for value in values]
        table, pending, entry = self.table, self.pending, self.entry
        while pending:
            index, value = pending.pop()
            table[index] = entry(value)
        return table, encoded

    def not_data(self, value, kind):
        if self.opaque is None:
            raise Unencodable(f"a {kind.__module__}.{kind.__qualname__} is not plain data")
        return self.opaque(value)

    def reference(self, value):
        """The atom that stands for `value`: itself, a tagged atom, a handle, or a reference to
        its table entry (filled later, from `pending`)."""
        self.nodes += 1
        if self.nodes > CODEC_MAX_NODES:
            raise Unencodable(f"more than {CODEC_MAX_NODES} values")
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            if -CODEC_BIG_INTEGER < value < CODEC_BIG_INTEGER:
                return value
            return {"i": hex(value)}
        if kind is float:
            if value != value:
                return {"f": "nan"}
            if value in (float("inf"), float("-inf")):
                return {"f": "inf" if value > 0 else "-inf"}
            return value
        if kind is complex:
            return {"c": [self.reference(value.real), self.reference(value.imag)]}
        if kind is bytes:
            return {"b": value.hex()}
        key = id(value)
        index = self.memo.get(key)
        if index is not None:
            return {"r": index}
        record = self.record
        if kind in self.containers or kind in CODEC_VIEW_TAGS:
            pass
        elif namedtuple_fields(kind) is not None:
            pass
        elif kind.__name__ in self.classes and type(kind) is type and not issubclass(kind, BaseException):
            if instance_state(value, kind) is None:
                return self.not_data(value, kind)
        elif record is not None and isinstance(value, BaseException):
            pass
        elif record is not None and isinstance(value, type) and issubclass(value, BaseException):
            named = builtin_reference(value)
            if named is not None:
                return named
            if record(value) is None:
                return self.not_data(value, kind)
        else:
            return self.other_reference(value, kind, key)
        return self.later(value, key)

    def add(self, value, key):
        """A new table entry for `value` (whose id is `key`): its index."""
        index = len(self.table)
        self.memo[key] = index
        self.keep.append(value)
        self.table.append(None)
        return index

    def later(self, value, key):
        """A reference to a new table entry for `value`, filled once its parent is."""
        index = self.add(value, key)
        self.pending.append((index, value))
        return {"r": index}

    def other_reference(self, value, kind, key):
        """`reference` of a value of no container type nor a class this side names: a standard
        value type's tagged atom, an enum member's or a plain subclass's value, a numpy value,
        a record of the solution's, a builtin by name, or a handle."""
        atom = standard_atom(value, kind, self.reference)
        if atom is not None:
            return atom
        is_member, member_value = enum_value(value)
        if is_member:
            self.nodes -= 1
            return self.reference(member_value)
        is_plain, plain_value = plain_atom(value, kind)
        if is_plain:
            self.nodes -= 1
            return self.reference(plain_value)
        if kind.__module__ == "numpy" and hasattr(kind, "tolist"):
            dtype = numpy_dtype(value)
            if dtype is not None and kind.__name__ != "ndarray":
                self.nodes -= 1
                return {"np": [dtype, self.reference(value.item())]}
            if dtype is not None and type(value.shape) is tuple and len(value.shape) <= 32:
                index = self.add(value, key)
                self.table[index] = ["ndarray", dtype, list(value.shape), self.items(value.ravel().tolist())]
                return {"r": index}
            if self.numpy_as_plain:
                self.nodes -= 1
                return self.reference(value.tolist())
        if self.record is None or self.record(value) is None:
            named = builtin_reference(value) if self.opaque is not None else None
            return named if named is not None else self.not_data(value, kind)
        return self.later(value, key)

    def entry(self, value):
        """The table entry of a value `reference` tabled."""
        kind = type(value)
        reference = self.reference
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            return [kind.__name__, self.items(value)]
        if kind is dict or kind is self.counter_type or kind is self.ordered_type:
            return [kind.__name__, self.pairs(value, kind)]
        if kind is self.default_type:
            factory = value.default_factory
            name = next((name for name, known in CODEC_FACTORIES.items() if factory is known), None)
            return ["defaultdict", name, self.pairs(value, dict)]
        if kind is bytearray:
            return ["bytearray", bytes(value).hex()]
        if kind is self.deque_type:
            return ["deque", [reference(item) for item in value], value.maxlen]
        if kind in CODEC_VIEW_TAGS:
            tag = CODEC_VIEW_TAGS[kind]
            if tag == "dict_items":
                flat = []
                for key, item in value:
                    flat.append(reference(key))
                    flat.append(reference(item))
                return [tag, flat]
            return [tag, [reference(item) for item in value]]
        if namedtuple_fields(kind) is not None:
            return ["namedtuple", kind.__name__, list(kind._fields), [reference(item) for item in tuple.__iter__(value)]]
        if isinstance(value, type):
            bases = [reference(base) for base in value.__bases__ if issubclass(base, BaseException)]
            return ["exctype", value.__name__, self.record(value), bases]
        if isinstance(value, BaseException):
            try:
                text = str(value)[:1000]
            except BaseException:
                text = ""
            arguments = value.args if type(value.args) is tuple else ()
            return ["exception", reference(kind), [reference(item) for item in arguments],
                    self.state_of(value, kind, exception=True), text]
        if kind.__name__ in self.classes and type(kind) is type:
            return ["object", kind.__name__, self.state_of(value, kind)]
        return ["record", kind.__name__, self.record(value), self.state_of(value, kind)]

    def state_of(self, value, kind, exception=False):
        flat = []
        state = instance_state(value, kind) or {}
        for name, item in state.items():
            if type(name) is not str:
                raise Unencodable("an attribute name that is not a string")
            if name.startswith("__") or exception and not name.isidentifier():
                continue
            flat.append(name)
            flat.append(self.reference(item))
        return flat

    def pairs(self, mapping, kind):
        flat = []
        reference = self.reference
        for key, item in kind.items(mapping):
            flat.append(reference(key))
            flat.append(reference(item))
        return flat

    def items(self, value):
        # A list of atoms of one plain type is its own encoding (the common case of a long
        # answer): checked at C speed, no walk.
        if len(value) > 16:
            kinds = set(map(type, value))
            plain = False
            if kinds == {int}:
                plain = -CODEC_BIG_INTEGER < min(value) and max(value) < CODEC_BIG_INTEGER
            elif kinds == {float}:
                import math

                plain = all(map(math.isfinite, value))
            elif kinds == {str} or kinds == {bool}:
                plain = True
            if plain:
                self.nodes += len(value)
                if self.nodes > CODEC_MAX_NODES:
                    raise Unencodable(f"more than {CODEC_MAX_NODES} values")
                return list(value)
        reference = self.reference
        return [reference(item) for item in value]

# Values as plain data: the canonical, type-exact encoding that carries values between a judge
# test's child (the solution's side) and the referee (the test's side) (docs/runner.md, "Values").
#
# Data is exact builtin types (`type(value) is int`, never isinstance) and a few standard-library
# value types, plus objects of the classes the test side names (ListNode, TreeNode, classes a
# test defines), encoded as their class name and instance attributes. Anything else crosses as a
# handle: the side that owns the object keeps it and the other side gets a reference it can
# only send back (`{"h": n}` for an object of the solution's side, `{"x": n}` for one of the
# test's side). Containers and objects go into a table and are referenced by index, so shared
# references and cycles survive and deep structures need no recursion. Decoding never runs code
# from the data: it builds exact builtins, standard value types and instances of the decoder's
# own classes, so an always-true `__eq__` cannot cross.
#
# Atoms: null, true, false, JSON integers below 4000 digits, finite JSON floats, strings.
# Tagged atoms: {"i": hex} big integer, {"f": "nan"|"inf"|"-inf"}, {"b": hex} bytes,
# {"c": [real, imaginary]} complex, {"r": index} a table entry, {"q": [numerator, denominator]}
# Fraction, {"dec": text} Decimal, {"date": iso}, {"datetime": iso}, {"time": iso},
# {"td": [days, seconds, microseconds]} timedelta, {"range": [start, stop, step]},
# {"h": n} / {"x": n} handles (above), {"bi": name} a builtin the test passed (`len`, `str.lower`,
# `math.sqrt`: the solution's side uses its own), {"np": [dtype, value]} a numpy scalar.
# Table entries: ["list", [v...]], ["tuple", [v...]], ["dict", [k, v, ...]], ["set", [v...]],
# ["frozenset", [v...]], ["bytearray", hex], ["deque", [v...], maxlen], ["Counter", [k, v, ...]],
# ["ndarray", dtype, [size...], [atom...]] a numpy array of a plain dtype (its values flat),
# ["OrderedDict", [k, v, ...]], ["defaultdict", factory, [k, v, ...]],
# ["namedtuple", type name, [field...], [v...]], ["dict_keys", [k...]], ["dict_values", [v...]],
# ["dict_items", [k, v, ...]], ["object", class name, [attribute, v, ...]] (instance attributes
# and `__slots__` values), and from the solution's side only: ["record", class name, handle,
# [attribute, v, ...]] an instance of one of the solution's classes as data (it keeps its handle
# for `len`, `iter`, `str`...), ["exctype", class name, handle, [base...]] an exception class of
# the solution's (its bases: builtin exception classes by name or other such entries),
# ["exception", class, [argument...], [attribute, v, ...], text] an exception.
# An enum member is encoded as its value; a numpy array or scalar of another dtype, when asked,
# as its nested lists or the Python value it holds. A receiver without numpy decodes numpy
# values as nested lists and plain values.

import builtins
import sys
import types


CODEC_MAX_NODES = 4_000_000
CODEC_BIG_INTEGER = 10 ** 4000
CODEC_FACTORIES = {"list": list, "int": int, "set": set, "dict": dict, "str": str, "float": float,
                   "tuple": tuple, "frozenset": frozenset, "bool": bool}
# Element types whose values are JSON as they are: a list of only these needs no walk.
CODEC_PLAIN_ELEMENTS = frozenset((int, float, str, bool, type(None)))
CODEC_NAMEDTUPLE_FIELDS = 256


# Standard modules whose functions and classes are pure: a builtin or an object of these the one
# side names (`{"bi": "math.sqrt"}`, `{"bi": "fractions.Fraction"}`) is the other side's own.
CODEC_STANDARD_MODULES = frozenset(("math", "cmath", "fractions", "decimal", "collections", "itertools", "functools",
                                    "heapq", "bisect", "operator", "string", "re", "datetime", "statistics",
                                    "typing", "numbers", "enum", "dataclasses", "copy", "array", "numpy", "pandas"))
# Names of callables of those modules that touch the process (files, global settings, random
# state): never taken as the standard object, whatever a side claims.
CODEC_PROCESS_NAMES = ("set", "seed", "save", "load", "read", "write", "open", "reset", "purge", "register",
                       "unregister", "option", "get_option", "describe_option", "memmap", "fromfile", "tofile",
                       "genfromtxt", "fromregex", "getcontext", "localcontext", "show", "test", "info", "lookfor",
                       "source", "who", "disp", "deprecate", "to_pickle", "datasource", "get_include", "errstate",
                       "geterr", "printoptions", "get_printoptions", "ctypes", "lib", "testing", "random", "eval",
                       "api", "io", "plotting", "core", "compat", "excelwriter", "hdfstore", "global")


def standard_name_allowed(module_name, name):
    """A standard object that may be taken as the other side's own: an allowlisted module, a
    plain public name, nothing that touches the process."""
    if module_name not in CODEC_STANDARD_MODULES or type(name) is not str or not name.isidentifier():
        return False
    lowered = name.lower()
    return not name.startswith("_") and not lowered.startswith(CODEC_PROCESS_NAMES)


def builtin_reference(value):
    """A builtin function or type, a method of a builtin type, or a public function or class of
    a pure standard module (`key=len`, `int`, `str.lower`, `math.sqrt`, `collections.Counter`)
    is sent by name (`{"bi": name}`): the receiver uses its own."""
    kind = type(value)
    try:
        if kind is types.BuiltinFunctionType or kind is types.FunctionType or isinstance(value, type):
            module = value.__module__
            name = value.__name__
            if module == "builtins":
                if getattr(builtins, name, None) is value:
                    return {"bi": name}
                return None
            for candidate in (module, *sorted(CODEC_STANDARD_MODULES)):
                found = sys.modules.get(candidate)
                if (found is not None and standard_name_allowed(candidate, name)
                        and getattr(found, name, None) is value):
                    return {"bi": f"{candidate}.{name}"}
        elif kind in (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType):
            owner = value.__objclass__
            if getattr(builtins, owner.__name__, None) is owner and getattr(owner, value.__name__, None) is value:
                return {"bi": f"{owner.__name__}.{value.__name__}"}
    except Exception:
        pass
    return None


def named_builtin(name):
    """The object a `{"bi": name}` names on this side: a builtin, a builtin type's method, or a
    public name of a pure standard module (imported here if need be)."""
    if type(name) is not str or len(name) > 100:
        raise Malformed("a builtin's name is malformed")
    owner_name, _, attribute = name.rpartition(".")
    found = None
    if not owner_name:
        found = getattr(builtins, attribute, None)
    elif owner_name in CODEC_STANDARD_MODULES:
        if standard_name_allowed(owner_name, attribute):
            try:
                module = sys.modules.get(owner_name) or __import__(owner_name)
            except Exception:
                module = None
            found = getattr(module, attribute, None)
    else:
        owner = getattr(builtins, owner_name, None)
        found = getattr(owner, attribute, None) if isinstance(owner, type) else None
    if found is None or not callable(found):
        raise Malformed(f"unknown builtin {name!r}")
    return found


def slot_names(kind):
    """The `__slots__` names of a class and its bases that hold values (member descriptors)."""
    names = []
    for base in kind.__mro__:
        for name, attribute in vars(base).items():
            if type(attribute) is types.MemberDescriptorType and name not in names:
                names.append(name)
    return names


def instance_state(value, kind):
    """An instance's attributes: its `__dict__` (when it has one) and its slots' values, read
    without running any of its class's code. None when neither holds anything readable."""
    state = {}
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        attributes = None
    if attributes is not None:
        if type(attributes) is not dict:
            return None
        state.update(dict.items(attributes))
    elif not slot_names(kind):
        return None
    for name in slot_names(kind):
        if name in ("__dict__", "__weakref__"):
            continue
        descriptor = None
        for base in kind.__mro__:
            if name in vars(base):
                descriptor = vars(base)[name]
                break
        try:
            state[name] = descriptor.__get__(value, kind)
        except AttributeError:
            pass
    return state


# Numpy dtypes that cross as numpy (booleans, integers, floats, complex numbers, text, bytes),
# named by their `dtype.str` (`<i8`, `|b1`, `<U5`); anything else (objects, records) does not.
CODEC_NUMPY_KINDS = "biufcUS"


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


def numpy_value(dtype, shape, values):
    """A numpy array (or, with shape None, a scalar) this side builds from plain values; nested
    lists (or the plain value) when numpy is not importable here."""
    try:
        import numpy
    except Exception:
        numpy = None
    if type(dtype) is not str or len(dtype) > 20:
        raise Malformed("a numpy dtype must be a short string")
    if numpy is not None:
        try:
            made = numpy.dtype(dtype)
        except (TypeError, ValueError):
            raise Malformed(f"unknown numpy dtype {dtype!r}") from None
        if made.kind not in CODEC_NUMPY_KINDS or made.str != dtype:
            raise Malformed(f"numpy dtype {dtype!r} is not a plain one")
    if shape is None:
        return values if numpy is None else made.type(values)
    if type(shape) is not list or len(shape) > 32 or not all(type(size) is int and size >= 0 for size in shape):
        raise Malformed("a numpy shape must be a list of sizes")
    count = 1
    for size in shape:
        count *= size
    if type(values) is not list or len(values) != count:
        raise Malformed("a numpy array's values do not fill its shape")
    if numpy is not None:
        return numpy.array(values, dtype=made).reshape(shape)
    for size in reversed(shape[1:]):
        values = [values[start:start + size] for start in range(0, len(values), size)] if size else []
    return values


class Unencodable(Exception):
    """A value outside the encoding (its reason names the type)."""


class Malformed(Exception):
    """Encoded data that no encoder produced: refused whole."""


def codec_collections():
    import collections

    return collections


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


# Names a subclass of a builtin atom type may define and still be that type's value (issue 27:
# an honest `class Number(int): pass` crossed as a handle and lost every comparison).
CODEC_INERT_NAMES = frozenset(("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                               "__slots__", "__annotations__", "__firstlineno__",
                               "__static_attributes__", "__orig_bases__", "__parameters__"))
# The builtin atom types a plain subclass reduces to, each with the base's own conversion (called
# unbound, so none of the subclass's code runs).
CODEC_ATOM_BASES = ((int, int.__int__), (float, float.__float__), (str, str.__str__),
                    (bytes, bytes.__bytes__), (complex, complex.__complex__))


def plain_atom(value, kind):
    """The builtin value of an instance of a subclass of int, float, str, bytes or complex whose
    classes define nothing but inert names (or an attribute that is the base's own, such as
    `__hash__ = int.__hash__`): every comparison, hash and operator of such a value is the
    base's, so it is data. `(False, None)` for anything else, which stays a handle."""
    if type(kind) is not type:
        return False, None
    for base, convert in CODEC_ATOM_BASES:
        if kind is base or not issubclass(kind, base):
            continue
        for cls in kind.__mro__:
            if cls is base:
                return True, convert(value)
            if type(cls) is not type:
                return False, None
            for name, attribute in vars(cls).items():
                if name not in CODEC_INERT_NAMES and attribute is not base.__dict__.get(name, CODEC_INERT_NAMES):
                    return False, None
        return False, None
    return False, None


def namedtuple_fields(kind):
    """The field names of a namedtuple class, or None."""
    if not issubclass(kind, tuple) or kind is tuple:
        return None
    fields = getattr(kind, "_fields", None)
    if type(fields) is not tuple or len(fields) > CODEC_NAMEDTUPLE_FIELDS:
        return None
    if not all(type(field) is str and field.isidentifier() for field in fields):
        return None
    return fields


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
    collections = codec_collections()
    deque_type, counter_type = collections.deque, collections.Counter
    ordered_type, default_type = collections.OrderedDict, collections.defaultdict
    view_types = {type({}.keys()): "dict_keys", type({}.values()): "dict_values", type({}.items()): "dict_items"}
    table = []
    memo = {}
    keep = []
    pending = []
    nodes = [0]

    def not_data(value, kind):
        if opaque is None:
            raise Unencodable(f"a {kind.__module__}.{kind.__qualname__} is not plain data")
        return opaque(value)

    def reference(value):
        nodes[0] += 1
        if nodes[0] > CODEC_MAX_NODES:
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
            return {"c": [reference(value.real), reference(value.imag)]}
        if kind is bytes:
            return {"b": value.hex()}
        key = id(value)
        index = memo.get(key)
        if index is not None:
            return {"r": index}
        if kind in (list, tuple, dict, set, frozenset, bytearray, deque_type, counter_type, ordered_type,
                    default_type) or kind in view_types:
            pass
        elif namedtuple_fields(kind) is not None:
            pass
        elif kind.__name__ in classes and type(kind) is type and not issubclass(kind, BaseException):
            if instance_state(value, kind) is None:
                return not_data(value, kind)
        elif record is not None and isinstance(value, BaseException):
            pass
        elif record is not None and isinstance(value, type) and issubclass(value, BaseException):
            named = builtin_reference(value)
            if named is not None:
                return named
            if record(value) is None:
                return not_data(value, kind)
        else:
            atom = standard_atom(value, kind, reference)
            if atom is not None:
                return atom
            is_member, member_value = enum_value(value)
            if is_member:
                nodes[0] -= 1
                return reference(member_value)
            is_plain, plain_value = plain_atom(value, kind)
            if is_plain:
                nodes[0] -= 1
                return reference(plain_value)
            if kind.__module__ == "numpy" and hasattr(kind, "tolist"):
                dtype = numpy_dtype(value)
                if dtype is not None and kind.__name__ != "ndarray":
                    nodes[0] -= 1
                    return {"np": [dtype, reference(value.item())]}
                if dtype is not None and type(value.shape) is tuple and len(value.shape) <= 32:
                    index = len(table)
                    memo[key] = index
                    keep.append(value)
                    table.append(None)
                    table[index] = ["ndarray", dtype, list(value.shape), items(value.ravel().tolist())]
                    return {"r": index}
                if numpy_as_plain:
                    nodes[0] -= 1
                    return reference(value.tolist())
            if record is None or record(value) is None:
                named = builtin_reference(value) if opaque is not None else None
                return named if named is not None else not_data(value, kind)
        index = len(table)
        memo[key] = index
        keep.append(value)
        table.append(None)
        pending.append((index, value))
        return {"r": index}

    def state_of(value, kind, exception=False):
        flat = []
        state = instance_state(value, kind) or {}
        for name, item in state.items():
            if type(name) is not str:
                raise Unencodable("an attribute name that is not a string")
            if name.startswith("__") or exception and not name.isidentifier():
                continue
            flat.append(name)
            flat.append(reference(item))
        return flat

    def pairs(mapping, kind):
        flat = []
        for key, item in kind.items(mapping):
            flat.append(reference(key))
            flat.append(reference(item))
        return flat

    def items(value):
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
                nodes[0] += len(value)
                if nodes[0] > CODEC_MAX_NODES:
                    raise Unencodable(f"more than {CODEC_MAX_NODES} values")
                return list(value)
        return [reference(item) for item in value]

    encoded = [reference(value) for value in values]
    while pending:
        index, value = pending.pop()
        kind = type(value)
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            table[index] = [kind.__name__, items(value)]
        elif kind is dict or kind is counter_type or kind is ordered_type:
            table[index] = [kind.__name__, pairs(value, kind)]
        elif kind is default_type:
            factory = value.default_factory
            name = next((name for name, known in CODEC_FACTORIES.items() if factory is known), None)
            table[index] = ["defaultdict", name, pairs(value, dict)]
        elif kind is bytearray:
            table[index] = ["bytearray", bytes(value).hex()]
        elif kind is deque_type:
            table[index] = ["deque", [reference(item) for item in value], value.maxlen]
        elif kind in view_types:
            tag = view_types[kind]
            if tag == "dict_items":
                flat = []
                for key, item in value:
                    flat.append(reference(key))
                    flat.append(reference(item))
                table[index] = [tag, flat]
            else:
                table[index] = [tag, [reference(item) for item in value]]
        elif namedtuple_fields(kind) is not None:
            table[index] = ["namedtuple", kind.__name__, list(kind._fields),
                            [reference(item) for item in tuple.__iter__(value)]]
        elif isinstance(value, type):
            bases = [reference(base) for base in value.__bases__ if issubclass(base, BaseException)]
            table[index] = ["exctype", value.__name__, record(value), bases]
        elif isinstance(value, BaseException):
            try:
                text = str(value)[:1000]
            except BaseException:
                text = ""
            arguments = value.args if type(value.args) is tuple else ()
            table[index] = ["exception", reference(kind), [reference(item) for item in arguments],
                            state_of(value, kind, exception=True), text]
        elif kind.__name__ in classes and type(kind) is type:
            table[index] = ["object", kind.__name__, state_of(value, kind)]
        else:
            table[index] = ["record", kind.__name__, record(value), state_of(value, kind)]
    return table, encoded


def instance_attribute_names(cls):
    """Names a class's own `__init__` methods (through its bases) store on instances
    (`self.x = ...`, or a name given as a string, as dataclasses' frozen `__init__` does): the
    only class attributes an instance's state may shadow (a field with a class-level default).
    A name `__init__` only reads (`round(amount, self.PLACES)`) is not one."""
    import dis

    names = set()
    for base in cls.__mro__:
        function = vars(base).get("__init__")
        code = getattr(function, "__code__", None)
        stack = [code] if isinstance(code, types.CodeType) else []
        while stack:
            code = stack.pop()
            for instruction in dis.get_instructions(code):
                if instruction.opname == "STORE_ATTR":
                    names.add(instruction.argval)
            for constant in code.co_consts:
                if isinstance(constant, types.CodeType):
                    stack.append(constant)
                elif type(constant) is str and constant.isidentifier():
                    names.add(constant)
    return names


# Namedtuple classes the decoder made, by (type name, fields): built once, never from code.
CODEC_NAMEDTUPLE_TYPES = {}
IMMUTABLE_TAGS = frozenset(("tuple", "frozenset", "namedtuple", "dict_keys", "dict_values", "dict_items", "exctype",
                            "exception", "ndarray"))


def codec_namedtuple(name, fields):
    if type(name) is not str or not name.isidentifier() or len(name) > 200:
        raise Malformed("a namedtuple's type name must be an identifier")
    if (type(fields) is not list or len(fields) > CODEC_NAMEDTUPLE_FIELDS
            or not all(type(field) is str and field.isidentifier() and len(field) <= 200 for field in fields)):
        raise Malformed("a namedtuple's fields must be identifiers")
    key = (name, tuple(fields))
    kind = CODEC_NAMEDTUPLE_TYPES.get(key)
    if kind is None:
        # rename=True turns keywords and repeated or underscored names into positional ones:
        # the generated code only ever sees valid, distinct identifiers.
        kind = codec_collections().namedtuple(name, fields, rename=True)
        if len(CODEC_NAMEDTUPLE_TYPES) < 1000:
            CODEC_NAMEDTUPLE_TYPES[key] = kind
    return kind


def decode_values(table, encoded, classes, resolve=None, records=None):
    """Builds the values `encoded` names from `table`; `classes` maps the class names this side
    accepts as data to the classes to instantiate (a missing name is looked up in `classes`
    with `.get`, so a mapping may supply a stand-in). `resolve(tag, number)` turns a handle
    atom (`"h"` or `"x"`) into this side's object, raising `Malformed` for one it does not know;
    without it, handles are malformed. `records` (the test's side) makes the solution's records,
    exception classes and exceptions (`begin(name, handle)`, `fill(record, attributes)`,
    `exception_class(name, handle, bases)`, `exception(class, arguments, attributes, text)`);
    without it, those entries are malformed. Raises `Malformed` on anything unexpected."""
    collections = codec_collections()
    if type(table) is not list or type(encoded) is not list or len(table) > CODEC_MAX_NODES:
        raise Malformed("the table and the values must be lists")
    built = [None] * len(table)
    done = [False] * len(table)
    settable_by_class = {}
    mutable = {"list": list, "dict": dict, "set": set, "bytearray": bytearray, "Counter": collections.Counter,
               "OrderedDict": collections.OrderedDict}

    def entry(index):
        if type(index) is not int or not 0 <= index < len(table):
            raise Malformed(f"reference {index!r} outside the table")
        item = table[index]
        if type(item) is not list or not item or type(item[0]) is not str:
            raise Malformed(f"table entry {index} is not a tagged list")
        return item

    def check_length(item, length):
        if len(item) != length:
            raise Malformed(f"a {item[0]} entry has {len(item)} fields")

    # Mutable containers and objects first, empty: anything may refer to them.
    for index in range(len(table)):
        item = entry(index)
        tag = item[0]
        if tag in mutable:
            built[index] = mutable[tag]()
            done[index] = True
        elif tag == "deque":
            check_length(item, 3)
            maxlen = item[2]
            if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
                raise Malformed("a deque's maxlen must be a non-negative integer or null")
            built[index] = collections.deque(maxlen=maxlen)
            done[index] = True
        elif tag == "defaultdict":
            check_length(item, 3)
            if item[1] is not None and item[1] not in CODEC_FACTORIES:
                raise Malformed(f"unknown defaultdict factory {item[1]!r}")
            built[index] = collections.defaultdict(CODEC_FACTORIES.get(item[1]))
            done[index] = True
        elif tag == "object":
            check_length(item, 3)
            cls = classes.get(item[1]) if type(item[1]) is str else None
            if cls is None:
                raise Malformed(f"class {item[1]!r} is not one the test accepts")
            built[index] = object.__new__(cls)
            done[index] = True
        elif tag == "record":
            check_length(item, 4)
            if records is None or type(item[1]) is not str or not item[1].isidentifier() or type(item[2]) is not int:
                raise Malformed("a record where none is accepted, or a malformed one")
            built[index] = records.begin(item[1], item[2])
            done[index] = True
        elif tag in ("exctype", "exception") and records is None:
            raise Malformed(f"an {tag} entry where none is accepted")
        elif tag not in IMMUTABLE_TAGS:
            raise Malformed(f"unknown table tag {tag!r}")

    def number(value):
        plain = atom(value)[0]
        if type(plain) is not int:
            raise Malformed("an integer field that is not an integer")
        return plain

    def atom(value):
        """An atom, or the index of the table entry it refers to (then `None, index`)."""
        kind = type(value)
        if value is None or kind is bool or kind is str or kind is int:
            return value, None
        if kind is float:
            return value, None
        if kind is not dict or len(value) != 1:
            raise Malformed(f"{value!r} is not an encoded value")
        ((tag, payload),) = value.items()
        if tag == "r":
            entry(payload)
            return None, payload
        if tag == "i" and type(payload) is str:
            try:
                return int(payload, 16), None
            except ValueError:
                raise Malformed("a big integer that is not hexadecimal") from None
        if tag == "f" and payload in ("nan", "inf", "-inf"):
            return float(payload), None
        if tag == "b" and type(payload) is str:
            try:
                return bytes.fromhex(payload), None
            except ValueError:
                raise Malformed("bytes that are not hexadecimal") from None
        if tag == "c" and type(payload) is list and len(payload) == 2:
            parts = [atom(part)[0] for part in payload]
            if not all(type(part) in (int, float) for part in parts):
                raise Malformed("a complex number needs two real parts")
            return complex(parts[0], parts[1]), None
        if tag in ("h", "x") and type(payload) is int or tag == "bi" and type(payload) is str:
            if resolve is None:
                raise Malformed("a handle where only data is accepted")
            return resolve(tag, payload), None
        if tag == "np" and type(payload) is list and len(payload) == 2:
            plain = atom(payload[1])[0]
            if type(plain) not in (bool, int, float, complex, str, bytes):
                raise Malformed("a numpy scalar needs a plain value")
            return numpy_value(payload[0], None, plain), None
        if type(payload) is list and tag in ("q", "td", "range"):
            return standard_value(tag, payload), None
        if type(payload) is str and tag in ("dec", "date", "datetime", "time"):
            return standard_value(tag, payload), None
        raise Malformed(f"unknown tagged value {tag!r}")

    def standard_value(tag, payload):
        try:
            if tag == "q":
                import fractions

                if len(payload) != 2:
                    raise Malformed("a fraction needs two integers")
                numerator, denominator = number(payload[0]), number(payload[1])
                if denominator <= 0:
                    raise Malformed("a fraction's denominator must be positive")
                return fractions.Fraction(numerator, denominator)
            if tag == "td":
                import datetime

                if len(payload) != 3:
                    raise Malformed("a timedelta needs three integers")
                return datetime.timedelta(days=number(payload[0]), seconds=number(payload[1]),
                                          microseconds=number(payload[2]))
            if tag == "range":
                if len(payload) != 3:
                    raise Malformed("a range needs three integers")
                return range(number(payload[0]), number(payload[1]), number(payload[2]))
            if len(payload) > 1000:
                raise Malformed(f"a {tag} text longer than 1000 characters")
            if tag == "dec":
                import decimal

                return decimal.Decimal(payload)
            import datetime

            parse = {"date": datetime.date, "datetime": datetime.datetime, "time": datetime.time}[tag]
            return parse.fromisoformat(payload)
        except Malformed:
            raise
        except (ValueError, TypeError, OverflowError, ArithmeticError) as error:
            raise Malformed(f"a malformed {tag}: {type(error).__name__}") from None

    def value_of(value):
        plain, index = atom(value)
        if index is None:
            return plain
        if not done[index]:
            build_immutable(index)
        return built[index]

    def elements_of(item):
        """The encoded elements an immutable entry is built from."""
        tag = item[0]
        if tag == "namedtuple":
            check_length(item, 4)
            if type(item[3]) is not list:
                raise Malformed("a namedtuple entry needs a list of values")
            return item[3]
        if tag == "exctype":
            check_length(item, 4)
            if type(item[1]) is not str or not item[1].isidentifier() or type(item[2]) is not int:
                raise Malformed("an exception class needs a name and a handle")
            if type(item[3]) is not list or len(item[3]) > 16:
                raise Malformed("an exception class's bases must be a short list")
            return item[3]
        if tag == "ndarray":
            check_length(item, 4)
            if type(item[3]) is not list:
                raise Malformed("a numpy array needs a list of values")
            return item[3]
        if tag == "exception":
            check_length(item, 5)
            if type(item[2]) is not list or type(item[3]) is not list or len(item[3]) % 2 or type(item[4]) is not str:
                raise Malformed("an exception needs arguments, attributes and a text")
            return [item[1]] + item[2] + item[3][1::2]
        check_length(item, 2)
        if type(item[1]) is not list:
            raise Malformed(f"a {tag} entry needs a list of values")
        return item[1]

    def build_immutable(root):
        # Tuples and the like need their elements first: an explicit stack, no recursion; a
        # cycle made only of them cannot come from Python, so it is refused.
        stack = [root]
        visiting = set()
        while stack:
            index = stack[-1]
            if done[index]:
                stack.pop()
                continue
            item = entry(index)
            elements = elements_of(item)
            waiting = []
            for element in elements:
                _, child = atom(element)
                if child is not None and not done[child]:
                    waiting.append(child)
            if waiting:
                if index in visiting:
                    raise Malformed("a cycle of tuples or frozensets")
                visiting.add(index)
                stack.extend(waiting)
                continue
            values = [value_of(element) for element in elements]
            tag = item[0]
            if tag == "tuple":
                built[index] = tuple(values)
            elif tag == "frozenset":
                built[index] = frozenset(values)
            elif tag == "namedtuple":
                kind = classes.get(item[1]) if type(item[1]) is str else None
                if not (isinstance(kind, type) and namedtuple_fields(kind) == tuple(item[2])
                        if type(item[2]) is list else False):
                    kind = codec_namedtuple(item[1], item[2])
                if len(values) != len(kind._fields):
                    raise Malformed("a namedtuple with the wrong number of values")
                built[index] = tuple.__new__(kind, values)
            elif tag == "ndarray":
                if not all(type(element) in (bool, int, float, complex, str, bytes) for element in values):
                    raise Malformed("a numpy array holds only plain values")
                built[index] = numpy_value(item[1], item[2], values)
            elif tag == "exctype":
                built[index] = records.exception_class(item[1], item[2], values)
            elif tag == "exception":
                arguments = values[1:1 + len(item[2])]
                names = item[3][0::2]
                if not all(type(name) is str and name.isidentifier() and not name.startswith("__") for name in names):
                    raise Malformed("an exception's attribute names are malformed")
                built[index] = records.exception(values[0], tuple(arguments),
                                                 dict(zip(names, values[1 + len(item[2]):])), item[4])
            elif tag == "dict_keys":
                built[index] = dict.fromkeys(values).keys()
            elif tag == "dict_values":
                built[index] = dict(enumerate(values)).values()
            else:
                if len(values) % 2:
                    raise Malformed("dict items must be a flat list of even length")
                built[index] = dict(zip(values[0::2], values[1::2])).items()
            done[index] = True
            visiting.discard(index)
            stack.pop()

    def pairs(flat):
        if type(flat) is not list or len(flat) % 2:
            raise Malformed("key-value pairs must be a flat list of even length")
        return [(value_of(flat[position]), value_of(flat[position + 1])) for position in range(0, len(flat), 2)]

    try:
        for index in range(len(table)):
            if not done[index]:
                build_immutable(index)
        # Fill objects, sequences and deques (no hashing), then mappings and sets.
        for index, item in enumerate(table):
            tag = item[0]
            target = built[index]
            if tag == "list" or tag == "deque":
                check_length(item, 2 if tag == "list" else 3)
                if type(item[1]) is not list:
                    raise Malformed(f"a {tag} entry needs a list of values")
                if tag == "list" and len(item[1]) > 16 and set(map(type, item[1])) <= CODEC_PLAIN_ELEMENTS:
                    # JSON gave exact builtins already (json.loads makes nothing else of atoms).
                    target.extend(item[1])
                else:
                    target.extend(value_of(element) for element in item[1])
            elif tag == "bytearray":
                check_length(item, 2)
                if type(item[1]) is not str:
                    raise Malformed("a bytearray entry needs hexadecimal text")
                target.extend(bytes.fromhex(item[1]))
            elif tag == "object":
                attributes = item[2]
                if type(attributes) is not list or len(attributes) % 2:
                    raise Malformed("object attributes must be a flat list of even length")
                cls = type(target)
                settable = settable_by_class.get(cls)
                if settable is None:
                    settable = settable_by_class[cls] = (instance_attribute_names(cls), slot_names(cls))
                for position in range(0, len(attributes), 2):
                    name = attributes[position]
                    if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                        raise Malformed(f"attribute name {name!r}")
                    value = value_of(attributes[position + 1])
                    if name in settable[1]:
                        # A slot: set through the class's own member descriptor.
                        for base in cls.__mro__:
                            if name in vars(base):
                                vars(base)[name].__set__(target, value)
                                break
                        continue
                    if name not in settable[0] and any(name in vars(base) for base in cls.__mro__):
                        # `EPS = 1e300` on an instance would steer the class's own `__eq__`.
                        raise Malformed(f"attribute {name!r} would shadow its class's own")
                    object.__getattribute__(target, "__dict__")[name] = value
            elif tag == "record":
                attributes = item[3]
                if type(attributes) is not list or len(attributes) % 2:
                    raise Malformed("record attributes must be a flat list of even length")
                state = {}
                for position in range(0, len(attributes), 2):
                    name = attributes[position]
                    if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                        raise Malformed(f"attribute name {name!r}")
                    state[name] = value_of(attributes[position + 1])
                records.fill(target, state)
        for index, item in enumerate(table):
            tag = item[0]
            target = built[index]
            if tag in ("dict", "Counter", "OrderedDict"):
                check_length(item, 2)
                for key, value in pairs(item[1]):
                    target[key] = value
            elif tag == "defaultdict":
                for key, value in pairs(item[2]):
                    target[key] = value
            elif tag == "set":
                check_length(item, 2)
                if type(item[1]) is not list:
                    raise Malformed("a set entry needs a list of values")
                for element in item[1]:
                    target.add(value_of(element))
        return [value_of(value) for value in encoded]
    except Malformed:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, MemoryError,
            OverflowError) as error:
        raise Malformed(f"{type(error).__name__}: {error}") from None

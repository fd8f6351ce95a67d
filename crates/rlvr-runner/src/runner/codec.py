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
#
# This module holds what both directions share: the format's limits, what counts as data, which
# builtins and standard objects cross by name, and the errors. The encoder is `encoder.py`
# (`encode_values`), the decoder `decoder.py` (`decode_values`).

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

class Unencodable(Exception):
    """A value outside the encoding (its reason names the type)."""


class Malformed(Exception):
    """Encoded data that no encoder produced: refused whole."""


def codec_collections():
    import collections

    return collections


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


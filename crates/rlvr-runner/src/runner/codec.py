# Values as plain data: the canonical, type-exact encoding that carries a solution's return
# values out of a test child and a test's input bindings into one (docs/runner.md, "Values").
#
# Only exact builtin types are encoded (`type(value) is int`, never isinstance), plus objects of
# the classes the test side names (ListNode, TreeNode, classes a test defines), encoded as their
# class name and instance attributes. Anything else (an instance of a class the solution
# defined, an int subclass, a function, a generator) is unencodable. Containers and objects go
# into a table and are referenced by index, so shared references and cycles survive and deep
# structures need no recursion. Decoding never runs code from the data: it builds exact builtins
# and instances of the decoder's own classes, so an always-true `__eq__` cannot cross.
#
# Atoms: null, true, false, JSON integers below 4000 digits, finite JSON floats, strings.
# Tagged atoms: {"i": hex} big integer, {"f": "nan"|"inf"|"-inf"}, {"b": hex} bytes,
# {"c": [real, imaginary]} complex, {"r": index} a table entry, {"callable": name} a function or
# class (decoded as an opaque stand-in: it is truthy and callable, equal only to itself, and
# calling it raises; the test can check that a function exists, never run it).
# Table entries: ["list", [v...]], ["tuple", [v...]], ["dict", [k, v, ...]], ["set", [v...]],
# ["frozenset", [v...]], ["bytearray", hex], ["deque", [v...], maxlen], ["Counter", [k, v, ...]],
# ["OrderedDict", [k, v, ...]], ["defaultdict", factory, [k, v, ...]],
# ["object", class name, [attribute, v, ...]].

CODEC_MAX_NODES = 4_000_000
CODEC_BIG_INTEGER = 10 ** 4000
CODEC_FACTORIES = {"list": list, "int": int, "set": set, "dict": dict, "str": str, "float": float,
                   "tuple": tuple, "frozenset": frozenset, "bool": bool}


class Unencodable(Exception):
    """A value outside the encoding (its reason names the type)."""


class CodecCallable:
    """A function or class of the other side, by name only."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __call__(self, *arguments, **keywords):
        raise TypeError(f"{self.name} belongs to the solution's process and cannot be called here")

    def __repr__(self):
        return f"<callable {self.name}>"


CODEC_CALLABLE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.LambdaType, type,
                        types.BuiltinMethodType, types.MethodWrapperType, types.WrapperDescriptorType)


def codec_collections():
    import collections

    return collections


def encode_values(values, classes, numpy_as_plain=False):
    """Encodes a list of values sharing one table. Returns `(table, encoded values)`; raises
    `Unencodable` for the first value that is not plain data. With `numpy_as_plain` (the test
    child's results), a numpy array is sent as its nested lists and a numpy scalar as the Python
    number it holds: the referee compares them as the test would (`np.allclose`, `==`)."""
    collections = codec_collections()
    deque_type, counter_type = collections.deque, collections.Counter
    ordered_type, default_type = collections.OrderedDict, collections.defaultdict
    table = []
    memo = {}
    keep = []
    pending = []
    nodes = [0]

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
        if kind in CODEC_CALLABLE_TYPES or issubclass(kind, type):
            try:
                name = object.__getattribute__(value, "__qualname__")
            except (AttributeError, TypeError):
                name = None
            return {"callable": name if type(name) is str else "function"}
        key = id(value)
        index = memo.get(key)
        if index is not None:
            return {"r": index}
        if kind in (list, tuple, dict, set, frozenset, bytearray, deque_type, counter_type, ordered_type,
                    default_type):
            pass
        elif kind.__name__ in classes and type(kind) is type:
            try:
                attributes = object.__getattribute__(value, "__dict__")
            except AttributeError:
                raise Unencodable(f"{kind.__name__} without an attribute dict") from None
            if type(attributes) is not dict:
                raise Unencodable(f"{kind.__name__} without an attribute dict")
        elif numpy_as_plain and kind.__module__ == "numpy" and hasattr(kind, "tolist"):
            nodes[0] -= 1
            return reference(value.tolist())
        else:
            raise Unencodable(f"a {kind.__module__}.{kind.__qualname__} is not plain data")
        index = len(table)
        memo[key] = index
        keep.append(value)
        table.append(None)
        pending.append((index, value))
        return {"r": index}

    def pairs(mapping, kind):
        flat = []
        for key, item in kind.items(mapping):
            flat.append(reference(key))
            flat.append(reference(item))
        return flat

    encoded = [reference(value) for value in values]
    while pending:
        index, value = pending.pop()
        kind = type(value)
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            table[index] = [kind.__name__, [reference(item) for item in value]]
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
        else:
            attributes = object.__getattribute__(value, "__dict__")
            flat = []
            for name, item in dict.items(attributes):
                if type(name) is not str:
                    raise Unencodable("an attribute name that is not a string")
                flat.append(name)
                flat.append(reference(item))
            table[index] = ["object", kind.__name__, flat]
    return table, encoded


class Malformed(Exception):
    """Encoded data that no encoder produced: refused whole."""


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


def decode_values(table, encoded, classes):
    """Builds the values `encoded` names from `table`; `classes` maps the class names the test
    side accepts to the classes to instantiate. Raises `Malformed` on anything unexpected."""
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
        elif tag not in ("tuple", "frozenset"):
            raise Malformed(f"unknown table tag {tag!r}")

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
        if tag == "callable" and type(payload) is str:
            return CodecCallable(payload[:200]), None
        if tag == "c" and type(payload) is list and len(payload) == 2:
            parts = [atom(part)[0] for part in payload]
            if not all(type(part) in (int, float) for part in parts):
                raise Malformed("a complex number needs two real parts")
            return complex(parts[0], parts[1]), None
        raise Malformed(f"unknown tagged value {tag!r}")

    def value_of(value):
        plain, index = atom(value)
        if index is None:
            return plain
        if not done[index]:
            build_immutable(index)
        return built[index]

    def build_immutable(root):
        # Tuples and frozensets need their elements first: an explicit stack, no recursion;
        # a cycle made only of them cannot come from Python, so it is refused.
        stack = [root]
        visiting = set()
        while stack:
            index = stack[-1]
            if done[index]:
                stack.pop()
                continue
            item = entry(index)
            check_length(item, 2)
            if type(item[1]) is not list:
                raise Malformed(f"a {item[0]} entry needs a list of values")
            waiting = []
            for element in item[1]:
                _, child = atom(element)
                if child is not None and not done[child]:
                    waiting.append(child)
            if waiting:
                if index in visiting:
                    raise Malformed("a cycle of tuples or frozensets")
                visiting.add(index)
                stack.extend(waiting)
                continue
            elements = [value_of(element) for element in item[1]]
            built[index] = tuple(elements) if item[0] == "tuple" else frozenset(elements)
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
                    settable = settable_by_class[cls] = instance_attribute_names(cls)
                for position in range(0, len(attributes), 2):
                    name = attributes[position]
                    if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                        raise Malformed(f"attribute name {name!r}")
                    if name not in settable and any(name in vars(base) for base in cls.__mro__):
                        # `EPS = 1e300` on an instance would steer the class's own `__eq__`.
                        raise Malformed(f"attribute {name!r} would shadow its class's own")
                    object.__getattribute__(target, "__dict__")[name] = value_of(attributes[position + 1])
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


def shift_references(item, offset):
    """The same encoded data with every table reference moved by `offset` (explicit stack)."""
    if offset == 0:
        return item
    root = [item]
    stack = [(root, 0)]
    while stack:
        container, key = stack.pop()
        value = container[key]
        if type(value) is dict:
            if "r" in value:
                container[key] = {"r": value["r"] + offset}
            elif "c" in value:
                stack.extend((value["c"], position) for position in range(len(value["c"])))
        elif type(value) is list:
            stack.extend((value, position) for position in range(len(value)))
    return root[0]

# The value codec's decoder (codec.py describes the format): encoded data becomes this side's
# values, exact builtins, standard value types and instances of the classes this side names,
# never by running code from the data. Anything no encoder produces is refused whole
# (`Malformed`).

import types

from .codec import (
    CODEC_FACTORIES,
    CODEC_MAX_NODES,
    CODEC_NAMEDTUPLE_FIELDS,
    CODEC_NUMPY_KINDS,
    CODEC_PLAIN_ELEMENTS,
    Malformed,
    codec_collections,
    namedtuple_fields,
    slot_names,
)


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
    decoder = Decoder(table, classes, resolve, records, collections)
    decoder.create_mutable()
    try:
        decoder.build_every_immutable()
        decoder.fill_sequences_and_objects()
        decoder.fill_mappings_and_sets()
        value_of = decoder.value_of
        return [value_of(value) for value in encoded]
    except Malformed:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, MemoryError,
            OverflowError) as error:
        raise Malformed(f"{type(error).__name__}: {error}") from None


def check_length(item, length):
    if len(item) != length:
        raise Malformed(f"a {item[0]} entry has {len(item)} fields")


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


class Decoder:
    """One `decode_values` call: the table, what is built of it (`built[index]`, final once
    `done[index]`), in three passes: mutable containers and objects empty first (anything may
    refer to them), then the immutable entries (their elements first), then the contents of
    sequences and objects, and last of mappings and sets (whose keys may be any of the above)."""

    __slots__ = ("table", "classes", "resolve", "records", "collections", "built", "done", "settable_by_class")

    def __init__(self, table, classes, resolve, records, collections):
        self.table = table
        self.classes = classes
        self.resolve = resolve
        self.records = records
        self.collections = collections
        self.built = [None] * len(table)
        self.done = [False] * len(table)
        self.settable_by_class = {}

    def entry(self, index):
        table = self.table
        if type(index) is not int or not 0 <= index < len(table):
            raise Malformed(f"reference {index!r} outside the table")
        item = table[index]
        if type(item) is not list or not item or type(item[0]) is not str:
            raise Malformed(f"table entry {index} is not a tagged list")
        return item

    def create_mutable(self):
        """Mutable containers and objects, empty: anything may refer to them."""
        collections, classes, records, built, done = (self.collections, self.classes, self.records, self.built,
                                                      self.done)
        mutable = {"list": list, "dict": dict, "set": set, "bytearray": bytearray, "Counter": collections.Counter,
                   "OrderedDict": collections.OrderedDict}
        for index in range(len(self.table)):
            item = self.entry(index)
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

    def number(self, value):
        plain = self.atom(value)[0]
        if type(plain) is not int:
            raise Malformed("an integer field that is not an integer")
        return plain

    def atom(self, value):
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
            self.entry(payload)
            return None, payload
        return self.tagged_atom(tag, payload), None

    def tagged_atom(self, tag, payload):
        """The value of a tagged atom other than a reference."""
        if tag == "i" and type(payload) is str:
            try:
                return int(payload, 16)
            except ValueError:
                raise Malformed("a big integer that is not hexadecimal") from None
        if tag == "f" and payload in ("nan", "inf", "-inf"):
            return float(payload)
        if tag == "b" and type(payload) is str:
            try:
                return bytes.fromhex(payload)
            except ValueError:
                raise Malformed("bytes that are not hexadecimal") from None
        if tag == "c" and type(payload) is list and len(payload) == 2:
            parts = [self.atom(part)[0] for part in payload]
            if not all(type(part) in (int, float) for part in parts):
                raise Malformed("a complex number needs two real parts")
            return complex(parts[0], parts[1])
        if tag in ("h", "x") and type(payload) is int or tag == "bi" and type(payload) is str:
            if self.resolve is None:
                raise Malformed("a handle where only data is accepted")
            return self.resolve(tag, payload)
        if tag == "np" and type(payload) is list and len(payload) == 2:
            plain = self.atom(payload[1])[0]
            if type(plain) not in (bool, int, float, complex, str, bytes):
                raise Malformed("a numpy scalar needs a plain value")
            return numpy_value(payload[0], None, plain)
        if type(payload) is list and tag in ("q", "td", "range"):
            return self.standard_value(tag, payload)
        if type(payload) is str and tag in ("dec", "date", "datetime", "time"):
            return self.standard_value(tag, payload)
        raise Malformed(f"unknown tagged value {tag!r}")

    def standard_value(self, tag, payload):
        number = self.number
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

    def value_of(self, value):
        plain, index = self.atom(value)
        if index is None:
            return plain
        if not self.done[index]:
            self.build_immutable(index)
        return self.built[index]

    def build_every_immutable(self):
        done = self.done
        for index in range(len(self.table)):
            if not done[index]:
                self.build_immutable(index)

    def build_immutable(self, root):
        # Tuples and the like need their elements first: an explicit stack, no recursion; a
        # cycle made only of them cannot come from Python, so it is refused.
        done, atom, value_of = self.done, self.atom, self.value_of
        stack = [root]
        visiting = set()
        while stack:
            index = stack[-1]
            if done[index]:
                stack.pop()
                continue
            item = self.entry(index)
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
            self.built[index] = self.immutable_value(item, [value_of(element) for element in elements])
            done[index] = True
            visiting.discard(index)
            stack.pop()

    def immutable_value(self, item, values):
        """The value of an immutable entry whose elements' values are `values`."""
        tag = item[0]
        if tag == "tuple":
            return tuple(values)
        if tag == "frozenset":
            return frozenset(values)
        if tag == "namedtuple":
            kind = self.classes.get(item[1]) if type(item[1]) is str else None
            if not (isinstance(kind, type) and namedtuple_fields(kind) == tuple(item[2])
                    if type(item[2]) is list else False):
                kind = codec_namedtuple(item[1], item[2])
            if len(values) != len(kind._fields):
                raise Malformed("a namedtuple with the wrong number of values")
            return tuple.__new__(kind, values)
        if tag == "ndarray":
            if not all(type(element) in (bool, int, float, complex, str, bytes) for element in values):
                raise Malformed("a numpy array holds only plain values")
            return numpy_value(item[1], item[2], values)
        if tag == "exctype":
            return self.records.exception_class(item[1], item[2], values)
        if tag == "exception":
            arguments = values[1:1 + len(item[2])]
            names = item[3][0::2]
            if not all(type(name) is str and name.isidentifier() and not name.startswith("__") for name in names):
                raise Malformed("an exception's attribute names are malformed")
            return self.records.exception(values[0], tuple(arguments), dict(zip(names, values[1 + len(item[2]):])),
                                          item[4])
        if tag == "dict_keys":
            return dict.fromkeys(values).keys()
        if tag == "dict_values":
            return dict(enumerate(values)).values()
        if len(values) % 2:
            raise Malformed("dict items must be a flat list of even length")
        return dict(zip(values[0::2], values[1::2])).items()

    def fill_sequences_and_objects(self):
        """Objects, sequences and deques (no hashing)."""
        value_of, built = self.value_of, self.built
        for index, item in enumerate(self.table):
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
                self.fill_object(target, item[2])
            elif tag == "record":
                self.fill_record(target, item[3])

    def fill_object(self, target, attributes):
        if type(attributes) is not list or len(attributes) % 2:
            raise Malformed("object attributes must be a flat list of even length")
        cls = type(target)
        settable = self.settable_by_class.get(cls)
        if settable is None:
            settable = self.settable_by_class[cls] = (instance_attribute_names(cls), slot_names(cls))
        for position in range(0, len(attributes), 2):
            name = attributes[position]
            if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                raise Malformed(f"attribute name {name!r}")
            value = self.value_of(attributes[position + 1])
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

    def fill_record(self, target, attributes):
        if type(attributes) is not list or len(attributes) % 2:
            raise Malformed("record attributes must be a flat list of even length")
        state = {}
        for position in range(0, len(attributes), 2):
            name = attributes[position]
            if type(name) is not str or not name.isidentifier() or name.startswith("__"):
                raise Malformed(f"attribute name {name!r}")
            state[name] = self.value_of(attributes[position + 1])
        self.records.fill(target, state)

    def fill_mappings_and_sets(self):
        """Mappings and sets, whose keys and elements are complete by now (hashable as they are)."""
        value_of, built, pairs = self.value_of, self.built, self.pairs
        for index, item in enumerate(self.table):
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

    def pairs(self, flat):
        if type(flat) is not list or len(flat) % 2:
            raise Malformed("key-value pairs must be a flat list of even length")
        value_of = self.value_of
        return [(value_of(flat[position]), value_of(flat[position + 1])) for position in range(0, len(flat), 2)]

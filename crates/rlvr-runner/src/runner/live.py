# Judge functional tests, the solution's side (docs/profiles.md, "Threat model"). The test's
# code runs in the referee, in another sandbox; this child runs the solution's module code, says
# which names it defines, then answers the referee's calls one at a time: each call's arguments
# arrive only when the test makes that call, and only the value (or the exception) goes back.
# No expected value, test text or later argument ever reaches this process. Nothing here is
# trusted: a solution can rewrite any of it, and all it can forge is its own answers.
#
# Messages are JSON, each framed by a 4-byte little-endian length, on two pipes the engine
# relays: LIVE_REQUEST_FD (from the referee) and LIVE_REPLY_FD (to it). Requests carry an "id"
# that the reply repeats:
#   {"t": "call", "f": ref, "a": [v...], "k": [[name, v]...], "tab": [...]}   f(*a, **k)
#   {"t": "method", "o": ref, "n": name, "a": ..., "k": ..., "tab": ...}      o.name(*a, **k)
#   {"t": "getattr"|"setattr", "o": ref, "n": name[, "v": v, "tab": ...]}
#   {"t": "global", "n": name}                                               a module global
#   {"t": "op", "n": operator, "o": ref[, "v": v, "tab": ...]}               see LIVE_OPERATORS
#   {"t": "next", "o": ref, "count": n}                                      up to n items
#   {"t": "end"}                                                             the test is over
# A ref is a handle atom ({"h": n}). Replies: {"t": "return", "id", "v", "tab", "back",
# "types"} or {"t": "raise", "id", "type", "message", "v", "tab"} ("v": the exception, encoded).
# What a call returns is data: an instance of one of the solution's classes crosses as a record
# (its class name and attributes, with a handle for `len`, `iter`, `str`...), except the instance
# a call of the class itself makes ("live" in the request): that one stays a handle whose methods
# the test calls. "op" "snapshot" sends a handle's object as a record, for `==` in the referee. "back" holds the state after the call of
# every mutable argument, by position (keyword arguments by name), so the referee writes it
# into the test's own objects. The child calls back the same way ({"t": "call"} with an "x"
# handle the referee sent), and the referee answers it while the child waits.

import builtins
import json
import struct
import types

from .codec import CODEC_STANDARD_MODULES, Malformed, builtin_reference, named_builtin
from .decoder import decode_values
from .encoder import encode_values
from .protocol import read_exact, write_all


LIVE_REQUEST_FD = 5
LIVE_REPLY_FD = 6
LIVE_MAX_MESSAGE = 1 << 30
LIVE_NEXT_BATCH = 4096
LIVE_METHODS_PER_TYPE = 256
# Operators the referee may ask for on an object of this side, with their arity.
LIVE_UNARY = {"len": len, "iter": iter, "str": str, "repr": repr, "int": int, "float": float,
              "complex": complex, "index": None, "neg": None, "pos": None, "abs": abs, "invert": None,
              "bool": bool, "hash": hash, "reversed": reversed}
LIVE_BINARY = ("eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
               "lshift", "rshift", "and_", "or_", "xor", "matmul", "getitem", "delitem", "contains", "format",
               "isinstance")


class LiveEnded(BaseException):
    """The referee ended the test while this side waited for a callback's answer."""


class RefereeObject:
    """A callable or iterator of the test's side: calling it (or iterating it) asks the
    referee, which answers with a value or an exception."""

    __slots__ = ("_rlvr_session", "_rlvr_number", "_rlvr_chunk", "_rlvr_size", "_rlvr_taken", "_rlvr_done",
                 "_rlvr_sequence")

    def __init__(self, session, number):
        self._rlvr_session, self._rlvr_number = session, number
        self._rlvr_chunk, self._rlvr_size, self._rlvr_taken = iter(()), 0, 0
        self._rlvr_done = self._rlvr_sequence = False

    def __call__(self, *arguments, **keywords):
        return self._rlvr_session.callback({"t": "call", "f": {"x": self._rlvr_number}}, arguments, keywords)

    def __iter__(self):
        # Items come in chunks (the referee decides how many), taken at C speed from each
        # chunk's own iterator; what this side took is reported with the answer, so the test's
        # iterator advances by exactly that.
        while True:
            yield from self._rlvr_chunk
            if not self._rlvr_fetch():
                return

    def __next__(self):
        while True:
            for item in self._rlvr_chunk:
                return item
            if not self._rlvr_fetch():
                raise StopIteration

    def _rlvr_fetch(self):
        """The next chunk; False when the iterator is exhausted."""
        if self._rlvr_done:
            return False
        self._rlvr_taken += self._rlvr_size
        items, self._rlvr_done, self._rlvr_sequence = self._rlvr_session.callback_next(self._rlvr_number)
        self._rlvr_chunk, self._rlvr_size = iter(items), len(items)
        return bool(items) or not self._rlvr_done

    def _rlvr_settle(self):
        """What this side took of an iterator over a sequence since the last answer; the chunk
        left over is dropped (the test may move its iterator before the next call)."""
        taken = self._rlvr_taken + self._rlvr_size - self._rlvr_chunk.__length_hint__()
        self._rlvr_chunk, self._rlvr_size, self._rlvr_taken = iter(()), 0, 0
        self._rlvr_done = self._rlvr_sequence = False
        return taken

    def __repr__(self):
        return f"<test object {self._rlvr_number}>"


def live_fallback_class(name):
    """A plain class standing in for a class of the test's side the solution does not define
    (it reads the attributes of such an object; it cannot call the test's methods)."""
    return type(name, (), {"__module__": "__main__"})


class LiveSession:
    """The child's end of the live protocol."""

    def __init__(self, namespace, prelude):
        self.namespace = namespace
        self.prelude = prelude
        self.objects = []  # handle number -> object (kept alive for the test)
        self.numbers = {}  # id(object) -> handle number
        self.type_numbers = {}  # type -> number sent in "types"
        self.types_sent = set()
        self.classes = frozenset()  # class names the referee takes as data
        self.fallbacks = {}
        self.next_request = 0
        self.referee_objects = {}
        self.buffer = b""
        self.live = set()  # ids of the objects the referee holds as live handles
        self.snapshot = None  # the object a "snapshot" sends as a record even if it is live

    # Framing.
    def send(self, message):
        data = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8", "surrogatepass")
        write_all(LIVE_REPLY_FD, struct.pack("<I", len(data)) + data)

    def receive(self):
        header = read_exact(LIVE_REQUEST_FD, 4)
        (length,) = struct.unpack("<I", header)
        if length > LIVE_MAX_MESSAGE:
            raise LiveEnded
        return json.loads(read_exact(LIVE_REQUEST_FD, length).decode("utf-8", "surrogatepass"))

    # Values.
    def handle(self, value):
        """The handle of an object that is not data: the referee gets `{"h": n}`, and the first
        time, the method names of its type (`handles`, `types` in the reply)."""
        key = id(value)
        number = self.numbers.get(key)
        if number is None or self.objects[number] is not value:
            number = len(self.objects)
            self.objects.append(value)
            self.numbers[key] = number
            kind = value if isinstance(value, type) else type(value)
            type_number = self.type_numbers.get(kind)
            if type_number is None:
                type_number = self.type_numbers[kind] = len(self.type_numbers)
                self.pending["types"][str(type_number)] = self.method_names(value)
            self.pending["handles"][str(number)] = type_number
        return {"h": number}

    def method_names(self, value):
        """Names of the methods `value` has through its class (or, for a class, its own): the
        referee then calls them in one round trip. Only an optimisation; read from the classes'
        own dictionaries, so no descriptor of the solution's runs (and `inspect`, 13 ms to
        import in a test child, is not needed)."""
        if not isinstance(value, type) and type(value).__module__ == "builtins":
            return []
        source = value if isinstance(value, type) else type(value)
        names = []
        seen = set()
        try:
            for klass in type.__dict__["__mro__"].__get__(source):
                if klass is object:
                    continue
                for name, attribute in dict(type.__dict__["__dict__"].__get__(klass)).items():
                    if type(name) is not str or name in seen or name.startswith("__") and name not in (
                            "__bool__", "__len__"):
                        continue
                    seen.add(name)
                    if isinstance(attribute, (staticmethod, classmethod, types.FunctionType)):
                        names.append(name)
                    if len(names) >= LIVE_METHODS_PER_TYPE:
                        return names
        except Exception:
            pass
        return names

    def encode(self, values):
        """`(table, encoded values, extra)`: `extra` holds the new handles' types for the reply."""
        self.pending = {"types": {}, "handles": {}}
        table, encoded = encode_values(values, self.classes, numpy_as_plain=True, opaque=self.handle,
                                       record=self.record_number)
        return table, encoded, {key: part for key, part in self.pending.items() if part}

    def record_number(self, value):
        """The handle number of an object that crosses as a record (an instance of one of the
        solution's classes the referee does not hold as a live handle) or as an exception class;
        None for anything else."""
        if isinstance(value, type):
            return self.handle(value)["h"] if issubclass(value, BaseException) else None
        if type(value).__module__ != "__main__" or id(value) in self.live and value is not self.snapshot:
            return None
        return self.handle(value)["h"]

    def standard_origin(self, value):
        """`(module, name)` when `value` is a public object of a pure standard module (the
        solution bound it with `from fractions import Fraction`): the referee uses its own."""
        reference = builtin_reference(value)
        if reference is None or "." not in reference["bi"]:
            return None
        module, _, name = reference["bi"].rpartition(".")
        return (module, name) if module in CODEC_STANDARD_MODULES else None

    def resolve(self, tag, number):
        if tag == "h":
            if 0 <= number < len(self.objects):
                return self.objects[number]
            raise Malformed(f"unknown handle {number}")
        if tag == "bi":
            return named_builtin(number)
        referee_object = self.referee_objects.get(number)
        if referee_object is None:
            referee_object = self.referee_objects[number] = RefereeObject(self, number)
        return referee_object

    def encode_handle(self, value):
        self.pending = {"types": {}, "handles": {}}
        atom = self.handle(value)
        return [], [atom], self.pending

    def decode(self, table, values):
        return decode_values(table, values, LiveClasses(self), resolve=self.resolve)

    # Serving.
    def ready(self):
        names = {}
        for name, value in list(self.namespace.items()):
            if type(name) is not str or name.startswith("__") or self.prelude.get(name, self) is value:
                continue
            if type(value) is types.ModuleType:
                names[name] = ["module", value.__name__]
                continue
            origin = self.standard_origin(value) if callable(value) else None
            if isinstance(value, type) and issubclass(value, BaseException) and origin is None:
                table, (atom,), extra = self.encode([value])
                names[name] = ["exception", atom, dict(extra, tab=table)]
            elif callable(value):
                _, (atom,), extra = self.encode_handle(value)
                kind = "class" if isinstance(value, type) else "callable"
                names[name] = [kind, atom, extra] if origin is None else ["std", atom, extra, *origin]
            else:
                names[name] = ["value"]
        self.send({"t": "ready", "names": names})

    def serve(self):
        """Answers requests until the referee ends the test."""
        while True:
            message = self.receive()
            if message.get("t") == "end":
                return
            self.answer(message)

    def answer(self, message):
        identifier = message.get("id")
        try:
            reply = self.perform(message)
        except (KeyboardInterrupt, SystemExit, LiveEnded):
            raise
        except BaseException as error:
            reply = {"t": "raise", "type": exception_name(error), "message": exception_message(error)}
            try:
                table, (encoded,), extra = self.encode([error])
                reply.update(extra, v=encoded, tab=table)
            except BaseException:
                pass
        reply["id"] = identifier
        used = self.settle()
        if used:
            reply["used"] = used
        try:
            self.send(reply)
        except (ValueError, OverflowError, UnicodeEncodeError) as error:
            self.send({"t": "raise", "id": identifier, "type": "ValueError",
                       "message": f"the value cannot be sent: {error}"[:1000]})

    def perform(self, message):
        kind = message.get("t")
        if "cls" in message:
            self.classes = frozenset(name for name in message["cls"] if type(name) is str)
        table = message.get("tab", [])
        if kind == "global":
            name = message["n"]
            if name not in self.namespace:
                raise NameError(f"name {name!r} is not defined")
            return self.returned(self.namespace[name])
        if kind == "next":
            iterator = self.decode(table, [message["o"]])[0]
            count = max(1, min(int(message.get("count", 1)), LIVE_NEXT_BATCH))
            values, done = [], False
            for _ in range(count):
                try:
                    values.append(next(iterator))
                except StopIteration:
                    done = True
                    break
            table, encoded, extra = self.encode(values)
            return dict(extra, t="return", v=encoded, tab=table, done=done)
        if kind in ("call", "method"):
            arguments = message.get("a", [])
            keywords = message.get("k", [])
            names = [name for name, _ in keywords]
            target = message["f"] if kind == "call" else message["o"]
            decoded = self.decode(table, [target] + arguments + [value for _, value in keywords])
            function = decoded[0]
            positional = decoded[1:1 + len(arguments)]
            named = dict(zip(names, decoded[1 + len(arguments):]))
            if kind == "method":
                function = getattr(function, message["n"])
            value = function(*positional, **named)
            if message.get("live") and type(value).__module__ == "__main__" and not isinstance(value, type):
                # The instance the test built by calling a class: a live handle (kept alive in
                # `objects` once encoded, so its id is not reused).
                self.live.add(id(value))
            return self.returned(value, positional, named)
        if kind == "getattr":
            return self.returned(getattr(self.decode(table, [message["o"]])[0], message["n"]))
        if kind == "setattr":
            target, value = self.decode(table, [message["o"], message["v"]])
            setattr(target, message["n"], value)
            return self.returned(None)
        if kind == "op":
            name = message["n"]
            operands = self.decode(table, [message["o"]] + ([message["v"]] if "v" in message else []))
            if name == "snapshot" and len(operands) == 1:
                self.snapshot = operands[0]
                try:
                    return self.returned(operands[0])
                finally:
                    self.snapshot = None
            return self.returned(live_operator(name, operands))
        raise ValueError(f"unknown request {kind!r}")

    def returned(self, value, positional=(), named=None):
        """The reply for a value, with the state of the call's mutable arguments."""
        named = named or {}
        backs = [(position, argument) for position, argument in enumerate(positional) if live_mutable(argument)]
        backs += [(name, argument) for name, argument in named.items() if live_mutable(argument)]
        table, encoded, extra = self.encode([value] + [argument for _, argument in backs])
        reply = dict(extra, t="return", v=encoded[0], tab=table)
        if backs:
            reply["back"] = [[key, state] for (key, _), state in zip(backs, encoded[1:])]
            for position, (_, argument) in enumerate(backs):
                if argument is value:
                    reply["same"] = position
                    break
        return reply

    # Calling the referee back.
    def callback(self, message, arguments, keywords):
        table, encoded, extra = self.encode(list(arguments) + list(keywords.values()))
        message = dict(message, **extra, a=encoded[:len(arguments)],
                       k=[[name, value] for name, value in zip(keywords, encoded[len(arguments):])], tab=table)
        reply = self.request(message)
        return self.decode(reply.get("tab", []), [reply.get("v")])[0]

    def settle(self):
        """`[[x, taken]...]`: how many items this side took from each iterator of the test's."""
        used = []
        for number, referee_object in self.referee_objects.items():
            if referee_object._rlvr_sequence:
                used.append([number, referee_object._rlvr_settle()])
        return used

    def callback_next(self, number):
        reply = self.request({"t": "next", "o": {"x": number}, "count": LIVE_NEXT_BATCH})
        # The chunk is one encoded list (a long one of plain values decodes at C speed), or the
        # range that is left of a range's iterator.
        items = self.decode(reply.get("tab", []), [reply.get("v")])[0]
        if type(items) is not list and type(items) is not range:
            raise Malformed("the referee's items are not a list")
        return items, bool(reply.get("done")), bool(reply.get("sequence"))

    def request(self, message):
        self.next_request += 1
        identifier = f"c{self.next_request}"
        message["id"] = identifier
        self.send(message)
        while True:
            reply = self.receive()
            kind = reply.get("t")
            if kind == "end":
                raise LiveEnded
            if kind in ("return", "raise") and reply.get("id") == identifier:
                if kind == "raise":
                    arguments = None
                    if "a" in reply:
                        try:
                            arguments = tuple(self.decode(reply.get("tab", []), [reply["a"]])[0])
                        except (Malformed, TypeError):
                            arguments = None
                    raise live_exception(reply.get("type"), reply.get("message"), arguments)
                return reply
            self.answer(reply)


class LiveClasses:
    """The class names the referee takes as data, mapped to this side's classes of that name
    (the solution's or the prelude's) or a plain stand-in."""

    def __init__(self, session):
        self.session = session

    def get(self, name):
        if name not in self.session.classes:
            return None
        found = self.session.namespace.get(name)
        if isinstance(found, type) and not issubclass(found, BaseException):
            return found
        fallback = self.session.fallbacks.get(name)
        if fallback is None:
            fallback = self.session.fallbacks[name] = live_fallback_class(name)
        return fallback


def live_mutable(value):
    kind = type(value)
    return kind in (list, dict, set, bytearray) or kind.__module__ == "collections" and kind.__name__ in (
        "deque", "Counter", "OrderedDict", "defaultdict") or isinstance(getattr(value, "__dict__", None), dict) and \
        kind.__module__ == "__main__" or kind.__module__ == "numpy" and kind.__name__ == "ndarray"


def live_operator(name, operands):
    import operator

    if name in LIVE_UNARY and len(operands) == 1:
        function = LIVE_UNARY[name] or getattr(operator, name)
        return function(operands[0])
    if name in LIVE_BINARY and len(operands) == 2:
        if name == "format":
            return format(operands[0], operands[1])
        if name == "isinstance":
            return isinstance(operands[0], operands[1])
        return getattr(operator, name)(operands[0], operands[1])
    raise ValueError(f"unknown operator {name!r}")


def exception_name(error):
    kind = type(error)
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", "Exception")
    return name if module == "builtins" else f"{module}.{name}"


def exception_message(error):
    try:
        return str(error)[:1000]
    except BaseException:
        return ""


def live_exception(name, message, arguments=None):
    """An exception the referee raised in a callback, raised here as a builtin of that name
    (with its arguments when they crossed) or a plain Exception."""
    kind = getattr(builtins, name, None) if type(name) is str else None
    if not (isinstance(kind, type) and issubclass(kind, Exception)) or issubclass(kind, StopIteration):
        return Exception(f"{name}: {message}")
    if type(arguments) is tuple:
        try:
            return kind(*arguments)
        except Exception:
            pass
    return kind(message)


def serve_live(namespace, prelude):
    """In the test child, after the solution's module code ran: say which names it defined,
    then answer until the referee ends the test."""
    session = LiveSession(namespace, prelude)
    session.ready()
    session.serve()

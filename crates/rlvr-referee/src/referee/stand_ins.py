# The referee's stand-ins for the solution's objects (referee/live.py holds the session they ask):
# `SolutionObject`, a live handle whose calls and methods run in the solution's child;
# `SolutionRecord`, an instance of one of the solution's classes that a call returned, as data;
# `SolutionMethod`, a method of a live handle; `MissingName`, a name the solution does not
# define. Trusted code: none of them runs the solution's code here. Equality, hashing, truth and
# membership are decided here, on data; plain values' methods, arithmetic with data and the truth
# of an object the test did not build raise `NotData` (docs/profiles.md, "Threat model").

# Methods of plain values (str, list, dict, set, numbers...): on an object a solution *function*
# returned, a test that calls one of these expected plain data (`greet(x).startswith(...)`), and
# the solution's own method must not answer for it.
PLAIN_VALUE_METHODS = frozenset(
    name for kind in (str, bytes, bytearray, list, tuple, dict, set, frozenset, int, float, complex)
    for name in dir(kind) if not name.startswith("_"))
# Predicates of plain values (`startswith`, `isdigit`, `issubset`...): refused even on an instance
# the test built, whose other methods (a design class's `pop`, `get`, `add`) cross. A test that
# asserts `get_greeting().startswith('Hello')` expected a string, and a class named like the
# function (`class get_greeting` with a `startswith` that says yes) must not answer for it.
PLAIN_VALUE_PREDICATES = frozenset(
    name for kind in (str, bytes, set, frozenset, int, float)
    for name in dir(kind) if name.startswith(("is", "startswith", "endswith")))


class NotData(BaseException):
    """The test needed plain data where the solution gave an object of its own: its truth
    value, arithmetic or comparison with data, or a plain value's method on it."""


class MissingName:
    """The test's entry point is a name the prelude imports (`gcd`) that the solution does not
    define: where the test asks for the solution's, the prelude's own function never answers."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *arguments, **keywords):
        raise NameError(f"name {self.name!r} is not defined by the solution")


class SolutionValue:
    """What the referee's stand-ins for the solution's objects (`SolutionObject`, a live handle;
    `SolutionRecord`, returned data) answer alike: equality and hashing as data between two of
    them (never the solution's `__eq__`), membership by iteration compared here (never the
    solution's `__contains__`), and `len`, `iter`, indexing, `str`, `repr` and `format` asked of
    the child, whose answers are checked for their type. Ordering and arithmetic are added below,
    after `solution_comparison` and `solution_arithmetic`."""

    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, SolutionValue):
            return self._rlvr_session.data_equal(self, other)
        return NotImplemented

    def __ne__(self, other):
        if isinstance(other, SolutionValue):
            return not self._rlvr_session.data_equal(self, other)
        return NotImplemented

    def __hash__(self):
        return self._rlvr_session.data_hash(self)

    def __len__(self):
        value = self._rlvr_session.operator("len", self)
        if type(value) is not int or value < 0:
            raise TypeError("the solution's __len__ did not give a non-negative integer")
        return value

    def __iter__(self):
        value = self._rlvr_session.operator("iter", self)
        if not isinstance(value, SolutionObject):
            raise TypeError("the solution's __iter__ did not give an iterator")
        return value

    def __contains__(self, item):
        # Membership by iteration, compared here: the solution's __contains__ never answers.
        for element in self:
            if element is item or element == item:
                return True
        return False

    def __getitem__(self, key):
        return self._rlvr_session.operator("getitem", self, key)

    def __setitem__(self, key, value):
        self._rlvr_session.call({"t": "method", "o": {"h": self._rlvr_number}, "n": "__setitem__"}, (key, value), {})

    def __str__(self):
        return self._rlvr_session.text("str", self)

    def __repr__(self):
        return self._rlvr_session.text("repr", self)

    def __format__(self, spec):
        value = self._rlvr_session.operator("format", self, spec)
        if type(value) is not str:
            raise TypeError("the solution's __format__ did not give a string")
        return value


class SolutionObject(SolutionValue):
    """A stand-in for one object of the solution's process. Trusted code: it never runs the
    solution's code here, only asks the child."""

    __slots__ = ("_rlvr_session", "_rlvr_number", "_rlvr_type", "_rlvr_returned", "_rlvr_used", "__weakref__")

    def __init__(self, session, number, type_number, returned):
        object.__setattr__(self, "_rlvr_session", session)
        object.__setattr__(self, "_rlvr_number", number)
        object.__setattr__(self, "_rlvr_type", type_number)
        object.__setattr__(self, "_rlvr_returned", returned)
        object.__setattr__(self, "_rlvr_used", False)

    def __call__(self, *arguments, **keywords):
        session = self._rlvr_session
        live = session.constructs(self)
        return session.call({"t": "call", "f": {"h": self._rlvr_number}}, arguments, keywords, returned=not live,
                            live=live)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        session = self._rlvr_session
        if self._rlvr_returned and name in PLAIN_VALUE_METHODS or name in PLAIN_VALUE_PREDICATES:
            raise NotData(f"the test calls {name!r}, a method of plain values, on an object of the solution's: "
                          "only plain data is judged")
        object.__setattr__(self, "_rlvr_used", True)
        if name in session.methods.get(self._rlvr_type, ()):
            return SolutionMethod(self, name)
        return session.request({"t": "getattr", "o": {"h": self._rlvr_number}, "n": name},
                               returned=self._rlvr_returned)

    def __setattr__(self, name, value):
        self._rlvr_session.call({"t": "setattr", "o": {"h": self._rlvr_number}, "n": name}, (), {}, value=value)

    def __bool__(self):
        if self._rlvr_returned or not self._rlvr_used:
            # `assert is_prime(7)` against `class is_prime` (truthy by default, or by its own
            # `__bool__`): the truth of an instance the test has not used yet stands for a value.
            raise NotData("the test takes the truth value of an object of the solution's it did not build and use: "
                          "only plain data is judged")
        # An instance the test built and used (`s.push(1)` then `while s:`): Python's default
        # (true) unless its class defines `__bool__` or `__len__`; then the child's answer, taken
        # only as an exact bool.
        methods = self._rlvr_session.methods.get(self._rlvr_type, ())
        if "__bool__" in methods or "__len__" in methods:
            value = self._rlvr_session.operator("bool", self)
            if type(value) is not bool:
                raise TypeError("the solution's __bool__ did not give a bool")
            return value
        return True


    def __next__(self):
        return self._rlvr_session.next_item(self)

    def __reversed__(self):
        value = self._rlvr_session.operator("reversed", self)
        if not isinstance(value, SolutionObject):
            raise TypeError("the solution's __reversed__ did not give an iterator")
        return value


    def __delitem__(self, key):
        self._rlvr_session.operator("delitem", self, key)


    def __int__(self):
        return self._rlvr_session.typed("int", self, int)

    def __index__(self):
        return self._rlvr_session.typed("index", self, int)

    def __float__(self):
        return self._rlvr_session.typed("float", self, float)

    def __complex__(self):
        return self._rlvr_session.typed("complex", self, complex)

    def __neg__(self):
        return self._rlvr_session.operator("neg", self)

    def __pos__(self):
        return self._rlvr_session.operator("pos", self)

    def __abs__(self):
        return self._rlvr_session.operator("abs", self)

    def __invert__(self):
        return self._rlvr_session.operator("invert", self)

    def __instancecheck__(self, instance):
        # `isinstance(obj, SolutionClass)`: between two of the solution's objects its word (an
        # untrusted comparison); plain data is never an instance of a class of the solution's.
        if not isinstance(instance, SolutionValue):
            return False
        value = self._rlvr_session.compare("isinstance", instance, self)
        if type(value) is not bool:
            raise TypeError("the solution's isinstance did not give a bool")
        return value

    def __enter__(self):
        return SolutionMethod(self, "__enter__")()

    def __exit__(self, *exception):
        # The exception of the test's block stays here: the solution is told there was none.
        SolutionMethod(self, "__exit__")(None, None, None)
        return False


def solution_comparison(name):
    """An ordering: between two of the solution's objects it is the solution's word (counted
    as an untrusted comparison); with anything else it is not asked (a TypeError)."""

    def compare(self, other):
        if isinstance(other, SolutionValue):
            return self._rlvr_session.compare(name, self, other)
        return NotImplemented

    compare.__name__ = f"__{name}__"
    return compare


def solution_arithmetic(name, reflected=False):
    """Arithmetic between two of the solution's objects is computed by the solution; with data
    it is refused (`abs(f(x) - 1.5) < 1e-9` must not be answered by the solution's `__sub__`)."""

    def apply(self, other):
        if isinstance(other, SolutionValue):
            left, right = (other, self) if reflected else (self, other)
            return self._rlvr_session.operator(name, left, right)
        raise NotData(f"the test applies {name.rstrip('_')!r} to an object of the solution's and plain data: "
                      "only plain data is judged")

    return apply


class SolutionRecord(SolutionValue):
    """An instance of one of the solution's classes that a call, a method call, an attribute
    read or an iteration gave: data (its class name and its attributes, decoded here), with the
    object's handle for `len`, `iter`, `str`, `repr`, `format`, indexing and attribute writes
    only. Its methods are never called: the test expected plain data."""

    __slots__ = ("_rlvr_session", "_rlvr_number", "_rlvr_class", "_rlvr_state", "__weakref__")

    def __init__(self, session, number, class_name):
        object.__setattr__(self, "_rlvr_session", session)
        object.__setattr__(self, "_rlvr_number", number)
        object.__setattr__(self, "_rlvr_class", class_name)
        object.__setattr__(self, "_rlvr_state", {})

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        state = object.__getattribute__(self, "_rlvr_state")
        if name in state:
            return state[name]
        session = self._rlvr_session
        refused = NotData(f"the test reads {name!r}, a method of an object of the solution's class "
                          f"{self._rlvr_class!r} that a call returned: only plain data is judged")
        if name in session.methods.get(session.handle_types.get(self._rlvr_number), ()):
            raise refused
        # A class attribute or a property: data, or refused.
        value = session.request({"t": "getattr", "o": {"h": self._rlvr_number}, "n": name})
        if isinstance(value, SolutionObject):
            raise refused
        return value

    def __setattr__(self, name, value):
        self._rlvr_session.call({"t": "setattr", "o": {"h": self._rlvr_number}, "n": name}, (), {}, value=value)
        self._rlvr_state[name] = value

    def __bool__(self):
        raise NotData(f"the test takes the truth value of an object of the solution's class {self._rlvr_class!r} "
                      "that a call returned: only plain data is judged")


for _name in ("lt", "le", "gt", "ge"):
    setattr(SolutionValue, f"__{_name}__", solution_comparison(_name))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or", "xor",
              "matmul"):
    _operator = _name + "_" if _name in ("and", "or") else _name
    setattr(SolutionValue, f"__{_name}__", solution_arithmetic(_operator))
    setattr(SolutionValue, f"__r{_name}__", solution_arithmetic(_operator, reflected=True))
del _name, _operator


class SolutionMethod:
    """`obj.name`, called in one round trip."""

    __slots__ = ("owner", "name")

    def __init__(self, owner, name):
        self.owner, self.name = owner, name

    def __call__(self, *arguments, **keywords):
        owner = self.owner
        session = owner._rlvr_session
        # A class's own factory (`Tree.from_list(...)`, a classmethod) builds a live instance.
        live = session.constructs(owner)
        return session.call({"t": "method", "o": {"h": owner._rlvr_number}, "n": self.name}, arguments,
                            keywords, returned=not live, live=live)

    def __repr__(self):
        return f"<method {self.name} of the solution>"


# One job's tests, run here whole: each in a fresh namespace made of the prelude's names, the
# test's own, and stand-ins for what the solution defines (resolved when the test first reads
# them). The verdict is the test's: it passes when its code runs to the end.

CONVENTIONAL_MODULES = {"np": "numpy", "pd": "pandas"}


class Trust:
    """What the prelude binds, by kind: modules and helpers (always the referee's), imported
    names (the referee's unless one is a test's entry point), and the helper classes values may
    be decoded into."""

    def __init__(self, prelude_source, namespace):
        self.modules, self.helpers, self.imported = set(), set(), set()
        for node in ast.parse(prelude_source).body:
            bound = {}
            if isinstance(node, ast.Import):
                bound = {(alias.asname or alias.name.split(".")[0]): "module" for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                bound = {(alias.asname or alias.name): "imported" for alias in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound = {node.name: "helper"}
            for name, kind in bound.items():
                for group in (self.modules, self.helpers, self.imported):
                    group.discard(name)
                {"module": self.modules, "helper": self.helpers, "imported": self.imported}[kind].add(name)
        self.builtins = frozenset(dir(builtins))
        self.helper_classes = {name: namespace[name] for name in self.helpers if isinstance(namespace.get(name), type)}


def bound_names(tree):
    """Every name the test binds anywhere (assignments, definitions, imports, parameters,
    loop and comprehension targets)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


class CallOrder(ast.NodeVisitor):
    """Names called directly (`name(...)`), in the order the source reads them."""

    def __init__(self):
        self.called = []

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name):
            self.called.append(node.func.id)
        self.generic_visit(node)


def entry_point(tree, trust):
    """The first name the test calls that is neither the test's, a builtin, a module nor a
    helper: the function the prompt asked for. When the prelude imports a name of that spelling
    (`gcd`), the test means the solution's."""
    own = bound_names(tree)
    order = CallOrder()
    order.visit(tree)
    for name in order.called:
        if name in own or name in trust.builtins or name in trust.modules or name in trust.helpers:
            continue
        return name
    return None


def class_like(name):
    """A CapWords name by Python's convention (`Solution`, `LRUCache`): what calling it returns
    is an instance the test built, whose methods the test calls on purpose. Decided on the
    test's text alone, never on what the response defines."""
    return name[:1].isupper() and not name.isupper()


class TestClasses:
    """The classes whose instances cross as data: the prelude's helper classes and those the
    test defines (looked up in its namespace when asked)."""

    def __init__(self, trust, namespace, base):
        self.trust, self.namespace, self.base = trust, namespace, base
        self.cached, self.cached_size = None, -1

    def own(self):
        # Asked on every message: rescanned only when the test bound new names.
        if len(self.namespace) == self.cached_size:
            return self.cached
        found = dict(self.trust.helper_classes)
        for name, value in dict.items(self.namespace):
            if (isinstance(value, type) and not issubclass(value, BaseException) and value.__module__ == "__main__"
                    and self.base.get(name) is not value):
                found[name] = value
        self.cached, self.cached_size = found, len(self.namespace)
        return found

    def __contains__(self, name):
        return name in self.own()

    def __iter__(self):
        return iter(self.own())

    def get(self, name):
        return self.own().get(name)


class TestNamespace(dict):
    """The test's globals. A name the test does not bind and the prelude does not either is
    looked up here on first use: the solution's (a stand-in), or a conventional module alias
    (`np`, `pd`: the referee's own numpy and pandas, as the reference preludes bind them). Names
    of builtins are never the solution's: `__missing__` is asked before builtins are, so it
    refuses them."""

    def __missing__(self, name):
        module = CONVENTIONAL_MODULES.get(name)
        if module is not None:
            value = __import__(module)
            self[name] = value
            return value
        solution = dict.get(self, "__rlvr_solution__")
        if solution is not None and name not in solution.trust.builtins:
            value = solution.lookup(name)
            if value is not None:
                return value
        raise KeyError(name)


class SolutionNames:
    """What the child said its module defines, turned into stand-ins on first use."""

    def __init__(self, session, trust, names, namespace):
        self.session, self.trust, self.names, self.namespace = session, trust, names, namespace

    def lookup(self, name):
        described = self.names.get(name)
        if type(described) is not list or not described:
            return None
        kind = described[0]
        if kind == "callable" and len(described) == 3 and type(described[1]) is dict:
            value = self.stand_in(name, described)
        elif kind == "module" and len(described) == 2 and type(described[1]) is str:
            try:
                value = __import__(described[1], fromlist=["*"])
            except Exception:
                return None
        elif kind == "value":
            # Read when the test reads it: the solution may change it between calls.
            return self.session.request({"t": "global", "n": name}, returned=not class_like(name))
        else:
            raise self.session.fail(f"the solution described {name!r} in a way no child does")
        self.namespace[name] = value
        return value

    def stand_in(self, name, described):
        atom, types_part = described[1], described[2]
        try:
            value = self.session.decode(dict(types_part, tab=[]), [atom], returned=False)[0]
        except Malformed as error:
            raise self.session.fail(f"the solution's names are malformed: {error}") from None
        if not isinstance(value, SolutionObject):
            raise self.session.fail(f"the solution's {name!r} is not a handle")
        if class_like(name):
            self.session.constructors.add(value._rlvr_number)
        return value


class Channel:
    """Messages to and from the solution's child, relayed by the engine on the referee's
    own pipes: `{"op": "send", "size"}` + JSON out, `{"op": "message", "size"}` + JSON or
    `{"op": "ended", "reason"}` in."""

    def send(self, message):
        data = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8", "surrogatepass")
        write_frame({"op": "send", "size": len(data)}, data)

    def receive(self):
        header = read_frame()
        operation = header.get("op")
        if operation == "message":
            data = read_exact(REQUEST_FD, header["size"])
            try:
                return json.loads(data.decode("utf-8", "surrogatepass"))
            except (ValueError, RecursionError, MemoryError):
                raise SolutionEnded("a message from the solution is not JSON") from None
        if operation == "ended":
            raise SolutionEnded(str(header.get("reason", "the solution's process ended")))
        raise SolutionEnded(f"the engine sent {operation!r} during a test")


class Job:
    """A job's tests, compiled once."""

    def __init__(self, base, trust, tests):
        self.base, self.trust = base, trust
        self.tests = []
        for text in tests:
            try:
                tree = ast.parse(text, "<test>")
                self.tests.append((compile(tree, "<test>", "exec", dont_inherit=True), entry_point(tree, trust)))
            except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as error:
                self.tests.append((None, f"{type(error).__name__}: {error}"))

    def run(self, index):
        """Runs test `index` against the child on the channel; returns the verdict frame."""
        code, entry = self.tests[index]
        if code is None:
            return {"outcome": "error", "detail": f"the test does not compile: {entry}"}
        channel = Channel()
        namespace = TestNamespace(self.base)
        session = LiveSession(channel, TestClasses(self.trust, namespace, self.base))
        outcome, detail = "error", ""
        try:
            ready = session.receive()
            names = ready.get("names") if ready.get("t") == "ready" else None
            if type(names) is not dict:
                raise session.fail("the solution's first message is not the list of its names")
            solution = SolutionNames(session, self.trust, names, namespace)
            dict.__setitem__(namespace, "__rlvr_solution__", solution)
            if entry in self.trust.imported:
                # `assert gcd(4, 6) == 2` asks for the solution's gcd, never the prelude's.
                stand_in = solution.lookup(entry) if entry in names else None
                namespace[entry] = stand_in if stand_in is not None else MissingName(entry)
            exec(code, namespace)
            outcome = "pass"
        except AssertionError as error:
            outcome, detail = "fail", assertion_detail(error)
        except NotData as why:
            outcome, detail = "fail", str(why)
        except SolutionEnded as ended:
            outcome, detail = "ended", str(ended)
        except SolutionError as error:
            detail = f"the solution raised {error}"
        except BaseException as error:
            detail = f"{type(error).__name__}: {exception_text(error)}"
        return {"outcome": outcome, "detail": detail[:1000], "untrusted_comparisons": session.untrusted_comparisons}


def assertion_detail(error):
    message = exception_text(error)
    return "assertion failed" + (f": {message[:200]}" if message else "")


def exception_text(error):
    try:
        return str(error)[:500]
    except BaseException:
        return ""

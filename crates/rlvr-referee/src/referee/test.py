# One job's tests, run here whole: each in a fresh namespace made of the prelude's names, the
# test's own, and stand-ins for what the solution defines (resolved when the test first reads
# them). The verdict is the test's: it passes when its code runs to the end.

import ast
import builtins
import json
import sys
import types

from .codec import CODEC_STANDARD_MODULES, Malformed, named_builtin
from .live import Forged, LiveSession, SolutionEnded, SolutionError, exception_text
from .protocol import REQUEST_FD, read_exact, read_frame, write_frame
from .stand_ins import MissingName, NotData, SolutionObject


CONVENTIONAL_MODULES = {"np": "numpy", "pd": "pandas"}


# A name the solution defines that is also a builtin or a name the prelude imports is the
# solution's where the test applies it to its own values and the referee's where the test
# applies it to something computed: each such use site is rewritten to one of two hidden names
# (one leading underscore: a class body would mangle two).
SOLUTION_SITE = "_rlvr_solution_site_"
REFEREE_SITE = "_rlvr_referee_site_"
# What every read of a global in a test's class body is rewritten to call (`NameSites`).
CLASS_BODY_NAME = "_rlvr_class_body_name_"
# `co_flags` of a function's code (a class body's code lacks it).
CO_OPTIMIZED = 0x1
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
               ast.GeneratorExp)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Builtins whose result, over the test's own values, is the test's own values again.
LOOP_BUILTINS = frozenset(("range", "enumerate", "zip", "reversed", "sorted", "list", "tuple", "set", "iter"))


class Trust:
    """What the prelude binds, by kind: modules and helpers (always the referee's), imported
    names (the solution's where it defines them, per use site), and the helper classes values
    may be decoded into."""

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
        # Names that are never the solution's: the judge's tools.
        self.reserved = self.modules | self.helpers | set(CONVENTIONAL_MODULES)
        # Names whose use sites are decided one by one.
        self.shared = {name for name in self.builtins | self.imported if not name.startswith("__")} - self.reserved


def scope_bindings(node):
    """`(bound, declared global)`: the names a function, lambda, comprehension or module binds
    in its own scope (nested functions' and classes' bodies excluded)."""
    bound, declared = set(), set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = node.args
        for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg,
                                                                                          arguments.kwarg]:
            if argument is not None:
                bound.add(argument.arg)
        pending = list(node.body) if isinstance(node.body, list) else [node.body]
    elif isinstance(node, COMPREHENSIONS):
        pending = []
        for generator in node.generators:
            pending.append(generator.target)
            pending.extend(generator.ifs)
        pending.extend([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])
        pending.extend(generator.iter for generator in node.generators[1:])
    else:
        pending = list(node.body)
    while pending:
        child = pending.pop()
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            bound.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(child.name)
            pending.extend(child.decorator_list)
            if not isinstance(child, ast.ClassDef):
                pending.extend(child.args.defaults + [d for d in child.args.kw_defaults if d is not None])
            else:
                pending.extend(child.bases)
            continue
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            for alias in child.names:
                if alias.name == "*":
                    module = import_for_names(child.module)
                    bound.update(name for name in dir(module) if not name.startswith("_"))
                else:
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(child, ast.ExceptHandler) and child.name:
            bound.add(child.name)
        elif isinstance(child, ast.Global):
            declared.update(child.names)
        elif isinstance(child, ast.Nonlocal):
            pass
        if isinstance(child, SCOPE_NODES):
            # Its first iterable is evaluated here; its body is its own scope.
            if isinstance(child, COMPREHENSIONS):
                pending.append(child.generators[0].iter)
            elif isinstance(child, ast.Lambda):
                pending.extend(child.args.defaults + [d for d in child.args.kw_defaults if d is not None])
            continue
        pending.extend(ast.iter_child_nodes(child))
    return bound - declared, declared


def import_for_names(name):
    """A module a test star-imports, for the names it binds (only the pure standard ones)."""
    if name in CODEC_STANDARD_MODULES:
        try:
            return __import__(name, fromlist=["*"])
        except Exception:
            pass
    return None


def tainted_names(tree, loop_builtins=frozenset()):
    """Names bound, anywhere in the test, from something computed: a call's result, a function's
    parameter, or a name bound so (a small, flow-insensitive taint analysis). A loop over the
    referee's own builtin applied to the test's values (`for x in range(1, 5)`: a loop iterable
    is always the referee's) binds the test's values."""
    tainted = set()
    bindings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            tainted.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            tainted.add(node.name)
        elif isinstance(node, ast.Assign):
            bindings.append((node.targets, node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            bindings.append(([node.target], node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            iterable = node.iter
            if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                    and iterable.func.id in loop_builtins):
                iterable = ast.Tuple([*iterable.args, *(keyword.value for keyword in iterable.keywords)], ast.Load())
            bindings.append(([node.target], iterable))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bindings.append(([node.optional_vars], node.context_expr))
    pending = [(targets, value, {child.id for target in targets for child in ast.walk(target)
                                 if isinstance(child, ast.Name)}) for targets, value in bindings]
    changed = True
    while changed:
        changed = False
        for _, value, names in pending:
            if not names <= tainted and computed(value, tainted):
                tainted |= names
                changed = True
    return tainted


def computed(expression, tainted):
    """Whether an expression holds a call or a tainted name."""
    for node in ast.walk(expression):
        if isinstance(node, ast.Call) or isinstance(node, ast.Name) and node.id in tainted:
            return True
    return False


class NameSites(ast.NodeTransformer):
    """Rewrites each use of a shared name (a builtin's or a prelude import's) that reads the
    global: to the solution's hidden name where the test applies it to its own values or
    passes it bare, to the referee's where a call's arguments hold something computed, or where
    it makes the iterable a loop of the test walks."""

    def __init__(self, trust, module_bound, tainted):
        self.shared = trust.shared - module_bound
        self.tainted = tainted
        self.scopes = []  # (bound names, is a class body)
        self.used = set()

    def resolves_to_global(self, name):
        for position, (bound, is_class) in enumerate(reversed(self.scopes)):
            if name in bound and (not is_class or position == 0):
                return False
        return True

    def site(self, node, referee):
        name = node.id
        if node.id not in self.shared or not isinstance(node.ctx, ast.Load) or not self.resolves_to_global(name):
            return node
        self.used.add(name)
        return ast.copy_location(ast.Name((REFEREE_SITE if referee else SOLUTION_SITE) + name, ast.Load()), node)

    def visit_Name(self, node):
        node = self.site(node, referee=False)
        if isinstance(node.ctx, ast.Load) and self.scopes and self.scopes[-1][1] and not any(
                node.id in bound for bound, is_class in self.scopes[:-1] if not is_class):
            # A class body reads its globals without the namespace's `__missing__` (CPython's
            # LOAD_NAME): the read goes through the namespace's own lookup instead.
            return ast.copy_location(ast.Call(ast.Name(CLASS_BODY_NAME, ast.Load()), [ast.Constant(node.id)], []), node)
        return node

    def visit_Call(self, node):
        function = node.func
        if isinstance(function, ast.Name):
            arguments = list(node.args) + [keyword.value for keyword in node.keywords]
            referee = any(computed(argument, self.tainted) for argument in arguments)
            node.func = self.site(function, referee)
        return self.generic_visit(node)

    def loop_iterable(self, iterable):
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            iterable.func = self.site(iterable.func, referee=True)

    def visit_For(self, node):
        self.loop_iterable(node.iter)
        return self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_all(self, nodes):
        return [self.visit(node) for node in nodes]

    def inside(self, bound, is_class, visit):
        self.scopes.append((bound, is_class))
        try:
            visit()
        finally:
            self.scopes.pop()

    def visit_arguments_outside(self, arguments):
        """Defaults and annotations, which Python evaluates in the enclosing scope."""
        arguments.defaults = self.visit_all(arguments.defaults)
        arguments.kw_defaults = [None if default is None else self.visit(default) for default in arguments.kw_defaults]
        for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + [arguments.vararg,
                                                                                          arguments.kwarg]:
            if argument is not None and argument.annotation is not None:
                argument.annotation = self.visit(argument.annotation)

    def visit_FunctionDef(self, node):
        node.decorator_list = self.visit_all(node.decorator_list)
        self.visit_arguments_outside(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)

        def body():
            node.body = self.visit_all(node.body)

        self.inside(scope_bindings(node)[0], False, body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit_arguments_outside(node.args)

        def body():
            node.body = self.visit(node.body)

        self.inside(scope_bindings(node)[0], False, body)
        return node

    def visit_comprehension_scope(self, node):
        # The first iterable is evaluated in the enclosing scope, the rest in the comprehension's.
        first = node.generators[0]
        self.loop_iterable(first.iter)
        first.iter = self.visit(first.iter)

        def body():
            for position, generator in enumerate(node.generators):
                if position:
                    self.loop_iterable(generator.iter)
                    generator.iter = self.visit(generator.iter)
                generator.target = self.visit(generator.target)
                generator.ifs = self.visit_all(generator.ifs)
            if isinstance(node, ast.DictComp):
                node.key, node.value = self.visit(node.key), self.visit(node.value)
            else:
                node.elt = self.visit(node.elt)

        self.inside(scope_bindings(node)[0], False, body)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_comprehension_scope

    def visit_ClassDef(self, node):
        node.decorator_list = self.visit_all(node.decorator_list)
        node.bases = self.visit_all(node.bases)
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)

        def body():
            node.body = self.visit_all(node.body)

        self.inside(class_bindings(node), True, body)
        return node


def class_bindings(node):
    return scope_bindings(ast.Module(body=node.body, type_ignores=[]))[0]


def rewrite_names(tree, trust):
    """The test with each use site of a shared name decided; returns the shared names used."""
    module_bound, declared = scope_bindings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            declared.update(node.names)
    loop_builtins = (trust.shared - module_bound - declared) & LOOP_BUILTINS
    sites = NameSites(trust, module_bound | declared, tainted_names(tree, loop_builtins))
    sites.visit(tree)
    ast.fix_missing_locations(tree)
    return sites.used


def names_in(code):
    """`(names, has a class body)` of a compiled test: every name it reads or binds as a global,
    or as an attribute (`co_names` of its code and of every code nested in it), and whether any
    nested code is a class body (not optimized: its reads are LOAD_NAME). Each use site
    `rewrite_names` would decide compiles to a global load, so a test whose names miss every
    shared name and that defines no class has none."""
    names, class_body, pending = set(), False, [code]
    while pending:
        code = pending.pop()
        names.update(code.co_names)
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                class_body = class_body or not constant.co_flags & CO_OPTIMIZED
                pending.append(constant)
    return names, class_body


class FirstFreeName(ast.NodeVisitor):
    """The first name, in reading order, that the test reads without binding it and that is
    neither a builtin nor one of the judge's tools: the function the prompt asked for."""

    def __init__(self, own, trust):
        self.own, self.trust, self.found = own, trust, None

    def visit_Name(self, node):
        name = node.id
        if name.startswith(SOLUTION_SITE):
            name = name[len(SOLUTION_SITE):]
            if name in self.trust.builtins:
                return
        elif name.startswith(REFEREE_SITE) or name in self.trust.builtins:
            return
        if (self.found is None and isinstance(node.ctx, ast.Load) and name not in self.own
                and name not in self.trust.reserved):
            self.found = name


def entry_point(tree, trust):
    """The test's entry point (after `rewrite_names`). When the prelude imports a name of that
    spelling (`gcd`), the test asks for the solution's at its solution sites: a solution that
    defines none fails there rather than borrowing the prelude's."""
    finder = FirstFreeName(bound_names(tree), trust)
    finder.visit(tree)
    return finder.found


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
    """The test's globals. A name the test does not bind is looked up here on first use (before
    builtins are): a hidden use-site name (the solution's or the referee's version of a shared
    name), a conventional module alias (`np`, `pd`: the referee's own numpy and pandas, as the
    reference preludes bind them), or a name the solution defines (a stand-in, its standard
    object, or its value read when the test reads it). Every one is resolved by name alone,
    whatever the order of calls, as exec(prelude + solution + test) would bind it."""

    def __missing__(self, name):
        module = CONVENTIONAL_MODULES.get(name)
        if module is not None:
            value = __import__(module)
            self[name] = value
            return value
        solution = dict.get(self, "__rlvr_solution__")
        if name.startswith(REFEREE_SITE):
            found = self[name] = self.referees(name[len(REFEREE_SITE):])
            return found
        if name.startswith(SOLUTION_SITE):
            shared = name[len(SOLUTION_SITE):]
            if solution is not None and shared in solution.names:
                found, keep = solution.lookup(shared)
                if found is not NOT_FOUND:
                    if keep:
                        self[name] = found
                    return found
            if solution is not None and shared == solution.entry and shared in solution.trust.imported:
                # `assert gcd(4, 6) == 2` asks for the solution's gcd, never the prelude's.
                found = self[name] = MissingName(shared)
                return found
            found = self[name] = self.referees(shared)
            return found
        if solution is not None and name not in solution.trust.reserved:
            found, _ = solution.lookup(name)
            if found is not NOT_FOUND:
                return found
        raise KeyError(name)

    def class_body_name(self, name):
        """A name a class body of the test reads, as Python reads it there: the class's own
        namespace first, then the test's globals (with the lookups above), then builtins."""
        local = sys._getframe(1).f_locals
        if name in local:
            return local[name]
        try:
            return self[name]
        except KeyError:
            return self.referees(name)

    def referees(self, name):
        base = dict.get(self, "__rlvr_base__")
        if name in base:
            return base[name]
        try:
            return getattr(builtins, name)
        except AttributeError:
            raise NameError(f"name {name!r} is not defined") from None


NOT_FOUND = object()


class SolutionNames:
    """What the child said its module defines, turned into the referee's objects on first use:
    stand-ins for its functions and classes, the referee's own copy of a standard object it
    imported, classes made here for its exception classes."""

    def __init__(self, session, trust, names, entry):
        self.session, self.trust, self.names, self.entry = session, trust, names, entry
        self.resolved = {}

    def lookup(self, name):
        """`(value, keep)`: the solution's `name` (`NOT_FOUND` when it defines none); `keep`
        when the namespace may keep it (a value is read again each time the test reads it)."""
        if name in self.resolved:
            return self.resolved[name], True
        described = self.names.get(name)
        if type(described) is not list or not described:
            return NOT_FOUND, False
        kind = described[0]
        if kind in ("callable", "class", "std") and len(described) >= 3 and type(described[1]) is dict:
            value = self.standard(described) if kind == "std" else None
            if value is None:
                value = self.stand_in(name, described)
                if kind == "class":
                    self.session.constructors.add(value._rlvr_number)
        elif kind == "exception" and len(described) == 3 and type(described[2]) is dict:
            try:
                value = self.session.decode(described[2], [described[1]], True)[0]
            except Malformed as error:
                raise self.session.forged(f"the solution's names are malformed: {error}") from None
            if not (isinstance(value, type) and issubclass(value, BaseException)):
                raise self.session.forged(f"the solution's {name!r} is not an exception class")
        elif kind == "module" and len(described) == 2 and type(described[1]) is str:
            if described[1] not in CODEC_STANDARD_MODULES:
                # A module the referee does not take from a child (os, sys...): the child's.
                return self.session.request({"t": "global", "n": name}), False
            try:
                value = __import__(described[1])
            except Exception:
                return self.session.request({"t": "global", "n": name}), False
        elif kind == "value":
            # Read when the test reads it: the solution may change it between calls.
            return self.session.request({"t": "global", "n": name}), False
        else:
            raise self.session.forged(f"the solution described {name!r} in a way no child does")
        self.resolved[name] = value
        return value, True

    def standard(self, described):
        """The referee's own copy of a standard object the child says the name holds: taken only
        from the pure modules, never a callable that touches the process."""
        if len(described) != 5:
            return None
        try:
            return named_builtin(f"{described[3]}.{described[4]}") if type(described[3]) is str else None
        except Malformed:
            return None

    def stand_in(self, name, described):
        atom, types_part = described[1], described[2]
        try:
            value = self.session.decode(dict(types_part, tab=[]), [atom], returned=False)[0]
        except Malformed as error:
            raise self.session.forged(f"the solution's names are malformed: {error}") from None
        if not isinstance(value, SolutionObject):
            raise self.session.forged(f"the solution's {name!r} is not a handle")
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
                raise Forged("a message from the solution is not JSON") from None
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
                code = compile(text, "<test>", "exec", dont_inherit=True)
                names, class_body = names_in(code)
                if not class_body and names.isdisjoint(trust.shared):
                    # No shared name anywhere (not even as an attribute) and no class body: no
                    # use site to decide, so the test runs as written, and needs no entry point
                    # (only a solution site asks for one). Most tests, at a fraction of the
                    # analysis's cost.
                    self.tests.append((code, None))
                    continue
                tree = ast.parse(text, "<test>")
                rewrite_names(tree, trust)
                self.tests.append((compile(tree, "<test>", "exec", dont_inherit=True), entry_point(tree, trust)))
            except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as error:
                self.tests.append((None, f"{type(error).__name__}: {error}"))
            except Exception as error:
                # The referee's own failure to prepare a test: that test is an error, never a pass.
                self.tests.append((None, f"the referee could not prepare it ({type(error).__name__}: {error})"))

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
                raise session.forged("the solution's first message is not the list of its names")
            solution = SolutionNames(session, self.trust, names, entry)
            dict.__setitem__(namespace, "__rlvr_solution__", solution)
            dict.__setitem__(namespace, "__rlvr_base__", self.base)
            dict.__setitem__(namespace, CLASS_BODY_NAME, namespace.class_body_name)
            for name in names:
                # A prelude import the solution redefines is the solution's where the test
                # reads it plainly (a name the test binds itself, at module level).
                if type(name) is str and name in self.trust.imported and name not in self.trust.reserved:
                    dict.pop(namespace, name, None)
            exec(code, namespace)
            if session.broken is not None:
                # The test caught what ended the exchange (a bare `except:`): still not a pass.
                raise SolutionEnded(session.broken)
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
        return {"outcome": outcome, "detail": detail[:1000], "untrusted_comparisons": session.untrusted_comparisons,
                "forged": session.forgery}


def assertion_detail(error):
    message = exception_text(error)
    return "assertion failed" + (f": {message[:200]}" if message else "")



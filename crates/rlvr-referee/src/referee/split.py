# Splitting a functional test with `ast`: which calls are the solution's (they run next to the
# solution, as probes) and which parts are the test's (they stay here, with the expected side).
#
# A name the test uses is, in this order:
#   the test's own   bound by the test's statements: evaluated here (Python runs the test
#                    after the solution, so the test's binding wins);
#   trusted          a builtin, a prelude module (`math`) or a prelude helper (`ListNode`,
#                    `is_same_tree`): always evaluated here, whatever the solution redefines;
#   the solution's   bound by the solution's statements, or bound nowhere we can see (it can only
#                    come from the solution at run time), or the test's entry point;
#   trusted          otherwise: a name the prelude imports (`gcd`, `sqrt`) the solution does not
#                    bind, or that is not the entry point (a solution's `sqrt` does not move an
#                    expected side's `sqrt(2)` into the child).
# The entry point is the first call in source order whose function is not trusted by the first
# two rules: `assert gcd(4, 6) == 2` calls the solution's `gcd` (a prompt asked for it), and
# the child then refuses the prelude's own `gcd` (the probe `requires` it to be the solution's).
#
# A probe is a maximal solution call: a call whose function is rooted at a solution name
# (`f(x)`, `Solution().g(x)`), a comprehension whose element is a probe (`[f(x) for x in data]`),
# `map(f, data)`, or a solution name read as a value. Only the call runs next to the solution:
# `list(f(x))`, `sorted(f(x))`, `any(f(x))` run here on its plain-data value (a generator's items
# come back as an iterator), so no method of the solution's objects ever answers for the test. Anything else that mentions a solution name (a lambda, a comparison inside a
# comprehension, a solution call inside an `if`) cannot be split: the test then runs whole next
# to the solution, as before, and is counted as unsplit. Whether a test is split depends on the
# test alone, never on the response: a response cannot choose the weaker path.

# Module aliases a test may use without importing them (the references' preludes bind them).
CONVENTIONAL_MODULES = {"np": "numpy", "pd": "pandas"}
SPLIT_STATEMENTS = (ast.Assert, ast.Expr, ast.Assign, ast.AnnAssign)
SPLIT_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
PROBE_FUNCTION = "__rlvr_probe__"


class Unsplittable(Exception):
    """A test form the referee does not split (its message says why)."""


def module_bindings(statements):
    """Names the statements bind in their module's scope, and the modules they star-import."""
    names, stars = set(), set()
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            stack.extend(node.decorator_list)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Global):
                    names.update(inner.names)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, SPLIT_COMPREHENSIONS):
            for inner in ast.walk(node):
                if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
                    names.add(inner.target.id)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    stars.add(node.module or "")
                else:
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        stack.extend(ast.iter_child_nodes(node))
    return names, stars


class Trust:
    """What the prelude binds, by kind: modules and helpers (always trusted), imported names
    (trusted unless the solution's), and the helper classes values may be decoded into."""

    def __init__(self, prelude_source, namespace):
        self.modules, self.helpers, self.imported = set(), set(), {}
        for node in ast.parse(prelude_source).body:
            bound = {}
            if isinstance(node, ast.Import):
                bound = {(alias.asname or alias.name.split(".")[0]): "module" for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    bound[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound = {node.name: "helper"}
            for name, kind in bound.items():
                self.modules.discard(name)
                self.helpers.discard(name)
                self.imported.pop(name, None)
                if kind == "module":
                    self.modules.add(name)
                elif kind == "helper":
                    self.helpers.add(name)
                else:
                    self.imported[name] = kind
        # The aliases the reference profiles' preludes import (`np`, `pd`): a test that relies on
        # them gets the referee's own modules, never an object the solution names so.
        for alias in CONVENTIONAL_MODULES:
            if alias not in self.helpers and alias not in self.imported:
                self.modules.add(alias)
        self.builtins = frozenset(dir(builtins))
        self.helper_classes = {name: namespace[name] for name in self.helpers if isinstance(namespace.get(name), type)}


# What the referee's parse of a solution may take. `ast` costs up to ~0.9 KB of memory per byte of
# dense code (nothing for comments), and CPython 3.11 parses a long f-string in quadratic time:
# a padded response could otherwise exhaust the referee or outlast its `open` and void its own
# score. The parse runs in a forked process bounded in both.
SOLUTION_PARSE_MEMORY = 256 << 20
SOLUTION_PARSE_SECONDS = 5.0


def solution_bindings(source):
    """`(names, stars, refusal)` of a solution's module scope, parsed in a forked process with
    SOLUTION_PARSE_MEMORY more address space and SOLUTION_PARSE_SECONDS of wall time. `names`
    is None when the source does not parse or the parse went past a bound (then `refusal`
    says which)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            import resource

            with open("/proc/self/statm") as handle:
                used = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            bound = used + SOLUTION_PARSE_MEMORY
            resource.setrlimit(resource.RLIMIT_AS, (bound if hard == resource.RLIM_INFINITY else min(bound, hard),
                                                    hard))
            try:
                names, stars = module_bindings(ast.parse(source).body)
                answer = {"names": sorted(names), "stars": sorted(stars)}
            except MemoryError:
                answer = {"refusal": f"the solution's syntax tree needs more than {SOLUTION_PARSE_MEMORY >> 20} MiB,"
                                     " the most the referee gives it"}
            except (SyntaxError, ValueError, RecursionError, OverflowError):
                answer = {"names": None}
            write_all(write_end, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + SOLUTION_PARSE_SECONDS
    poller = select.poll()
    poller.register(read_end, select.POLLIN)
    finished = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poller.poll(remaining * 1000):
            break
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            finished = True
            break
        chunks.append(chunk)
    os.close(read_end)
    if not finished:
        os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    if not finished:
        return None, set(), (f"the referee could not parse the solution within {SOLUTION_PARSE_SECONDS:g} s")
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        return None, set(), "the referee's parse of the solution failed"
    if "refusal" in answer:
        return None, set(), answer["refusal"]
    if answer.get("names") is None:
        return None, set(), None
    return set(answer["names"]), set(answer["stars"]), None


class SolutionNames:
    """The names a solution binds statically (`names` is `None` when its source does not parse
    or its parse went past the referee's bounds: then it binds none we can vouch for, every
    split test fails, and for the latter `refusal` says why)."""

    def __init__(self, source, trust):
        names, stars, self.refusal = solution_bindings(source)
        if names is not None:
            for name, (module, _) in trust.imported.items():
                if module in stars:
                    names.add(name)
        self.names = names

    def binds(self, name):
        return self.names is not None and name in self.names




def parameters(arguments):
    names = {argument.arg for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names.update(argument.arg for argument in (arguments.vararg, arguments.kwarg) if argument is not None)
    return names


def stored_names(nodes):
    return {inner.id for node in nodes for inner in ast.walk(node)
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)}


def scoped_walk(root, outer_local=frozenset()):
    """Every node under `root` with the names local to where it sits (a function's parameters
    and assignments, a comprehension's targets) and whether it sits in a function or class body
    (code that does not run where it is written)."""
    stack = [(root, frozenset(outer_local), False)]
    while stack:
        node, local, deferred = stack.pop()
        yield node, local, deferred
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            outer = list(arguments.defaults) + [default for default in arguments.kw_defaults if default is not None]
            body = node.body if isinstance(node.body, list) else [node.body]
            if not isinstance(node, ast.Lambda):
                outer.extend(node.decorator_list)
                if node.returns is not None:
                    outer.append(node.returns)
            inner = local | parameters(arguments) | stored_names(body)
            stack.extend((child, local, deferred) for child in outer)
            stack.extend((child, inner, True) for child in body)
        elif isinstance(node, ast.ClassDef):
            stack.extend((child, local, deferred) for child in node.bases + node.decorator_list
                         + [keyword.value for keyword in node.keywords])
            inner = local | stored_names(node.body)
            stack.extend((child, inner, True) for child in node.body)
        elif isinstance(node, SPLIT_COMPREHENSIONS):
            inner = local | stored_names([generator.target for generator in node.generators])
            stack.extend((child, inner, deferred) for child in ast.iter_child_nodes(node))
        else:
            stack.extend((child, local, deferred) for child in ast.iter_child_nodes(node))


def root_name(node):
    """The name a call's function hangs from: `f`, `Solution` in `Solution().g`, `m` in `m.f`."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def class_like(name):
    """`Solution`, `Codec`: a CapWords name, by Python's naming convention a class (never
    `GREETING` or `get_greeting`). Decided on the test's text alone."""
    return name[:1].isupper() and any(character.islower() for character in name)


def callable_root(function):
    """The solution name a called function hangs from when the whole call is the solution's:
    `f` in `f(x)`; for a method, only on a class-like name (`Solution.g(x)`) or on an instance
    a class-like name builds with no arguments (LeetCode's `Solution().g(x)`). `None` for
    anything else: a method called on a value (`greet(x).startswith(y)`, `GREETING.lower()`,
    `get_list().count(3)`) is the test's, and runs in the referee on that value's plain data.
    Decided on the test's text alone, never on what the response defines."""
    node = function
    if isinstance(node, ast.Name):
        return node.id
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id if class_like(node.id) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and class_like(node.func.id)
            and not node.args and not node.keywords):
        return node.func.id
    return None


class Classifier:
    """Decides, for one test, whose each name is (see the top of this file)."""

    def __init__(self, trust, solution, test_names, entry, strict):
        self.trust, self.solution, self.test_names, self.entry = trust, solution, test_names, entry
        self.strict = strict

    def is_solution(self, name):
        trust = self.trust
        if name in self.test_names or name in trust.builtins or name in trust.modules or name in trust.helpers:
            return False
        if name in trust.imported:
            return name == self.entry
        # A name neither the test, the prelude nor the solution binds: it can only come from the
        # solution at run time (`globals()[...]`, `exec`), which a solution must not use to
        # supply the test's comparator (`np.allclose` with `np` its own). Strictly it is
        # evaluated here, where it is unbound (NameError: the test fails); PreparedTest says
        # when the lenient reading (the solution's) is used to keep a form split.
        return self.solution.binds(name) or not self.strict

    def always_trusted(self, name):
        trust = self.trust
        return name in self.test_names or name in trust.builtins or name in trust.modules or name in trust.helpers

    def mentions_solution(self, node, outer_local=frozenset()):
        return any(isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load) and inner.id not in local
                   and self.is_solution(inner.id) for inner, local, _ in scoped_walk(node, outer_local))


def find_entry(statements, trust, test_names):
    """The first call in source order, outside function bodies, whose function is not always
    trusted, preferring one the prelude does not import (`f` in `assert sqrt(f(4)) == 2`)."""
    calls = []
    for statement in statements:
        for node, local, deferred in scoped_walk(statement):
            if isinstance(node, ast.Call) and not deferred:
                name = root_name(node.func)
                if name is not None and name not in local and not (
                        name in test_names or name in trust.builtins or name in trust.modules
                        or name in trust.helpers):
                    calls.append((node.lineno, node.col_offset, name))
    calls.sort()
    for _, _, name in calls:
        if name not in trust.imported:
            return name
    return calls[0][2] if calls else None


class Probe:
    """A solution call cut out of a test. `node` is the call as the child evaluates it (its
    arguments that read the test's names replaced by slots), `original` the test's own node,
    `arguments` the `(slot, expression, as_list)` the referee evaluates and sends in their
    place, and `inputs` the test's names the child needs as they are (bare-name arguments,
    which a solution may change in place)."""

    def __init__(self, node, original, source, as_iterator, requires, arguments):
        self.node, self.original, self.source = node, original, source
        self.as_iterator, self.requires, self.arguments = as_iterator, requires, arguments
        self.assign = None
        self.inputs = []


class RenameNames(ast.NodeTransformer):
    def __init__(self, renamed):
        self.renamed = renamed

    def visit_Name(self, node):
        if node.id in self.renamed:
            return ast.copy_location(ast.Name(id=self.renamed[node.id], ctx=node.ctx), node)
        return node


class ArgumentDetacher(ast.NodeTransformer):
    """See ProbeCutter.detach: slots in place of the largest parts of an argument that read
    only the test's values, scopes respected (a comprehension's or a lambda's own names)."""

    def __init__(self, cutter, arguments):
        self.cutter, self.arguments = cutter, arguments
        self.local = frozenset()

    def visit(self, node):
        cutter, local = self.cutter, self.local
        if isinstance(node, ast.Starred):
            if isinstance(node.value, ast.Name) and cutter.reads_test(node.value):
                node.value = cutter.slot(self.arguments, node.value, as_list=True)
                return node
            node.value = self.visit(node.value)
            return node
        if (isinstance(node, ast.expr) and not isinstance(node, ast.Name) and not free_names(node) & local
                and not cutter.classifier.mentions_solution(node, local) and cutter.reads_test(node)):
            return cutter.slot(self.arguments, node)
        if isinstance(node, ast.Call):
            # A function is not a value to send (`copy.deepcopy(result)`: the child calls the
            # module's function itself); its arguments are.
            node.args = [self.visit(argument) for argument in node.args]
            for keyword in node.keywords:
                keyword.value = self.visit(keyword.value)
            return node
        if isinstance(node, SPLIT_COMPREHENSIONS):
            self.local = local | stored_names([generator.target for generator in node.generators])
        elif isinstance(node, ast.Lambda):
            self.local = local | parameters(node.args)
        try:
            return self.generic_visit(node)
        finally:
            self.local = local


class ProbeCutter(ast.NodeTransformer):
    """Replaces each probe of an expression by `__rlvr_probe__(index)`."""

    def __init__(self, classifier, probes, split):
        self.classifier, self.probes, self.split = classifier, probes, split

    def probe_kind(self, node):
        """How `node` is a probe: "call", "iterator" (a lazy iterator the child turns into a list)
        or None."""
        classifier = self.classifier
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and classifier.is_solution(node.id):
            # A solution name read as a value (`assert ANSWER == 42`, `assert f is not None`):
            # its value comes back as data (a function as an opaque stand-in).
            return "call"
        if isinstance(node, ast.Call):
            name = callable_root(node.func)
            if name is not None and classifier.is_solution(name):
                return "call"
            # `map(f, data)`: the solution's function applied to the test's values; its results
            # come back one by one, as plain data. (Any other trusted function handed a solution
            # function, `filter(f, data)`, `sorted(data, key=f)`, would judge the solution's
            # values by their own methods next to the solution: there the function is a value.)
            if (isinstance(node.func, ast.Name) and node.func.id == "map" and classifier.always_trusted("map")
                    and not node.keywords and len(node.args) >= 2 and isinstance(node.args[0], ast.Name)
                    and classifier.is_solution(node.args[0].id)
                    and not any(classifier.mentions_solution(argument) for argument in node.args[1:])):
                return "iterator"
            return None
        if isinstance(node, SPLIT_COMPREHENSIONS):
            elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            local = frozenset(stored_names([generator.target for generator in node.generators]))
            generators_clean = not any(classifier.mentions_solution(part, local) for generator in node.generators
                                       for part in [generator.iter, *generator.ifs])
            if generators_clean and all(self.probe_kind(element) == "call"
                                        or not classifier.mentions_solution(element, local) for element in elements) \
                    and any(self.probe_kind(element) for element in elements):
                return "iterator" if isinstance(node, ast.GeneratorExp) else "call"
        return None

    def generic_visit(self, node):
        classifier = self.classifier
        if not classifier.mentions_solution(node):
            return node  # nothing of the solution's below (scopes respected: a lambda's own names)
        if isinstance(node, ast.expr):
            kind = self.probe_kind(node)
            if kind is not None:
                return self.cut(node, kind)
            if isinstance(node, ast.Lambda):
                raise Unsplittable("a lambda that uses the solution")
            if isinstance(node, SPLIT_COMPREHENSIONS):
                raise Unsplittable("a comprehension that checks the solution's results inside it")
            if isinstance(node, ast.NamedExpr):
                raise Unsplittable("an assignment expression around a solution call")
            if isinstance(node, ast.Call) and root_name(node.func) in classifier.test_names and any(
                    isinstance(argument, ast.Name) and classifier.is_solution(argument.id)
                    for argument in [*node.args, *(keyword.value for keyword in node.keywords)]):
                # `check(candidate)`: the test's code would call the solution's function itself.
                raise Unsplittable("the test hands the solution's function to its own code")
        return super().generic_visit(node)

    def reads_test(self, expression):
        """Whether an expression reads a value only the test holds (not one a solution call
        returned in the child)."""
        reads = free_names(expression)
        return bool(reads & self.classifier.test_names) and not reads & self.split.child_bound

    def slot(self, arguments, expression, as_list=False):
        name = f"__rlvr_arg_{self.split.slots}__"
        self.split.slots += 1
        arguments.append((name, expression, as_list))
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), expression)

    def detach(self, node, arguments):
        """Replaces each part of a solution call's arguments that reads the test's values by a
        slot, so that only values reach the child, never the test variable they come from
        (`case['input']` must not bring `case['expected']` along): every largest part that
        reads the test's names and neither the solution's nor a name a call bound in the child
        (`c['b']` in `acc + c['b']`, `case['items']` in `[g(v) for v in case['items']]`) is
        evaluated in the referee. A bare name is sent as it is (it is the whole argument, and a
        solution working in place is seen through it), except where only its items are the
        arguments (`f(*d)`, `map(f, d)`)."""
        if isinstance(node, SPLIT_COMPREHENSIONS):
            return self.detach_comprehension(node, arguments)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map":
            node.args[1:] = [self.slot(arguments, argument, as_list=True)
                             if self.reads_test(argument) and not self.classifier.mentions_solution(argument)
                             else ArgumentDetacher(self, arguments).visit(argument) for argument in node.args[1:]]
            return node
        if isinstance(node, ast.Call):
            detacher = ArgumentDetacher(self, arguments)
            node.args = [detacher.visit(argument) for argument in node.args]
            for keyword in node.keywords:
                keyword.value = detacher.visit(keyword.value)
        return node

    def detach_comprehension(self, node, arguments):
        """`[f(x) for x, _ in cases]`: the referee runs the loop and sends, per element, the
        call's arguments; the child runs `[f(*a, **k) for a, k in slot]`."""
        classifier = self.classifier
        if not self.reads_test(node):
            if free_names(node) & (classifier.test_names - self.split.child_bound):
                # `[g(base, x) for x, _ in cases]` with `base = f(1)`: the loop cannot run here.
                raise Unsplittable("a comprehension over both the test's values and a call's result")
            return node
        if isinstance(node, ast.DictComp):
            # Its keys would reach the child with the arguments (`{y: f(x) for x, y in cases}`).
            raise Unsplittable("a dict comprehension over the test's values")
        element = node.elt
        key = None
        local = frozenset(stored_names([generator.target for generator in node.generators]))
        if (not isinstance(element, ast.Call) or (key is not None and classifier.mentions_solution(key, local))
                or any(classifier.mentions_solution(part, local) for part in
                       [*element.args, *(keyword.value for keyword in element.keywords)])
                or free_names(element.func) & (local | classifier.test_names)):
            raise Unsplittable("a comprehension whose solution call cannot be separated from the test's values")
        positional = ast.Tuple(elts=list(element.args), ctx=ast.Load())
        named = ast.Dict(keys=[None if keyword.arg is None else ast.Constant(value=keyword.arg)
                               for keyword in element.keywords],
                         values=[keyword.value for keyword in element.keywords])
        parts = ([key] if key is not None else []) + [positional, named]
        table = ast.ListComp(elt=ast.Tuple(elts=parts, ctx=ast.Load()), generators=node.generators)
        slot = self.slot(arguments, ast.fix_missing_locations(ast.copy_location(table, node)))
        names = (["__rlvr_key__"] if key is not None else []) + ["__rlvr_positional__", "__rlvr_named__"]
        call = ast.Call(func=element.func, args=[ast.Starred(value=ast.Name(id="__rlvr_positional__", ctx=ast.Load()),
                                                             ctx=ast.Load())],
                        keywords=[ast.keyword(arg=None, value=ast.Name(id="__rlvr_named__", ctx=ast.Load()))])
        generator = ast.comprehension(target=ast.Tuple(elts=[ast.Name(id=name, ctx=ast.Store()) for name in names],
                                                       ctx=ast.Store()), iter=slot, ifs=[], is_async=0)
        if isinstance(node, ast.DictComp):
            rewritten = ast.DictComp(key=ast.Name(id="__rlvr_key__", ctx=ast.Load()), value=call, generators=[generator])
        else:
            rewritten = type(node)(elt=call, generators=[generator])
        return ast.fix_missing_locations(ast.copy_location(rewritten, node))

    def cut(self, node, kind):
        original = node
        arguments = []
        node = self.detach(node, arguments)
        source = ast.unparse(node)
        if kind == "iterator":
            if isinstance(node, ast.GeneratorExp):
                source = ast.unparse(ast.ListComp(elt=node.elt, generators=node.generators))
            else:
                source = f"list({source})"
        requires = []
        entry = self.classifier.entry
        if entry in self.classifier.trust.imported and not self.classifier.solution.binds(entry):
            if any(isinstance(inner, ast.Name) and inner.id == entry for inner in ast.walk(node)):
                module, attribute = self.classifier.trust.imported[entry]
                requires.append([entry, module, attribute])
        index = len(self.probes)
        self.probes.append(Probe(node, original, source, kind == "iterator", requires, arguments))
        call = ast.Call(func=ast.Name(id=PROBE_FUNCTION, ctx=ast.Load()), args=[ast.Constant(value=index)],
                        keywords=[])
        if kind == "iterator":
            call = ast.Call(func=ast.Name(id="iter", ctx=ast.Load()), args=[call], keywords=[])
        return ast.copy_location(call, node)


def free_names(node):
    """Names a probe reads that it does not bind itself (comprehension variables, lambda
    parameters)."""
    return {inner.id for inner, local, _ in scoped_walk(node)
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load) and inner.id not in local}


class Statement:
    """One statement of a test after its setup, as the referee replays it: `kind` is "plain"
    (no solution call; runs here when judging), "probe" (solution calls cut out; the rest runs
    here when judging), "setup" (inside a loop: runs here while preparing, once per iteration)
    or "loop"."""

    def __init__(self, kind, node, probes=(), body=(), assigns=None):
        self.kind, self.node, self.probes, self.body, self.assigns = kind, node, list(probes), list(body), assigns
        self.code = None
        self.reads = set()


class SplitTest:
    """One test, split: `setup` runs here before the child runs; `tail` holds the statements
    from the first one that calls the solution, each with its probes (solution calls, their
    inputs read from the test's own names) and the code that finishes it here. A top-level
    `for` over an iterable the test computes is unrolled: it runs here while preparing, and each
    iteration's calls become probes with that iteration's inputs."""

    def __init__(self, text, trust, solution, strict=True):
        try:
            self.source_tree = ast.parse(text)
            statements = self.source_tree.body
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as error:
            raise Unsplittable(f"the test does not parse ({type(error).__name__})") from None
        test_names, test_stars = module_bindings(statements)
        if test_stars:
            raise Unsplittable("the test star-imports a module")
        entry = find_entry(statements, trust, test_names)
        self.classifier = classifier = Classifier(trust, solution, test_names, entry, strict)
        first = next((index for index, statement in enumerate(statements)
                      if classifier.mentions_solution(statement)), len(statements))
        self.setup = ast.fix_missing_locations(ast.Module(body=statements[:first], type_ignores=[]))
        # Names the child binds itself (`x = f(1)`: later calls may read x there), names only the
        # judging replay binds (they cannot be inputs), and the names read while preparing.
        self.child_bound = set()
        self.replay_bound = set()
        self.slots = 0
        self.setup_bound, _ = module_bindings(statements[:first])
        self.tail = [self.statement(node, in_loop=False) for node in statements[first:]]
        for statement in self.walk():
            if statement.kind == "probe":
                for probe in statement.probes:
                    probe.inputs = []
                    for name in sorted(free_names(probe.node)):
                        if name in self.child_bound:
                            if name in self.setup_bound:
                                raise Unsplittable(f"{name!r} is both a call's result and the test's")
                            continue
                        if name in self.setup_bound:
                            if name in self.replay_bound:
                                raise Unsplittable(f"the test rebinds {name!r}, which a solution call reads")
                            probe.inputs.append(name)
                        elif name in self.replay_bound:
                            raise Unsplittable(f"a solution call reads {name!r}, which the test computes from results")
                    for _, expression, _ in probe.arguments:
                        if free_names(expression) & (self.replay_bound | self.child_bound):
                            raise Unsplittable("a solution call's argument reads what the test computes from results")
            elif statement.kind == "setup" and statement.reads & (self.replay_bound | self.child_bound):
                raise Unsplittable("the test computes inputs from the solution's results")
            elif statement.kind == "loop" and statement.reads & (self.replay_bound | self.child_bound):
                raise Unsplittable("a loop over the solution's results")
        sent_whole = self.sent_whole()
        for statement in self.walk():
            if statement.kind == "plain" and not isinstance(statement.node, ast.Assert) and statement.reads & sent_whole:
                # `nums.append(10)` between two calls runs only when judging: the child would
                # keep the input it was sent before.
                raise Unsplittable("the test changes a solution call's input between calls")

    def sent_whole(self):
        """The test's names sent to the child as they are (bare-name inputs)."""
        return {name for statement in self.walk() if statement.kind == "probe"
                for probe in statement.probes for name in probe.inputs}

    def walk(self):
        for statement in self.tail:
            yield statement
            yield from statement.body

    def statement(self, node, in_loop):
        classifier = self.classifier
        if not classifier.mentions_solution(node):
            if in_loop and isinstance(node, (ast.Break, ast.Continue)):
                raise Unsplittable("break or continue in a loop that calls the solution")
            statement = Statement("plain", node)
            statement.reads = free_names(node)
            assigned, _ = module_bindings([node])
            if not in_loop:
                self.replay_bound |= assigned
            statement.assigns = assigned
            return statement
        if (isinstance(node, ast.Assert) and not in_loop and isinstance(node.test, ast.Call)
                and isinstance(node.test.func, ast.Name) and node.test.func.id == "all"
                and classifier.always_trusted("all") and len(node.test.args) == 1 and not node.test.keywords
                and isinstance(node.test.args[0], (ast.GeneratorExp, ast.ListComp))
                and len(node.test.args[0].generators) == 1 and not node.test.args[0].generators[0].ifs
                and not node.test.args[0].generators[0].is_async):
            # `assert all(f(x) == y for x, y in cases)` passes exactly when every
            # `assert f(x) == y` of the loop does: judged as that loop.
            generator = node.test.args[0].generators[0]
            # The generator's names are its own (a later statement's `x` is not the last item).
            renamed = {name: f"__rlvr_all_{name}__" for name in stored_names([generator.target])}
            target, element = (RenameNames(renamed).visit(part) for part in (generator.target, node.test.args[0].elt))
            loop = ast.For(target=target, iter=generator.iter, body=[ast.Assert(test=element, msg=node.msg)],
                           orelse=[])
            return self.statement(ast.fix_missing_locations(ast.copy_location(loop, node)), in_loop)
        if isinstance(node, SPLIT_STATEMENTS):
            if isinstance(node, ast.Assign) and any(classifier.mentions_solution(target) for target in node.targets):
                raise Unsplittable("an assignment to the solution's objects")
            probes = []
            value = node.value if isinstance(node, ast.Assign) else None
            rewritten = ProbeCutter(classifier, probes, self).visit(node)
            statement = Statement("probe", rewritten, probes)
            assigned, _ = module_bindings([node])
            # `name = f(...)`: the child binds the name too, so that later calls can read it.
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and len(probes) == 1 and probes[0].original is value and not probes[0].as_iterator):
                probes[0].assign = node.targets[0].id
                self.child_bound.add(probes[0].assign)
            self.replay_bound |= assigned
            statement.assigns = assigned
            return statement
        if isinstance(node, ast.For) and not in_loop:
            if node.orelse:
                raise Unsplittable("a for statement with an else clause")
            if classifier.mentions_solution(node.iter) or classifier.mentions_solution(node.target):
                raise Unsplittable("a loop over the solution's results")
            loop = Statement("loop", node)
            loop.reads = free_names(node.iter)
            body = [self.statement(child, in_loop=True) for child in node.body]
            # Plain statements of the body that read what the solution's calls produced run when
            # judging; the others prepare the next calls' inputs, here, while preparing.
            produced = set()
            for child in body:
                if child.kind == "probe":
                    produced |= child.assigns
                elif isinstance(child.node, ast.Assert) or child.reads & produced:
                    produced |= child.assigns
                else:
                    child.kind = "setup"
            for child in body:
                if child.kind == "plain":
                    self.replay_bound |= child.assigns
                elif child.kind == "setup":
                    self.setup_bound |= child.assigns
            target_names, _ = module_bindings([node.target])
            self.setup_bound |= target_names
            loop.body = body
            return loop
        raise Unsplittable(f"a solution call inside {type(node).__name__.lower()} statement")

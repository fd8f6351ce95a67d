# Preparing a job's tests and judging each from what its child reported. Everything here runs in
# the job's own forked process, which ends with the job: nothing a test's code did here reaches
# the next job.


class ProbeRaised(Exception):
    """The solution raised while the child evaluated a probe."""


class NotPlainData(Exception):
    """The solution returned a value the codec does not carry (an instance of its own class,
    a generator...): it cannot equal anything."""


SPLIT_MAX_ITERATIONS = 10_000
# Inputs of these types cannot be changed by a call: no snapshot of them is asked for.
IMMUTABLE_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset)
SPLIT_MAX_PROBES = 100_000


class Step:
    """Code that finishes a statement when judging: `base` is the index of its first probe,
    `snapshot` the slot of the inputs' state the child reported after its calls (or None)."""

    def __init__(self, code, base, snapshot, names):
        self.code, self.base, self.snapshot, self.names = code, base, snapshot, names


class Iteration:
    """One unrolled iteration: the test's names as they were when its calls' inputs were taken
    (restored before its steps run), and its steps."""

    def __init__(self, table, encoded, names, steps, references):
        self.table, self.encoded, self.names, self.steps = table, encoded, names, steps
        self.references = references


class PreparedTest:
    """A split test after its setup ran here: its namespace, the probe spec for the child, and
    the steps that finish it once the probe values are known."""

    def __init__(self, text, job):
        # Strictly, a name bound nowhere is not the solution's (it is evaluated here). When that
        # split fails (the test's own code would call what the solution does not define), the
        # form is split as if every such name were the solution's: a test the referee can split
        # stays split whatever the response, and fails, so that a response cannot choose the
        # unsplit path by defining its functions at run time.
        try:
            self.prepare(text, job, strict=True)
        except Unsplittable as why:
            self.prepare(text, job, strict=False)
            self.refusal = self.refusal or f"the test uses a name the solution does not define ({why})"

    def prepare(self, text, job, strict):
        split = SplitTest(text, job.trust, job.solution, strict)
        self.refusal = job.solution.refusal
        namespace = dict(job.base)
        for alias, module in CONVENTIONAL_MODULES.items():
            if alias in job.trust.modules and alias not in namespace and alias in free_names(split.source_tree):
                try:
                    namespace[alias] = __import__(module)
                except Exception:
                    pass  # then the test's use of it raises NameError here: the test fails
        try:
            exec(compile(split.setup, "<test>", "exec", dont_inherit=True), namespace)
        except BaseException as error:
            raise Unsplittable(f"the test's setup raised {type(error).__name__}") from None
        # Values may be objects of the prelude's helper classes or of classes the test defines.
        classes = dict(job.trust.helper_classes)
        classes.update({name: value for name, value in namespace.items()
                        if isinstance(value, type) and value.__module__ == "__main__" and job.base.get(name) is not value})
        self.namespace, self.classes = namespace, classes
        self.probes, self.table, self.steps = [], [], []
        self.snapshot_names = []
        self.sent = {}
        for statement in split.tail:
            if statement.kind == "loop":
                self.unroll(statement, split)
            else:
                self.steps.append(self.step(statement))
        self.probe_count = len(self.probes)
        self.spec = json.dumps({"probes": self.probes, "table": self.table, "classes": sorted(classes)},
                               separators=(",", ":"))

    def step(self, statement):
        """The judging step of a plain or probe statement; adds its probes to the spec, with
        the inputs whose value changed since the child last received them."""
        code = compile(ast.fix_missing_locations(ast.Module(body=[statement.node], type_ignores=[])), "<test>",
                       "exec", dont_inherit=True)
        base = len(self.probes)
        if statement.kind != "probe":
            return Step(code, base, None, [])
        if base + len(statement.probes) > SPLIT_MAX_PROBES:
            raise Unsplittable(f"more than {SPLIT_MAX_PROBES} solution calls")
        names = []
        for probe in statement.probes:
            inputs, modules = [], []
            for slot, expression, as_list in probe.arguments:
                # An argument the test computes: evaluated here, only its value is sent.
                try:
                    value = eval(compile(ast.fix_missing_locations(ast.Expression(body=expression)), "<test>", "eval",
                                         dont_inherit=True), self.namespace)
                    if as_list:
                        value = list(itertools.islice(iter(value), SPLIT_MAX_ITERATIONS * 100 + 1))
                except Exception as error:
                    raise Unsplittable(f"a solution call's argument raised {type(error).__name__}") from None
                try:
                    part, (encoded,) = encode_values([value], self.classes)
                except Unencodable as why:
                    raise Unsplittable(f"an argument of the solution call is not plain data ({why})") from None
                offset = len(self.table)
                self.table.extend(shift_references(entry, offset) for entry in part)
                inputs.append([slot, shift_references(encoded, offset)])
            for name in probe.inputs:
                if name not in self.namespace:
                    raise Unsplittable(f"the input {name!r} is not bound when the solution is called")
                if isinstance(self.namespace[name], types.ModuleType):
                    # A module the test imported (`copy.deepcopy(data)`): the child imports it too.
                    module = self.namespace[name].__name__
                    if self.sent.get(name) != module:
                        self.sent[name] = module
                        modules.append([name, module])
                    continue
                try:
                    part, (encoded,) = encode_values([self.namespace[name]], self.classes)
                except Unencodable as why:
                    raise Unsplittable(f"an input of the solution call is not plain data ({why})") from None
                # The child keeps what it received (and what the solution did to it): send a
                # value again only when the test changed it.
                key = json.dumps([part, encoded])
                if self.sent.get(name) != key:
                    self.sent[name] = key
                    offset = len(self.table)
                    self.table.extend(shift_references(entry, offset) for entry in part)
                    inputs.append([name, shift_references(encoded, offset)])
                if name not in names and type(self.namespace[name]) not in IMMUTABLE_TYPES:
                    names.append(name)
            self.probes.append({"source": probe.source, "requires": probe.requires, "inputs": inputs,
                                "modules": modules, "assign": probe.assign, "snapshot": []})
        snapshot = None
        if names:
            # After the statement's calls the child reports its inputs: a solution working in
            # place (`rotate(nums, 1)`) is seen through them.
            self.probes[-1]["snapshot"] = names
            snapshot = len(self.snapshot_names)
            self.snapshot_names.append(names)
        return Step(code, base, snapshot, names)

    def unroll(self, loop, split):
        """Runs a loop here, preparing each iteration's calls; the iterations replay when judging."""
        namespace = self.namespace
        try:
            items = list(itertools.islice(iter(eval(compile(ast.Expression(body=loop.node.iter), "<test>", "eval",
                                                             dont_inherit=True), namespace)),
                                          SPLIT_MAX_ITERATIONS + 1))
        except Exception as error:
            raise Unsplittable(f"the loop's iterable raised {type(error).__name__}") from None
        if len(items) > SPLIT_MAX_ITERATIONS:
            raise Unsplittable(f"a loop of more than {SPLIT_MAX_ITERATIONS} iterations")
        target = compile(ast.fix_missing_locations(ast.Module(body=[ast.Assign(
            targets=[loop.node.target], value=ast.Name(id="__rlvr_item__", ctx=ast.Load()), lineno=1)],
            type_ignores=[])), "<test>", "exec", dont_inherit=True)
        setup = {id(statement): compile(ast.fix_missing_locations(ast.Module(body=[statement.node], type_ignores=[])),
                                        "<test>", "exec", dont_inherit=True)
                 for statement in loop.body if statement.kind == "setup"}
        replayed = [statement for statement in loop.body if statement.kind != "setup"]
        read = set()
        for statement in replayed:
            read |= free_names(statement.node)
        # Only what the loop itself binds changes from one iteration to the next.
        changing, _ = module_bindings([loop.node.target] + [statement.node for statement in loop.body
                                                            if statement.kind == "setup"])
        restored = sorted(read & changing)
        for item in items:
            namespace["__rlvr_item__"] = item
            try:
                exec(target, namespace)
                steps = []
                for statement in loop.body:
                    if statement.kind == "setup":
                        exec(setup[id(statement)], namespace)
                    else:
                        steps.append(self.step(statement))
            except Unsplittable:
                raise
            except Exception as error:
                raise Unsplittable(f"the loop's setup raised {type(error).__name__}") from None
            # The names the replayed checks read, as they were in this iteration: plain data is
            # copied (the next iterations may change it in place), anything else (a module, a
            # function, a random generator) is kept by reference.
            names, values, references = [], [], {}
            for name in restored:
                if name not in namespace:
                    continue
                try:
                    encode_values([namespace[name]], self.classes)
                except Unencodable:
                    references[name] = namespace[name]
                    continue
                names.append(name)
                values.append(namespace[name])
            table, encoded = encode_values(values, self.classes)
            self.steps.append(Iteration(table, encoded, names, steps, references))
        namespace.pop("__rlvr_item__", None)

    def judge(self, results_bytes):
        """`(outcome, detail, forged)`: outcome "pass", "fail" (an assertion or a value that is
        not plain data) or "error" (an exception, the solution's or the test's)."""
        try:
            report = json.loads(results_bytes)
            if type(report) is not dict:
                raise Malformed("the report is not an object")
            results, snapshots = report.get("results"), report.get("snapshots", [])
            if type(results) is not list or len(results) != self.probe_count:
                raise Malformed("the report does not answer every probe")
            if type(snapshots) is not list or len(snapshots) != len(self.snapshot_names):
                raise Malformed("the report's input snapshots do not match the probes")
            wanted, shape = [], []
            for result in results:
                if type(result) is not list or not result or result[0] not in ("value", "iterator", "raised",
                                                                               "unencodable"):
                    raise Malformed("a probe result is not tagged")
                if result[0] in ("value", "iterator") and len(result) == 2:
                    shape.append((result[0], len(wanted)))
                    wanted.append(result[1])
                elif result[0] == "raised" and len(result) == 3 and all(type(part) is str for part in result[1:]):
                    shape.append(("raised", f"{result[1]}: {result[2]}"))
                elif result[0] == "unencodable" and len(result) == 2 and type(result[1]) is str:
                    shape.append(("unencodable", result[1]))
                else:
                    raise Malformed("a probe result has the wrong fields")
            snapshot_slots = []
            for snapshot, names in zip(snapshots, self.snapshot_names):
                if snapshot is None:
                    snapshot_slots.append(None)
                    continue
                if type(snapshot) is not list or len(snapshot) != len(names):
                    raise Malformed("an input snapshot has the wrong length")
                snapshot_slots.append(len(wanted))
                wanted.extend(snapshot)
            decoded = decode_values(report.get("table", []), wanted, self.classes)
        except (ValueError, Malformed, RecursionError, MemoryError) as error:
            return "error", f"the probe report is malformed: {error}", True
        if self.refusal is not None:
            return "fail", self.refusal, False
        values = []
        for kind, payload in shape:
            if kind == "iterator":
                if type(decoded[payload]) is not list:
                    return "error", "the probe report is malformed: an iterator's items are not a list", True
                values.append(("value", iter(decoded[payload])))
            else:
                values.append((kind, decoded[payload] if kind == "value" else payload))
        base = [0]

        def probe(index):
            kind, payload = values[base[0] + index]
            if kind == "raised":
                raise ProbeRaised(payload)
            if kind == "unencodable":
                raise NotPlainData(payload)
            return payload

        namespace = self.namespace
        namespace[PROBE_FUNCTION] = probe

        def run(step):
            if step.snapshot is not None and snapshot_slots[step.snapshot] is not None:
                start = snapshot_slots[step.snapshot]
                for name, value in zip(step.names, decoded[start:start + len(step.names)]):
                    write_back(namespace, name, value)
            base[0] = step.base
            exec(step.code, namespace)

        try:
            for step in self.steps:
                if isinstance(step, Iteration):
                    namespace.update(step.references)
                    namespace.update(zip(step.names, decode_values(step.table, step.encoded, self.classes)))
                    for inner in step.steps:
                        run(inner)
                else:
                    run(step)
        except AssertionError as error:
            return "fail", assertion_detail(error), False
        except NotPlainData as why:
            return "fail", f"the solution returned a value that is not plain data: {why}", False
        except ProbeRaised as raised:
            return "error", f"the solution raised {raised}", False
        except BaseException as error:
            return "error", f"the test raised {type(error).__name__}", False
        return "pass", "", False


def assertion_detail(error):
    try:
        message = str(error)
    except Exception:
        message = ""
    return "assertion failed" + (f": {message[:200]}" if message else "")


def write_back(namespace, name, value):
    """Moves an input's state after a solution call into the test's own object, in place, so
    every alias the test holds sees it (`rotate(nums, 1); assert nums == [3, 1, 2]`)."""
    target = namespace.get(name)
    kind = type(target)
    if kind is not type(value):
        return
    if kind is list or kind is bytearray:
        target[:] = value
    elif kind in (dict, set, collections.Counter, collections.OrderedDict, collections.defaultdict):
        target.clear()
        target.update(value)
    elif kind is collections.deque:
        target.clear()
        target.extend(value)
    elif kind.__module__ == "__main__":
        target.__dict__.clear()
        target.__dict__.update(value.__dict__)


class Job:
    """One job: the solution's static names and its prepared tests."""

    def __init__(self, base, trust, solution_source, tests):
        self.base, self.trust = base, trust
        self.solution = SolutionNames(solution_source, trust)
        self.tests = []
        self.answers = []
        for text in tests:
            try:
                prepared = PreparedTest(text, self)
                self.tests.append(prepared)
                self.answers.append({"split": True, "probes": len(prepared.spec.encode())})
            except Unsplittable as why:
                self.tests.append(None)
                self.answers.append({"split": False, "reason": str(why)})
            except Exception as error:
                self.tests.append(None)
                self.answers.append({"split": False, "reason": f"the referee could not split it ({type(error).__name__})"})

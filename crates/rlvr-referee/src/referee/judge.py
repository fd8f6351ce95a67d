# Preparing a job's tests and judging each from what its child reported. Everything here runs in
# the job's own forked process, which ends with the job: nothing a test's code did here reaches
# the next job.


class ProbeRaised(Exception):
    """The solution raised while the child evaluated a probe."""


class NotPlainData(Exception):
    """The solution returned a value the codec does not carry (an instance of its own class,
    a generator...): it cannot equal anything."""


class PreparedTest:
    """A split test after its setup ran here: its namespace, the probe spec for the child, and
    the code that finishes it once the probe values are known."""

    def __init__(self, text, job):
        split = SplitTest(text, job.trust, job.solution)
        namespace = dict(job.base)
        try:
            exec(compile(split.setup, "<test>", "exec", dont_inherit=True), namespace)
        except BaseException as error:
            raise Unsplittable(f"the test's setup raised {type(error).__name__}") from None
        # Values may be objects of the prelude's helper classes or of classes the test defines.
        classes = dict(job.trust.helper_classes)
        classes.update({name: value for name, value in namespace.items()
                        if isinstance(value, type) and value.__module__ == "__main__" and job.base.get(name) is not value})
        values = [namespace[name] for name in split.inputs]
        try:
            table, encoded = encode_values(values, classes)
        except Unencodable as why:
            raise Unsplittable(f"an input of the solution call is not plain data ({why})") from None
        statements = [ast.fix_missing_locations(ast.Module(body=[statement], type_ignores=[]))
                      for statement in split.rest.body]
        self.steps = []
        probe_index = 0
        last_probe_of = {}
        for position, statement in enumerate(statements):
            count = sum(1 for node in ast.walk(statement)
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == PROBE_FUNCTION)
            if count:
                probe_index += count
                last_probe_of[position] = probe_index - 1
            self.steps.append(compile(statement, "<test>", "exec", dont_inherit=True))
        self.snapshot_before = {}
        snapshot_after = set()
        if split.inputs:
            for number, (position, probe) in enumerate(sorted(last_probe_of.items())):
                self.snapshot_before[position] = number
                snapshot_after.add(probe)
        self.namespace = namespace
        self.classes = classes
        self.inputs = split.inputs
        self.probe_count = len(split.probes)
        self.spec = json.dumps({
            "probes": [{"source": probe.source, "requires": probe.requires, "snapshot": index in snapshot_after}
                       for index, probe in enumerate(split.probes)],
            "bindings": {"table": table, "values": encoded, "names": split.inputs},
            "classes": sorted(classes),
        }, separators=(",", ":"))

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
            if type(snapshots) is not list or len(snapshots) != len(self.snapshot_before):
                raise Malformed("the report's input snapshots do not match the probes")
            wanted, shape = [], []
            for result in results:
                if type(result) is not list or not result or result[0] not in ("value", "raised", "unencodable"):
                    raise Malformed("a probe result is not tagged")
                if result[0] == "value" and len(result) == 2:
                    shape.append(("value", len(wanted)))
                    wanted.append(result[1])
                elif result[0] == "raised" and len(result) == 3 and all(type(part) is str for part in result[1:]):
                    shape.append(("raised", f"{result[1]}: {result[2]}"))
                elif result[0] == "unencodable" and len(result) == 2 and type(result[1]) is str:
                    shape.append(("unencodable", result[1]))
                else:
                    raise Malformed("a probe result has the wrong fields")
            snapshot_slots = []
            for snapshot in snapshots:
                if snapshot is None:
                    snapshot_slots.append(None)
                    continue
                if type(snapshot) is not list or len(snapshot) != len(self.inputs):
                    raise Malformed("an input snapshot has the wrong length")
                snapshot_slots.append(len(wanted))
                wanted.extend(snapshot)
            decoded = decode_values(report.get("table", []), wanted, self.classes)
        except (ValueError, Malformed, RecursionError, MemoryError) as error:
            return "error", f"the probe report is malformed: {error}", True
        values = []
        for kind, payload in shape:
            values.append((kind, decoded[payload] if kind == "value" else payload))

        def probe(index):
            kind, payload = values[index]
            if kind == "raised":
                raise ProbeRaised(payload)
            if kind == "unencodable":
                raise NotPlainData(payload)
            return payload

        namespace = self.namespace
        namespace[PROBE_FUNCTION] = probe
        try:
            for position, step in enumerate(self.steps):
                number = self.snapshot_before.get(position)
                if number is not None and snapshot_slots[number] is not None:
                    start = snapshot_slots[number]
                    for name, value in zip(self.inputs, decoded[start:start + len(self.inputs)]):
                        write_back(namespace, name, value)
                exec(step, namespace)
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
            except (RecursionError, MemoryError, ValueError, TypeError) as error:
                self.tests.append(None)
                self.answers.append({"split": False, "reason": f"the referee could not split it ({type(error).__name__})"})

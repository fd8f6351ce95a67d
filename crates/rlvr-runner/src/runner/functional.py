# Judge functional tests split by the referee (docs/profiles.md, "Threat model"): the test child
# evaluates only the solution calls ("probes") the referee cut out of an assert, and writes
# their values as plain data to a results file. The expected side never enters this process;
# the referee compares in its own sandbox. Nothing here is trusted: a solution can rewrite any
# of it, and all it can forge is a claim about its own return values.
#
# The probe spec (the `extra` payload of a `run` with "probes": true) is JSON:
#   {"probes": [{"source": expression, "requires": [[name, module, attribute], ...],
#                "snapshot": bool}, ...],
#    "bindings": {"table": [...], "values": [...], "names": [...]},
#    "classes": [class name, ...]}
# `bindings` are the test's inputs the probes read. `requires` lists names the test calls that
# the prelude also binds (`gcd` from math): the probe fails with NameError when the name still
# holds the prelude's object, so a prompt's `gcd` must be the solution's. `snapshot` asks for
# the inputs' values after the probe (a solution that works in place, `rotate(nums, 1)`). The
# results file holds
#   {"table": [...], "results": [["value", v] | ["raised", type, message] | ["unencodable", why]],
#    "snapshots": [[v, ...] | null, ...]}


def run_probes(spec_text, namespace, results_fd):
    """In the test child, after the solution ran: bind the test's inputs, evaluate each probe,
    write every value (or the exception it raised) to `results_fd`."""
    spec = json.loads(spec_text)
    classes = frozenset(spec.get("classes", ()))
    bindings = spec.get("bindings") or {}
    names = bindings.get("names") or []
    if names:
        known = {name: value for name, value in namespace.items() if isinstance(value, type) and name in classes}
        values = decode_values(bindings["table"], bindings["values"], known)
        namespace.update(zip(names, values))
    table, results, snapshots = [], [], []

    def encoded(values):
        """Encodes now (later probes may change the values), into the shared table."""
        part, encoded_values = encode_values(values, classes)
        offset = len(table)
        table.extend(shift_references(entry, offset) for entry in part)
        return [shift_references(value, offset) for value in encoded_values]

    for probe in spec["probes"]:
        try:
            for name, module, attribute in probe.get("requires", ()):
                prelude_object = getattr(sys.modules.get(module), attribute, None)
                if name not in namespace or namespace[name] is prelude_object:
                    raise NameError(f"name {name!r} is not defined by the solution")
            code = compile(probe["source"], "<test>", "eval", dont_inherit=True)
            value = eval(code, namespace)
        except Exception as error:
            results.append(["raised", type(error).__name__, probe_message(error)])
        else:
            try:
                results.append(["value", encoded([value])[0]])
            except Unencodable as why:
                results.append(["unencodable", str(why)])
        if probe.get("snapshot"):
            try:
                snapshots.append(encoded([namespace.get(name) for name in names]))
            except Unencodable:
                snapshots.append(None)
    data = json.dumps({"table": table, "results": results, "snapshots": snapshots}, separators=(",", ":")).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(results_fd, view):]


def probe_message(error):
    try:
        return str(error)[:500]
    except Exception:
        return ""


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

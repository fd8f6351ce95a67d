# Judge functional tests split by the referee (docs/profiles.md, "Threat model"): the test child
# evaluates only the solution calls ("probes") the referee cut out of an assert, and writes
# their values as plain data to a results file. The expected side never enters this process;
# the referee compares in its own sandbox. Nothing here is trusted: a solution can rewrite any
# of it, and all it can forge is a claim about its own return values.
#
# The probe spec (the `extra` payload of a `run` with "probes": true) is JSON:
#   {"probes": [{"source": expression, "requires": [[name, module, attribute], ...],
#                "inputs": [[name, value], ...], "modules": [[name, module], ...], "assign": name | null,
#                "snapshot": [name, ...]}],
#    "table": [...], "classes": [class name, ...]}
# Each probe binds its `inputs` (the test's values it reads, encoded against the spec's table;
# sent again only when the test changed them) and imports the `modules` the test imported, then
# is evaluated; `assign` binds its value to a
# name later probes read (`x = f(1)` then `g(x)`). `requires` lists names the test calls that the
# prelude also binds (`gcd` from math): the probe fails with NameError when the name still holds
# the prelude's object, so a prompt's `gcd` must be the solution's. `snapshot` asks for those
# names' values after the probe (a solution that works in place, `rotate(nums, 1)`). The results
# file holds
#   {"table": [...], "results": [["value", v] | ["raised", type, message] | ["unencodable", why]],
#    "snapshots": [[v, ...] | null, ...]}   (one snapshot per probe that asked for one)
# A probe whose value is an iterator (a generator) reports ["iterator", v], v its items as a list.


def run_probes(spec_text, namespace, results_fd):
    """In the test child, after the solution ran: evaluate each probe with its inputs, write
    every value (or the exception it raised) to `results_fd`."""
    spec = json.loads(spec_text)
    classes = frozenset(spec.get("classes", ()))
    probes = spec["probes"]
    known = {name: value for name, value in namespace.items() if isinstance(value, type) and name in classes}
    sent = [value for probe in probes for _, value in probe.get("inputs", ())]
    received = iter(decode_values(spec.get("table", []), sent, known) if sent else ())
    table, results, snapshots = [], [], []

    def encoded(values):
        """Encodes now (later probes may change the values), into the shared table."""
        part, encoded_values = encode_values(values, classes, numpy_as_plain=True)
        offset = len(table)
        table.extend(shift_references(entry, offset) for entry in part)
        return [shift_references(value, offset) for value in encoded_values]

    for probe in probes:
        for name, _ in probe.get("inputs", ()):
            namespace[name] = next(received)
        try:
            for name, module in probe.get("modules", ()):
                namespace[name] = __import__(module, fromlist=["*"])
            for name, module, attribute in probe.get("requires", ()):
                prelude_object = getattr(sys.modules.get(module), attribute, None)
                if name not in namespace or namespace[name] is prelude_object:
                    raise NameError(f"name {name!r} is not defined by the solution")
            code = compile(probe["source"], "<test>", "eval", dont_inherit=True)
            value = eval(code, namespace)
        except Exception as error:
            results.append(["raised", type(error).__name__, probe_message(error)])
        else:
            if probe.get("assign"):
                namespace[probe["assign"]] = value
            try:
                if is_iterator(value):
                    # A generator (or any iterator): its items, as the test would consume them.
                    items = list(itertools.islice(value, PROBE_MAX_ITEMS + 1))
                    if len(items) > PROBE_MAX_ITEMS:
                        raise Unencodable(f"an iterator of more than {PROBE_MAX_ITEMS} items")
                    results.append(["iterator", encoded([items])[0]])
                else:
                    results.append(["value", encoded([value])[0]])
            except Unencodable as why:
                results.append(["unencodable", str(why)])
            except Exception as error:
                results.append(["raised", type(error).__name__, probe_message(error)])
        if probe.get("snapshot"):
            try:
                snapshots.append(encoded([namespace.get(name) for name in probe["snapshot"]]))
            except Unencodable:
                snapshots.append(None)
    data = json.dumps({"table": table, "results": results, "snapshots": snapshots}, separators=(",", ":")).encode()
    write_all(results_fd, data)


PROBE_MAX_ITEMS = 1_000_000


def is_iterator(value):
    kind = type(value)
    if kind in (list, tuple, dict, set, frozenset, str, bytes, bytearray):
        return False
    return kind is types.GeneratorType or hasattr(kind, "__next__") and hasattr(kind, "__iter__")


def probe_message(error):
    try:
        return str(error)[:500]
    except Exception:
        return ""

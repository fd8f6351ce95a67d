# rlvr's harness for a Python checker (issue 25): runs in a test child of the checker's own
# runner, after the checker's source, in the same module namespace. The three texts come on
# stdin as "NONCE LEN LEN LEN\n" and the bytes (input, the program's output, the expected
# output); the output is data, never code. The verdict goes to descriptor 1 as one line
# "NONCE score REPR" or "NONCE error MESSAGE"; anything the checker prints went to stderr.
def _rlvr_checker_harness():
    import os
    import sys

    data = sys.stdin.buffer.read()
    head, _, rest = data.partition(b"\n")
    nonce, *sizes = head.split(b" ")
    input_size, output_size, expected_size = (int(size) for size in sizes)
    input_text = rest[:input_size].decode("utf-8", "replace")
    output_text = rest[input_size:input_size + output_size].decode("utf-8", "replace")
    expected_start = input_size + output_size
    expected_text = rest[expected_start:expected_start + expected_size].decode("utf-8", "replace")

    def report(kind, text):
        line = nonce + b" " + kind + b" " + text.encode("utf-8", "backslashreplace")[:500] + b"\n"
        while line:
            line = line[os.write(1, line):]

    check = globals().get("check")
    if not callable(check):
        report(b"error", "the checker defines no function check(input, output, expected)")
        return
    value = check(input_text, output_text, expected_text)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        report(b"score", "1.0" if value else "0.0")
    elif isinstance(value, (int, float)):
        try:
            report(b"score", repr(float(value)))
        except OverflowError:
            report(b"error", "check returned an integer too large for a score")
    else:
        report(b"error", "check returned %s, not a bool or a number in [0, 1]" % type(value).__name__)


_rlvr_checker_harness()

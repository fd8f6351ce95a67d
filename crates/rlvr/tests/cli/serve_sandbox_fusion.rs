//! Issue 35: `rlvr serve`'s `/run_code` as a drop-in for SandboxFusion's. Java runs with
//! assertions on there (`java -ea`, as SandboxFusion runs it) and without on the judge's stdin
//! path; the libraries SandboxFusion's image ships (`org.javatuples`, `lodash`) are there for
//! both.

use serde_json::{Value, json};

use crate::support::Served;

/// `POST /run_code` of `body`, answered 200.
fn run_code(served: &Served, body: &Value) -> Value {
    let response = served.post("/run_code", body);
    assert_eq!(response.status, 200, "{body}: {}", response.body);
    response.json()
}

/// A judge job of `source` in a `tag` fence: one a+b test.
fn sum_job(id: &str, tag: &str, source: &str) -> Value {
    json!({
        "id": id,
        "response": format!("<think>\nsolving\n</think>\n```{tag}\n{source}\n```"),
        "ground_truth": {"inputs": ["20 22\n"], "outputs": ["42\n"]},
    })
}

/// Each job's score through `POST /v1/verify`, in job order.
fn judge_scores(served: &Served, jobs: &[Value]) -> Vec<Value> {
    let response = served.post("/v1/verify", &json!({"time_limit": 10, "jobs": jobs}));
    assert_eq!(response.status, 200, "{}", response.body);
    response.json()["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| {
            assert_eq!(result["status"], "ok", "{result}");
            result["score"].clone()
        })
        .collect()
}

const JAVA_FAILING_ASSERT: &str = "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); long a = s.nextLong(), b = s.nextLong(); assert a + b < 0 : \"a debugging check\"; System.out.println(a + b); } }\n";
const JAVA_HOLDING_ASSERT: &str = "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); long a = s.nextLong(), b = s.nextLong(); assert a + b == 42; System.out.println(a + b); } }\n";

#[test]
fn issue_35_serve_java_asserts_in_run_code_and_not_in_the_judge() {
    let served = Served::start(&["--workers", "2"]);
    // SandboxFusion's `java -ea`: a failing `assert` fails the run, as there.
    let failing = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_FAILING_ASSERT, "stdin": "20 22\n", "compile_timeout": 60}),
    );
    assert_eq!(failing["status"], "Failed", "{failing}");
    assert_eq!(failing["compile_result"]["return_code"], 0, "{failing}");
    assert_eq!(failing["run_result"]["status"], "Finished", "{failing}");
    assert_eq!(failing["run_result"]["return_code"], 1, "{failing}");
    assert_eq!(failing["run_result"]["stdout"], "", "{failing}");
    let stderr = failing["run_result"]["stderr"].as_str().expect("stderr");
    assert!(
        stderr.contains("java.lang.AssertionError: a debugging check"),
        "{stderr}"
    );
    // Honest control: an assertion that holds changes nothing.
    let holding = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_HOLDING_ASSERT, "stdin": "20 22\n", "compile_timeout": 60}),
    );
    assert_eq!(holding["status"], "Success", "{holding}");
    assert_eq!(holding["run_result"]["stdout"], "42\n", "{holding}");

    // The judge runs Java as competitive judges do, without -ea: the failing assertion is
    // not evaluated and the right answer scores 1.0, as `java Main` would give it.
    assert_eq!(
        judge_scores(
            &served,
            &[
                sum_job("failing", "java", JAVA_FAILING_ASSERT),
                sum_job("holding", "java", JAVA_HOLDING_ASSERT),
            ]
        ),
        [json!(1.0), json!(1.0)]
    );
}

const JAVA_TUPLES: &str = "import java.util.*;\nimport org.javatuples.Pair;\nimport org.javatuples.Triplet;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); Pair<Long, Long> p = Pair.with(s.nextLong(), s.nextLong()); Triplet<String, Long, Double> t = Triplet.with(\"sum\", p.getValue0() + p.getValue1(), 0.5); System.out.println(t.getValue1()); } }\n";
const NODE_LODASH: &str = "const _ = require('lodash');\nconst numbers = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(_.sum(numbers));\n";

#[test]
fn issue_35_serve_javatuples_and_lodash_are_there_for_run_code_and_the_judge() {
    let served = Served::start(&["--workers", "2"]);
    for (language, code) in [("java", JAVA_TUPLES), ("nodejs", NODE_LODASH)] {
        let answer = run_code(
            &served,
            &json!({"language": language, "code": code, "stdin": "20 22\n", "compile_timeout": 60}),
        );
        assert_eq!(answer["status"], "Success", "{language}: {answer}");
        assert_eq!(
            answer["run_result"]["stdout"], "42\n",
            "{language}: {answer}"
        );
    }
    // A library that is not installed is still a failure, not a crash: the same programs
    // naming a package nobody ships.
    let missing_java = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_TUPLES.replace("org.javatuples", "org.nosuchtuples"), "compile_timeout": 60}),
    );
    assert_eq!(missing_java["status"], "Failed", "{missing_java}");
    assert_ne!(
        missing_java["compile_result"]["return_code"], 0,
        "{missing_java}"
    );
    assert_eq!(missing_java["run_result"], Value::Null, "{missing_java}");
    let missing_node = run_code(
        &served,
        &json!({"language": "nodejs", "code": NODE_LODASH.replace("lodash", "no-such-module")}),
    );
    assert_eq!(missing_node["status"], "Failed", "{missing_node}");
    assert!(
        missing_node["run_result"]["stderr"]
            .as_str()
            .is_some_and(|stderr| stderr.contains("Cannot find module 'no-such-module'")),
        "{missing_node}"
    );
    // The judge's path sees them too (warm JVM, fresh JVM via the same class path).
    assert_eq!(
        judge_scores(
            &served,
            &[
                sum_job("tuples", "java", JAVA_TUPLES),
                sum_job("lodash", "javascript", NODE_LODASH),
            ]
        ),
        [json!(1.0), json!(1.0)]
    );
}

/// base64 of `text`.
fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The text of a fetched file.
fn fetched_text(answer: &Value, path: &str) -> String {
    use base64::Engine as _;
    let encoded = answer["files"][path]
        .as_str()
        .unwrap_or_else(|| panic!("{path} not fetched: {answer}"));
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("base64"),
    )
    .expect("UTF-8")
}

#[test]
fn issue_35_serve_files_in_directories_are_placed_and_fetch_files_come_back() {
    let served = Served::start(&["--workers", "2"]);
    // Files in directories, beside a plain one, read by the program.
    let placed = run_code(
        &served,
        &json!({
            "language": "python",
            "code": "print(open('dir1/dir2/dir3/secret_flag').read(), open('plain.txt').read(), open('dir1/other').read())",
            "files": {
                "dir1/dir2/dir3/secret_flag": base64_of("flag"),
                "plain.txt": base64_of("plain"),
                "dir1/other": base64_of("other"),
                "skipped": null,
            },
        }),
    );
    assert_eq!(placed["status"], "Success", "{placed}");
    assert_eq!(
        placed["run_result"]["stdout"], "flag plain other\n",
        "{placed}"
    );
    assert_eq!(placed["files"], json!({}), "{placed}");

    // Files written by the program come back base64, in directories too, with its own exit
    // status and output; a path that is no regular file (missing, a directory) is left out.
    let fetched = run_code(
        &served,
        &json!({
            "language": "python",
            "code": "import os, sys\nopen('a.txt', 'w').write('secret')\nos.makedirs('out/deep')\nopen('out/deep/b.bin', 'wb').write(bytes(range(256)))\nprint('done')\nsys.exit(3)",
            "fetch_files": ["a.txt", "out/deep/b.bin", "missing.txt", "out"],
        }),
    );
    assert_eq!(fetched["status"], "Failed", "{fetched}");
    assert_eq!(fetched["run_result"]["return_code"], 3, "{fetched}");
    assert_eq!(fetched["run_result"]["stdout"], "done\n", "{fetched}");
    assert_eq!(fetched_text(&fetched, "a.txt"), "secret");
    {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(fetched["files"]["out/deep/b.bin"].as_str().expect("b.bin"))
            .expect("base64");
        assert_eq!(bytes, (0..=255).collect::<Vec<u8>>());
    }
    let names: Vec<&String> = fetched["files"]
        .as_object()
        .expect("files")
        .keys()
        .collect();
    assert_eq!(names, ["a.txt", "out/deep/b.bin"], "{fetched}");

    // A signal is still the program's own, negated.
    let killed = run_code(
        &served,
        &json!({
            "language": "python",
            "code": "import os, signal\nopen('x', 'w').write('x')\nos.kill(os.getpid(), signal.SIGKILL)",
            "fetch_files": ["x"],
        }),
    );
    assert_eq!(killed["run_result"]["return_code"], -9, "{killed}");
    assert_eq!(fetched_text(&killed, "x"), "x");
}

#[test]
fn issue_35_serve_hostile_paths_are_refused_and_links_never_reach_host_files() {
    let served = Served::start(&["--workers", "2"]);
    // A path outside the work directory: 400 naming it, for files and for fetch_files.
    for (field, path, why) in [
        ("files", "/etc/cron.d/x", "an absolute path"),
        ("files", "../escape", "a `..` component"),
        ("files", "dir/../../escape", "a `..` component"),
        ("files", "main.py", "the program's own file"),
        ("fetch_files", "/etc/passwd", "an absolute path"),
        ("fetch_files", "../../etc/passwd", "a `..` component"),
        ("fetch_files", "./a", "empty component"),
    ] {
        let body = if field == "files" {
            json!({"language": "python", "code": "print(1)", "files": {path: base64_of("x")}})
        } else {
            json!({"language": "python", "code": "print(1)", "fetch_files": [path]})
        };
        let response = served.post("/run_code", &body);
        assert_eq!(response.status, 400, "{field} {path}: {}", response.body);
        let error = response.json()["error"].as_str().expect("error").to_owned();
        assert!(
            error.contains(path) && error.contains(why),
            "{field} {path}: {error}"
        );
    }
    let overlapping = served.post(
        "/run_code",
        &json!({"language": "python", "code": "print(1)", "files": {"a": base64_of("x"), "a/b": base64_of("y")}}),
    );
    assert_eq!(overlapping.status, 400, "{}", overlapping.body);
    let too_many = served.post(
        "/run_code",
        &json!({"language": "python", "code": "print(1)", "fetch_files": (0..65).map(|index| format!("f{index}")).collect::<Vec<_>>()}),
    );
    assert_eq!(too_many.status, 400, "{}", too_many.body);

    // The program links the names it will be asked for to files of the host (the test's own
    // binary, /etc/passwd, the host's /root), links a directory on the way (`dir/etc`,
    // `proc` to /proc/self) and makes a FIFO that would block a reader: no link is followed
    // at any component, nothing outside the work directory comes back, and the answer is
    // prompt.
    let host_file = std::env::current_exe().expect("the test binary");
    let code = format!(
        "import os\nos.symlink({host:?}, 'binary')\nos.symlink('/etc/passwd', 'passwd')\nos.symlink('/root', 'root')\nos.makedirs('dir')\nos.symlink('/etc', 'dir/etc')\nos.symlink('/proc/self', 'proc')\nos.mkfifo('fifo')\nopen('honest.txt', 'w').write('mine')\n",
        host = host_file.display().to_string()
    );
    let hostile = run_code(
        &served,
        &json!({
            "language": "python",
            "code": code,
            "fetch_files": ["binary", "passwd", "root/.bashrc", "dir/etc/passwd", "proc/environ", "fifo", "honest.txt"],
            "run_timeout": 5,
        }),
    );
    assert_eq!(hostile["status"], "Success", "{hostile}");
    assert_eq!(
        hostile["files"]
            .as_object()
            .expect("files")
            .keys()
            .collect::<Vec<_>>(),
        ["honest.txt"],
        "{hostile}"
    );
    assert_eq!(fetched_text(&hostile, "honest.txt"), "mine");

    // A file past the cap is left out and named in the message; the others come back.
    let large = run_code(
        &served,
        &json!({
            "language": "python",
            "code": "open('large', 'wb').write(b'x' * (9 << 20))\nopen('small', 'w').write('small')",
            "fetch_files": ["large", "small"],
        }),
    );
    assert_eq!(large["status"], "Success", "{large}");
    assert_eq!(fetched_text(&large, "small"), "small");
    assert!(large["files"].get("large").is_none(), "{large}");
    assert!(
        large["message"]
            .as_str()
            .is_some_and(|message| message.contains("left out") && message.contains("large")),
        "{large}"
    );
}

#[test]
fn issue_35_serve_bash_runs_in_the_sandbox_and_hostile_scripts_are_contained() {
    // The server holds a secret in its environment that no program may see.
    let mut command = crate::support::rlvr();
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "2"])
        .env("RLVR_TEST_SECRET", "bash-must-not-see-this");
    let served = Served::start_with(command);
    // Honest controls: a+b from stdin, a file in a directory, a file fetched back.
    let sum = run_code(
        &served,
        &json!({"language": "bash", "code": "read a b\necho $((a + b))", "stdin": "20 22\n"}),
    );
    assert_eq!(sum["status"], "Success", "{sum}");
    assert_eq!(sum["compile_result"], Value::Null, "{sum}");
    assert_eq!(sum["run_result"]["stdout"], "42\n", "{sum}");
    let files = run_code(
        &served,
        &json!({
            "language": "bash",
            "code": "tr a-z A-Z < in/words > out.txt\ncat out.txt",
            "files": {"in/words": base64_of("hello")},
            "fetch_files": ["out.txt"],
        }),
    );
    assert_eq!(files["status"], "Success", "{files}");
    assert_eq!(files["run_result"]["stdout"], "HELLO", "{files}");
    assert_eq!(fetched_text(&files, "out.txt"), "HELLO");
    let exit = run_code(&served, &json!({"language": "bash", "code": "exit 7"}));
    assert_eq!(exit["status"], "Failed", "{exit}");
    assert_eq!(exit["run_result"]["return_code"], 7, "{exit}");

    // Hostile: host files, writes outside the work directory, the network (bash's
    // /dev/tcp), the verifier's environment: each attempt prints what it got.
    let hostile = run_code(
        &served,
        &json!({
            "language": "bash",
            "code": concat!(
                "cat /etc/shadow 2>/dev/null && echo SHADOW-READ\n",
                "ls /root 2>/dev/null && echo ROOT-LISTED\n",
                "echo x > /usr/rlvr-bash-written 2>/dev/null && echo USR-WRITTEN\n",
                "(exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo NETWORK-OPEN\n",
                "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q bash-must-not-see-this && echo SECRET-SEEN\n",
                "env | grep -q bash-must-not-see-this && echo SECRET-IN-ENV\n",
                "echo done\n",
            ),
            "run_timeout": 10,
        }),
    );
    assert_eq!(hostile["status"], "Success", "{hostile}");
    assert_eq!(hostile["run_result"]["stdout"], "done\n", "{hostile}");
    assert!(!std::path::Path::new("/usr/rlvr-bash-written").exists());
    // A fork bomb is contained by the process limit and the clock (in the foreground it
    // fails; in the background it dies with the script, which has ended); the server answers.
    let bomb = run_code(
        &served,
        &json!({"language": "bash", "code": "bomb() { bomb | bomb; }; bomb", "run_timeout": 2}),
    );
    assert_eq!(bomb["status"], "Failed", "{bomb}");
    let detached = run_code(
        &served,
        &json!({"language": "bash", "code": "bomb() { bomb | bomb & }; bomb\necho left", "run_timeout": 2}),
    );
    assert_eq!(detached["run_result"]["stdout"], "left\n", "{detached}");
    let after = run_code(&served, &json!({"language": "bash", "code": "echo alive"}));
    assert_eq!(after["run_result"]["stdout"], "alive\n", "{after}");
}

/// A Python server thread and client in one program: prints what the server answered.
const PYTHON_SELF_CALL: &str = "import socket, threading\nserver = socket.create_server(('127.0.0.1', 0))\ndef serve():\n    connection, _ = server.accept()\n    connection.sendall(connection.recv(100).upper())\nthreading.Thread(target=serve).start()\nclient = socket.create_connection(('localhost', server.getsockname()[1]), timeout=5)\nclient.sendall(b'ping')\nprint(client.recv(100).decode())\n";

/// The same in Node.js (run through the exec supervisor, as every compiled language is).
const NODE_SELF_CALL: &str = "const net = require('net');\nconst server = net.createServer((socket) => socket.on('data', (data) => socket.end(data.toString().toUpperCase())));\nserver.listen(0, '127.0.0.1', () => {\n  const client = net.connect(server.address().port, '127.0.0.1', () => client.write('ping'));\n  client.on('data', (data) => { console.log(data.toString()); client.destroy(); server.close(); });\n});\n";

/// Python that connects to 127.0.0.1:`port` and prints what it got, or the errno's name.
fn connect_to(port: u16) -> String {
    format!(
        "import errno, socket\ntry:\n    client = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    client.sendall(b'GET /v1/ping HTTP/1.0\\r\\n\\r\\n')\n    print('reached', client.recv(20))\nexcept OSError as error:\n    print(errno.errorcode.get(error.errno, error.errno))\n"
    )
}

/// Issue 35: `/run_code` gives each run a private loopback. Honest controls: a server and a
/// client in one program, in Python and in Node.js, talk over 127.0.0.1. Hostile: the
/// server's own port on the host's 127.0.0.1 is unreachable, and so is a listener a daemon of
/// an earlier request left behind. The judge keeps internet sockets refused.
#[test]
fn issue_35_serve_run_code_has_a_private_loopback_and_nothing_more() {
    let served = Served::start(&["--workers", "2"]);
    for (language, code) in [("python", PYTHON_SELF_CALL), ("nodejs", NODE_SELF_CALL)] {
        let answer = run_code(
            &served,
            &json!({"language": language, "code": code, "run_timeout": 20}),
        );
        assert_eq!(answer["status"], "Success", "{language}: {answer}");
        assert_eq!(
            answer["run_result"]["stdout"], "PING\n",
            "{language}: {answer}"
        );
    }

    let server_port: u16 = served
        .address
        .rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .expect("the server's port");
    let answer = run_code(
        &served,
        &json!({"language": "python", "code": connect_to(server_port)}),
    );
    assert_eq!(answer["run_result"]["stdout"], "ECONNREFUSED\n", "{answer}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let leave_a_listener = format!(
        "import os, socket\nserver = socket.create_server(('127.0.0.1', {port}))\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        while True:\n            connection, _ = server.accept()\n            connection.sendall(b'leaked')\n    os._exit(0)\nprint('listening')\n"
    );
    let answer = run_code(
        &served,
        &json!({"language": "python", "code": leave_a_listener}),
    );
    assert_eq!(answer["run_result"]["stdout"], "listening\n", "{answer}");
    let answer = run_code(
        &served,
        &json!({"language": "python", "code": connect_to(port)}),
    );
    assert_eq!(answer["run_result"]["stdout"], "ECONNREFUSED\n", "{answer}");

    // The judge: the same self-call gets no internet socket (its expected output is what a
    // refused socket prints, so a judge with loopback would score 0).
    let refused = "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    print('created')\nexcept PermissionError:\n    print('refused')\n";
    let response = served.post(
        "/v1/verify",
        &json!({"time_limit": 10, "jobs": [{
            "id": "judge",
            "response": format!("```python\n{refused}```"),
            "ground_truth": {"inputs": [""], "outputs": ["refused\n"]},
        }]}),
    );
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.json()["results"][0]["score"],
        1.0,
        "{}",
        response.body
    );
}

/// An honest TypeScript program: an interface, a typed function, stdin through Node's `fs`.
const TYPESCRIPT_SUM: &str = "import fs from \"fs\";\ninterface Pair { left: number; right: number }\nfunction sum(pair: Pair): number { return pair.left + pair.right; }\nconst [left, right] = fs.readFileSync(0, \"utf8\").trim().split(/\\s+/).map(Number);\nconsole.log(sum({ left, right }));\n";

/// Issue 35: `typescript` (and `ts`) through `/run_code`: `tsc` compiles in the sandbox, Node.js
/// runs the result. Honest controls: a typed program gets its answer, and a type error does
/// not stop a program (as SandboxFusion's `tsx`). Failure path: a compile past its
/// `compile_timeout` is a compile failure with no run. Hostile: a source that names a host
/// file (a `/// <reference>` and a `require` of it at compile time, a read at run time) and
/// the server's own port find nothing, and the host file's secret is nowhere in the answer.
#[test]
fn issue_35_serve_typescript_compiles_in_the_sandbox_and_hostile_sources_are_contained() {
    let served = Served::start(&["--workers", "2"]);
    for language in ["typescript", "ts"] {
        let answer = run_code(
            &served,
            &json!({"language": language, "code": TYPESCRIPT_SUM, "stdin": "20 22\n",
                    "run_timeout": 20, "compile_timeout": 60}),
        );
        assert_eq!(answer["status"], "Success", "{language}: {answer}");
        assert_eq!(answer["run_result"]["stdout"], "42\n", "{answer}");
        assert_eq!(answer["compile_result"], Value::Null, "{answer}");
    }
    let type_error = "const count: number = \"not a number\";\nconsole.log(count);\n";
    let answer = run_code(
        &served,
        &json!({"language": "typescript", "code": type_error, "compile_timeout": 60}),
    );
    assert_eq!(answer["status"], "Success", "{answer}");
    assert_eq!(answer["run_result"]["stdout"], "not a number\n", "{answer}");

    let answer = run_code(
        &served,
        &json!({"language": "typescript", "code": TYPESCRIPT_SUM, "compile_timeout": 0.05}),
    );
    assert_eq!(answer["status"], "Failed", "{answer}");
    assert_eq!(
        answer["compile_result"]["status"], "TimeLimitExceeded",
        "{answer}"
    );
    assert_eq!(answer["run_result"], Value::Null, "{answer}");

    let directory = tempfile::tempdir().expect("a temporary directory");
    let secret = "rlvr-typescript-secret-4181";
    let planted = directory.path().join("secret.ts");
    std::fs::write(&planted, format!("export = \"{secret}\";\n")).expect("plant the secret");
    let host_path = planted.display().to_string();
    let module = host_path.trim_end_matches(".ts");
    let server_port = served.address.rsplit(':').next().expect("a port");
    let hostile = format!(
        "/// <reference path=\"{host_path}\" />\nimport net from \"net\";\nimport fs from \"fs\";\nlet found = \"\";\ntry {{ found += require(\"{module}\"); }} catch (error) {{ console.log(\"require\", (error as any).code); }}\ntry {{ found += fs.readFileSync(\"{host_path}\", \"utf8\"); }} catch (error) {{ console.log(\"read\", (error as any).code); }}\nconsole.log(\"found\", found.length);\nconst client = net.connect({server_port}, \"127.0.0.1\");\nclient.on(\"connect\", () => {{ console.log(\"server reached\"); client.destroy(); }});\nclient.on(\"error\", (error: any) => console.log(\"server\", error.code));\n"
    );
    let answer = run_code(
        &served,
        &json!({"language": "typescript", "code": hostile, "compile_timeout": 60}),
    );
    assert_eq!(answer["status"], "Success", "{answer}");
    assert_eq!(
        answer["run_result"]["stdout"],
        "require MODULE_NOT_FOUND\nread ENOENT\nfound 0\nserver ECONNREFUSED\n",
        "{answer}"
    );
    assert!(!answer.to_string().contains(secret), "{answer}");
}

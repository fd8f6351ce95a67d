//! Issue 35: a private loopback (`Network::PrivateLoopback`, what `/run_code` asks for). A
//! program may serve and call itself on 127.0.0.1 and `localhost` (the honest controls); it
//! reaches nothing else: no interface but `lo`, not the host's loopback, not a listener of
//! another run, earlier or concurrent (the hostile programs). A run that does not ask keeps
//! every internet socket refused.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use rlvr_sandbox::{
    Network, Program, RunOutcome, RunRequest, RunVerdict, Sandbox, SandboxConfig, SpawnRequest,
    StdioSpec,
};

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).expect("sandbox setup")
}

fn run(sandbox: &Sandbox, network: Network, source: &str) -> RunOutcome {
    let request = RunRequest {
        network,
        ..RunRequest::python(source)
    };
    sandbox.run(&request).expect("run")
}

fn stdout_of(outcome: &RunOutcome) -> String {
    assert_eq!(
        outcome.verdict,
        RunVerdict::Ok,
        "stderr: {}",
        String::from_utf8_lossy(&outcome.stderr)
    );
    String::from_utf8_lossy(&outcome.stdout).into_owned()
}

/// A server thread and a client in one program, on `host`.
fn server_and_client(host: &str) -> String {
    format!(
        r#"
import socket, threading
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(("127.0.0.1", 0))
server.listen(1)
port = server.getsockname()[1]
def serve():
    connection, _ = server.accept()
    connection.sendall(connection.recv(100).upper())
    connection.close()
threading.Thread(target=serve).start()
client = socket.create_connection(({host:?}, port), timeout=5)
client.sendall(b"ping")
print(client.recv(100).decode())
"#
    )
}

#[test]
fn issue_35_a_program_serves_and_calls_itself_on_127_0_0_1() {
    let outcome = run(
        &sandbox(),
        Network::PrivateLoopback,
        &server_and_client("127.0.0.1"),
    );
    assert_eq!(stdout_of(&outcome), "PING\n");
}

#[test]
fn issue_35_localhost_names_the_private_loopback() {
    let outcome = run(
        &sandbox(),
        Network::PrivateLoopback,
        &server_and_client("localhost"),
    );
    assert_eq!(stdout_of(&outcome), "PING\n");
}

#[test]
fn issue_35_ipv6_loopback_works_too() {
    let source = r#"
import socket
server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
server.bind(("::1", 0))
server.listen(1)
client = socket.create_connection(("::1", server.getsockname()[1]), timeout=5)
connection, _ = server.accept()
client.sendall(b"six")
print(connection.recv(10).decode())
"#;
    let outcome = run(&sandbox(), Network::PrivateLoopback, source);
    assert_eq!(stdout_of(&outcome), "six\n");
}

#[test]
fn issue_35_without_a_private_loopback_internet_sockets_stay_refused() {
    let source = r#"
import socket
for family in (socket.AF_INET, socket.AF_INET6):
    try:
        socket.socket(family, socket.SOCK_STREAM)
        print("created")
    except PermissionError:
        print("refused")
"#;
    let outcome = run(&sandbox(), Network::Isolated, source);
    assert_eq!(stdout_of(&outcome), "refused\nrefused\n");
}

/// Hostile: the namespace has `lo` and nothing else, no route anywhere, and the families that
/// could configure or sniff it (netlink, packet) stay refused.
#[test]
fn issue_35_hostile_nothing_but_lo_and_no_way_to_change_it() {
    let source = r#"
import errno, socket
interfaces = [line.split(":")[0].strip() for line in open("/proc/self/net/dev").readlines()[2:]]
print("interfaces", interfaces)
for address in ("10.0.0.1", "192.168.1.1", "1.1.1.1"):
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.settimeout(2)
    try:
        client.connect((address, 80))
        print(address, "connected")
    except OSError as error:
        print(address, errno.errorcode.get(error.errno, error.errno))
for name in ("AF_NETLINK", "AF_PACKET"):
    try:
        socket.socket(getattr(socket, name), socket.SOCK_RAW)
        print(name, "created")
    except PermissionError:
        print(name, "refused")
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print("raw created")
except PermissionError:
    print("raw refused")
"#;
    let outcome = run(&sandbox(), Network::PrivateLoopback, source);
    assert_eq!(
        stdout_of(&outcome),
        "interfaces ['lo']\n10.0.0.1 ENETUNREACH\n192.168.1.1 ENETUNREACH\n\
         1.1.1.1 ENETUNREACH\nAF_NETLINK refused\nAF_PACKET refused\nraw refused\n"
    );
}

/// Hostile: a server on the host's 127.0.0.1 is not reachable from inside (the connection is
/// refused by the private `lo`, and the host's listener never sees one).
#[test]
fn issue_35_hostile_the_hosts_loopback_is_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a host listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("its address").port();
    let source = format!(
        r#"
import errno, socket
for host in ("127.0.0.1", "localhost"):
    try:
        socket.create_connection((host, {port}), timeout=2)
        print(host, "connected")
    except OSError as error:
        print(host, errno.errorcode.get(error.errno, error.errno))
"#
    );
    let outcome = run(&sandbox(), Network::PrivateLoopback, &source);
    assert_eq!(
        stdout_of(&outcome),
        "127.0.0.1 ECONNREFUSED\nlocalhost ECONNREFUSED\n"
    );
    assert_eq!(
        listener.accept().map(drop).map_err(|error| error.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "the host's listener was reached"
    );
}

/// A program that listens on `port` and says so on stdout, leaving a double-forked daemon
/// holding the listener, then waits to be killed (or exits at once with `exit`).
fn listener_source(port: u16, exit: bool) -> String {
    format!(
        r#"
import os, socket, sys, time
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", {port}))
server.listen(8)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            connection, _ = server.accept()
            connection.sendall(b"leaked")
            connection.close()
    os._exit(0)
print("listening", flush=True)
if not {exit}:
    time.sleep(60)
"#,
        exit = if exit { "True" } else { "False" },
    )
}

fn connect_source(port: u16) -> String {
    format!(
        r#"
import errno, socket
try:
    client = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    print("reached", client.recv(10).decode())
except OSError as error:
    print(errno.errorcode.get(error.errno, error.errno))
"#
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a port")
        .port()
}

/// Hostile: a listener (held by a daemon) left by one run is not reachable by the next: each
/// run has a namespace of its own, gone with its process tree.
#[test]
fn issue_35_hostile_a_listener_left_by_one_run_is_unreachable_by_the_next() {
    let sandbox = sandbox();
    let port = free_port();
    let left = run(
        &sandbox,
        Network::PrivateLoopback,
        &listener_source(port, true),
    );
    assert_eq!(stdout_of(&left), "listening\n");
    let next = run(&sandbox, Network::PrivateLoopback, &connect_source(port));
    assert_eq!(stdout_of(&next), "ECONNREFUSED\n");
}

/// Hostile: nor by a run at the same time (the listener is up and its run still alive).
#[test]
fn issue_35_hostile_a_concurrent_runs_listener_is_unreachable() {
    let sandbox = sandbox();
    let port = free_port();
    let mut request = SpawnRequest::new(Program::Python {
        source: listener_source(port, false),
    });
    request.network = Network::PrivateLoopback;
    request.stderr = StdioSpec::Null;
    let mut listening = sandbox.spawn(request).expect("spawn the listener");
    let mut line = String::new();
    BufReader::new(listening.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("read");
    assert_eq!(line, "listening\n");
    let other = run(&sandbox, Network::PrivateLoopback, &connect_source(port));
    assert_eq!(stdout_of(&other), "ECONNREFUSED\n");
    assert!(
        listening
            .wait_until(Instant::now() + Duration::from_millis(10))
            .expect("wait")
            .is_none(),
        "the listener's run was still alive while the other connected"
    );
    listening.kill();
}

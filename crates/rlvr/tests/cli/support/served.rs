//! A running `rlvr serve` for the tests: started on a free loopback port (the URL it prints
//! first), spoken to in raw HTTP/1.1 so that disconnects, partial requests and oversized
//! bodies are exactly what a client sends, and killed when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::rlvr;

/// How long a test waits for an answer before it calls the server hung.
const READ_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `rlvr serve`.
pub struct Served {
    child: Child,
    /// `host:port` it listens on.
    pub address: String,
    /// `host:port` of its metrics-only port ([`Served::start_with_metrics_port`]).
    pub metrics_address: Option<String>,
    /// Where its log goes, when the test asked for one ([`Served::start_logged`]).
    log: Option<tempfile::NamedTempFile>,
}

impl Served {
    /// `rlvr serve --addr 127.0.0.1:0 EXTRA...`, its log on the test's stderr.
    pub fn start(extra: &[&str]) -> Self {
        Self::start_at("127.0.0.1:0", extra)
    }

    /// `rlvr serve --addr ADDRESS EXTRA...`.
    pub fn start_at(address: &str, extra: &[&str]) -> Self {
        let mut command = rlvr();
        command.args(["serve", "--addr", address]).args(extra);
        Self::start_with(command)
    }

    /// `rlvr serve --addr 127.0.0.1:0 EXTRA...` with its log in a file ([`Served::log`]).
    pub fn start_logged(extra: &[&str]) -> Self {
        let mut command = rlvr();
        command.args(["serve", "--addr", "127.0.0.1:0"]).args(extra);
        Self::start_logged_with(command)
    }

    /// A prepared command that runs `rlvr serve ...` (as a sandbox-mode caller, under a
    /// shell's `ulimit`, with an environment), its log in a file.
    pub fn start_logged_with(mut command: Command) -> Self {
        let log = tempfile::NamedTempFile::new().expect("log file");
        command.stderr(log.reopen().expect("log file reopens"));
        let mut served = Self::start_with(command);
        served.log = Some(log);
        served
    }

    /// `rlvr serve --addr 127.0.0.1:0 --metrics-listen 127.0.0.1:0 EXTRA...`: the metrics-only
    /// port's address is the second line of stdout.
    pub fn start_with_metrics_port(extra: &[&str]) -> Self {
        let mut command = rlvr();
        command
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(["--metrics-listen", "127.0.0.1:0"])
            .args(extra);
        let (child, mut addresses) = Self::spawn(command, 2);
        let metrics_address = addresses.pop();
        Self {
            child,
            address: addresses.pop().expect("the main address"),
            metrics_address,
            log: None,
        }
    }

    /// A prepared command that runs `rlvr serve ...`; its stderr is whatever the command says
    /// (the test's own by default).
    pub fn start_with(command: Command) -> Self {
        let (child, mut addresses) = Self::spawn(command, 1);
        Self {
            child,
            address: addresses.pop().expect("the main address"),
            metrics_address: None,
            log: None,
        }
    }

    /// Starts the command and reads the first `urls` lines of its stdout, each a bound URL.
    fn spawn(mut command: Command, urls: usize) -> (Child, Vec<String>) {
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("rlvr serve starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let addresses = (0..urls)
            .map(|_| {
                let mut line = String::new();
                stdout
                    .read_line(&mut line)
                    .expect("the bound addresses are printed first");
                line.trim()
                    .strip_prefix("http://")
                    .unwrap_or_else(|| panic!("a URL line, got {line:?}"))
                    .to_owned()
            })
            .collect();
        (child, addresses)
    }

    /// `GET PATH` on the metrics-only port, without a token.
    pub fn get_metrics_port(&self, path: &str) -> Response {
        let address = self
            .metrics_address
            .as_ref()
            .expect("the server was started with a metrics port");
        request(address, "GET", path, &[], b"")
    }

    /// What the server logged so far ([`Served::start_logged`] only).
    pub fn log(&self) -> String {
        let log = self
            .log
            .as_ref()
            .expect("the server was started with a log");
        std::fs::read_to_string(log.path()).unwrap_or_default()
    }

    /// A new connection with the tests' read timeout.
    pub fn connect(&self) -> TcpStream {
        connect(&self.address)
    }

    /// Sends `raw` bytes on a new connection and returns all the server answered before it
    /// closed (empty when it closed without a word).
    pub fn exchange(&self, raw: &[u8]) -> String {
        exchange(&self.address, raw)
    }

    /// [`Served::exchange`] of a text request.
    pub fn exchange_text(&self, raw: &str) -> String {
        self.exchange(raw.as_bytes())
    }

    /// One request (`Connection: close`, JSON content type, `headers` added) and its answer.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        request(&self.address, method, path, headers, body)
    }

    /// `GET PATH`.
    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    /// `POST PATH` with `body` as JSON.
    pub fn post(&self, path: &str, body: &Value) -> Response {
        self.request("POST", path, &[], body.to_string().as_bytes())
    }

    /// `POST PATH` with `body` as JSON, which must answer 200: the answer's JSON.
    pub fn post_ok(&self, path: &str, body: &Value) -> Value {
        let response = self.post(path, body);
        assert_eq!(response.status, 200, "{path}: {}", response.body);
        response.json()
    }

    /// `POST PATH` with raw bytes (bodies that are JSON only to Python: lone surrogates,
    /// `NaN`).
    pub fn post_bytes(&self, path: &str, body: &[u8]) -> Response {
        self.request("POST", path, &[], body)
    }

    /// The value of metric `name` in `/metrics` (a line `NAME VALUE`).
    pub fn metric(&self, name: &str) -> f64 {
        let text = self.get("/metrics").body;
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("metric {name} in {text}"))
    }

    /// Sends SIGTERM to the server (our child, by its id).
    pub fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// The server's exit status once it ended within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        super::wait_for(limit, || self.child.try_wait().expect("try_wait"))
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Served {
    /// SIGTERM first: the server drains and removes its sandboxes' cgroups; SIGKILL only if it
    /// has not exited after ten seconds.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        if self.wait_exit(Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A new connection to `address` with the tests' read timeout.
pub fn connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(READ_TIMEOUT))
        .expect("read timeout");
    stream
}

/// Sends `raw` bytes to `address` on a new connection and returns all it answered before it
/// closed (empty when it closed without a word).
pub fn exchange(address: &str, raw: &[u8]) -> String {
    let mut stream = connect(address);
    // A server may answer (413) and close before reading everything: ignore a reset.
    let _ = stream.write_all(raw);
    read_all(&mut stream)
}

/// One request to `address` (`Connection: close`, JSON content type, `headers` added) and
/// its answer.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut raw = head.into_bytes();
    raw.extend_from_slice(body);
    Response::parse(&exchange(address, &raw))
}

/// Reads until the server closes (or the read timeout).
pub fn read_all(stream: &mut TcpStream) -> String {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

/// An HTTP answer, its chunked body decoded.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// Parses a raw answer; panics (the test fails) when it is not HTTP.
    pub fn parse(text: &str) -> Self {
        let (head, body) = text
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("an HTTP response, got {text:?}"));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("a status line in {text:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
            .collect();
        let chunked = headers.iter().any(|(name, value)| {
            name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked")
        });
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        };
        Self {
            status,
            headers,
            body,
        }
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("{error}: body {:?}", self.body))
    }

    /// A header's value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The body of a `Transfer-Encoding: chunked` answer.
pub fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest.get(size + 2..).unwrap_or("");
    }
    out
}

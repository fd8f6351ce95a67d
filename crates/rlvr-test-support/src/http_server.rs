//! A local HTTP/1.1 test server: one request per connection, answered by a closure.
//!
//! The tests of downloads (`rlvr fetch`, `rlvr_hub::download`) need a server whose answers
//! they choose: a fixed body at one path and 404 elsewhere, byte ranges, bodies cut short.
//! [`Server::start`] binds `127.0.0.1` on a free port and answers every request on one
//! background thread, in the order the connections arrive, with what the handler returns for
//! it. The server writes the status line, the handler's headers, `Content-Length` (always the
//! length of the whole body) and `Connection: close`, then the body, then closes the
//! connection. It remembers every request and counts every connection, so a test can check
//! what was asked of it. Dropping the [`Server`] stops it.
//!
//! ```no_run
//! use rlvr_test_support::http_server::{Response, Server};
//!
//! let server = Server::start(|request| match request.path.as_str() {
//!     "/data.jsonl" => Response::ok(b"{}\n".to_vec()),
//!     _ => Response::not_found(),
//! });
//! let url = format!("{}/data.jsonl", server.url());
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long the server waits for a client to send its request before giving up on it, so
/// that a client which connects and says nothing cannot stop the server for good.
const READ_LIMIT: Duration = Duration::from_secs(60);

/// One request as the server read it: the request line and the headers (no body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method, such as `GET`.
    pub method: String,
    /// The request target as sent, such as `/datasets/owner/name/resolve/main/data.jsonl`.
    pub path: String,
    /// The headers in the order they came, names as sent, values without surrounding blanks.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The value of the first header called `name` (compared ignoring ASCII case), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// What the server answers to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code, such as 200.
    pub status: u16,
    /// Headers to send besides `Content-Length` and `Connection`, which the server writes.
    pub headers: Vec<(String, String)>,
    /// The body; `Content-Length` announces all of it.
    pub body: Vec<u8>,
    /// When set, the server sends only this many bytes of the body and then closes the
    /// connection: a download broken in the middle.
    pub cut_after: Option<usize>,
}

impl Response {
    /// A response with `status`, no extra headers and an empty body.
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            cut_after: None,
        }
    }

    /// `200 OK` with `body`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Response {
        Response::new(200).with_body(body)
    }

    /// `404 Not Found` with an empty body.
    pub fn not_found() -> Response {
        Response::new(404)
    }

    /// This response with `body` instead of its body.
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Response {
        self.body = body.into();
        self
    }

    /// This response with one more header.
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// This response cut short: only the first `bytes` bytes of the body are sent (at most
    /// the whole body), then the connection is closed although `Content-Length` promised more.
    pub fn cut_after(mut self, bytes: usize) -> Response {
        self.cut_after = Some(bytes);
        self
    }
}

/// The reason phrase of the status codes the tests use (empty for others, which HTTP allows).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        404 => "Not Found",
        416 => "Range Not Satisfiable",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// What the server thread shares with its [`Server`] handle.
#[derive(Debug, Default)]
struct Shared {
    /// Connections accepted, whether or not a request came on them.
    connections: AtomicUsize,
    /// Every request read, in order.
    requests: Mutex<Vec<Request>>,
    /// Set when the handle is dropped: the thread ends at its next connection.
    stopping: AtomicBool,
}

/// A running local HTTP server (see the [module documentation](self)); dropping it stops it.
#[derive(Debug)]
pub struct Server {
    address: SocketAddr,
    shared: Arc<Shared>,
}

impl Server {
    /// Starts a server on a free port of `127.0.0.1` that answers each request with
    /// `handler(request)`. Requests are handled one at a time, so the handler may keep state
    /// (such as how many responses it has cut short).
    pub fn start(handler: impl FnMut(&Request) -> Response + Send + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local test server");
        let address = listener.local_addr().expect("the test server's address");
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        std::thread::spawn(move || serve(&listener, &thread_shared, handler));
        Server { address, shared }
    }

    /// The server's base URL, `http://127.0.0.1:PORT`, without a final slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// How many connections the server has accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// The requests the server has read so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wakes the thread blocked in `accept`; it sees `stopping` and ends.
        let _ = TcpStream::connect(self.address);
    }
}

/// The server thread: accepts connections until the handle is dropped.
fn serve(listener: &TcpListener, shared: &Shared, mut handler: impl FnMut(&Request) -> Response) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let Some(request) = read_request(&stream) else {
            continue;
        };
        shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        // A client that went away is the test's business, not the server's: write errors are
        // ignored.
        let _ = write_response(&stream, &handler(&request));
    }
}

/// Reads the request line and headers; `None` when the client sent no complete request line.
fn read_request(stream: &TcpStream) -> Option<Request> {
    stream.set_read_timeout(Some(READ_LIMIT)).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    Some(Request {
        method,
        path,
        headers,
    })
}

/// Writes the head (with `Content-Length` and `Connection: close`) and the body, or its
/// first `cut_after` bytes.
fn write_response(mut stream: &TcpStream, response: &Response) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        response.body.len()
    ));
    stream.write_all(head.as_bytes())?;
    let sent = response
        .cut_after
        .map_or(response.body.len(), |cut| cut.min(response.body.len()));
    stream.write_all(&response.body[..sent])?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::Shutdown;

    /// Sends `request` raw and returns everything the server wrote before closing.
    fn exchange(server: &Server, request: &str) -> String {
        let mut stream = TcpStream::connect(server.address).expect("connect");
        stream.write_all(request.as_bytes()).expect("send");
        stream.shutdown(Shutdown::Write).expect("end the request");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("receive");
        answer
    }

    #[test]
    fn answers_with_the_handler_s_response_and_its_length() {
        let server = Server::start(|request| match request.path.as_str() {
            "/here" => Response::ok("hello").with_header("X-Seen", request.method.clone()),
            _ => Response::not_found(),
        });
        assert_eq!(
            exchange(&server, "GET /here HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nX-Seen: GET\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
        );
        assert_eq!(
            exchange(&server, "GET /else HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].header("host"), Some("x"));
        assert_eq!(requests[1].header("Host"), None);
        assert_eq!(server.connections(), 2);
    }

    #[test]
    fn a_cut_response_promises_the_whole_body_and_sends_the_start() {
        let server = Server::start(|_| Response::ok("0123456789").cut_after(4));
        assert_eq!(
            exchange(&server, "GET / HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123"
        );
    }

    #[test]
    fn a_connection_without_a_request_is_counted_but_not_answered() {
        let server = Server::start(|_| Response::ok("unused"));
        assert_eq!(exchange(&server, ""), "");
        assert_eq!(server.connections(), 1);
        assert!(server.requests().is_empty());
    }
}

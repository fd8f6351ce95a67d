//! Streaming, parallel reading of a JSON Lines file, rows delivered in file order.
//!
//! One thread reads the file in chunks that end on a line boundary; when asked, a second thread
//! feeds every chunk, in file order, to SHA-256 as soon as it is read, so hashing overlaps with
//! parsing and neither waits for the other; worker threads, one per core, split their chunk into
//! lines and run the caller's `map` on each; the calling thread puts the chunks back in order and
//! hands each row, with its position, to the caller's `consume`. With [`try_for_each_line`],
//! `consume` can stop the read: its first error (a full disk while writing the rows out) ends
//! reading at once, and the chunks already read are dropped unparsed.
//!
//! Memory is bounded: a fixed pool of chunk buffers circulates between the stages and a chunk's
//! buffer is reused only after its rows were consumed and it was hashed, so at most
//! `(2 * workers + 2) * chunk_bytes` of file data is held (plus a line longer than a chunk, which
//! grows its buffer up to [`MAX_LINE_BYTES`]).
//!
//! Plain scoped threads and channels are used rather than rayon: this is a pipeline whose
//! workers block on a channel, which rayon's work-stealing pool is not meant for.
//!
//! Lines end with `\n`; a `\r` before it is dropped (CRLF files); the last line may lack its
//! newline. A line holding only spaces, tabs or carriage returns is blank: it is counted but is
//! not a row. Row index = zero-based ordinal of the non-blank lines.

use std::io::Read;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use sha2::{Digest, Sha256};

use crate::error::{LineError, ReadError};
use rlvr_python_compat::json::{self, ValueRef};

/// A line longer than this stops reading with [`ReadError::LineTooLong`].
pub const MAX_LINE_BYTES: usize = 1 << 30;

/// How to read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Target chunk size in bytes (a chunk always ends on a line boundary).
    pub chunk_bytes: usize,
    /// Parsing threads.
    pub workers: usize,
    /// Compute the SHA-256 of the whole file while reading.
    pub sha256: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            chunk_bytes: 4 << 20,
            workers: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            sha256: false,
        }
    }
}

/// Where a row is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct LinePosition {
    /// Zero-based ordinal among the non-blank lines.
    pub row: u64,
    /// 1-based line number (blank lines counted).
    pub line: u64,
    /// Byte offset of the first byte of the line.
    pub byte_offset: u64,
}

/// What reading the whole file found, besides the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSummary {
    /// Bytes in the file.
    pub bytes: u64,
    /// Lines, blank ones included.
    pub lines: u64,
    /// Non-blank lines.
    pub rows: u64,
    /// Lines holding only whitespace.
    pub blank_lines: u64,
    /// SHA-256 of the file, when asked for.
    pub sha256: Option<[u8; 32]>,
}

/// Validates UTF-8 and parses one line (without its line end) as Python's `json.loads` would,
/// rejecting a carriage return inside the line as Python's universal-newline reading would split
/// it there.
pub fn parse_line(line: &[u8]) -> Result<ValueRef<'_>, LineError> {
    Line { bytes: line }.parse()
}

/// One non-blank line handed to the `map` of [`for_each_line`].
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// The line without its line end.
    pub bytes: &'a [u8],
}

impl<'a> Line<'a> {
    /// Validates UTF-8 and parses the line as [`parse_line`] does.
    pub fn parse(&self) -> Result<ValueRef<'a>, LineError> {
        let line = self.bytes;
        let text = match simdutf8::basic::from_utf8(line) {
            Ok(text) => text,
            Err(_) => {
                let offset = simdutf8::compat::from_utf8(line)
                    .map_or_else(|error| error.valid_up_to(), |_| 0);
                return Err(LineError::InvalidUtf8 { offset });
            }
        };
        // The parser rejects a raw carriage return inside a string (a control character) and
        // notes one between tokens (JSON whitespace); either way the line would have been split
        // by Python, so that is what is reported, looked up only on this rare path.
        let carriage_return =
            || memchr::memchr(b'\r', line).map(|offset| LineError::CarriageReturn { offset });
        match json::parse_noting_carriage_return(text) {
            Ok((value, false)) => Ok(value),
            Ok((value, true)) => carriage_return().map_or(Ok(value), Err),
            Err(source) => {
                Err(carriage_return().unwrap_or(LineError::InvalidJson { error: source }))
            }
        }
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|&byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

fn strip_carriage_return(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn io_error(path: &Path, source: std::io::Error) -> ReadError {
    ReadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Opens `path` for reading, refusing directories with a clear error.
pub(crate) fn open(path: &Path) -> Result<(std::fs::File, u64), ReadError> {
    let metadata = std::fs::metadata(path).map_err(|source| io_error(path, source))?;
    if metadata.is_dir() {
        return Err(ReadError::Directory {
            path: path.to_path_buf(),
        });
    }
    let file = std::fs::File::open(path).map_err(|source| io_error(path, source))?;
    Ok((file, metadata.len()))
}

/// A chunk of the file: whole lines, in a pool buffer shared by the parsing worker and the
/// hashing thread; the last of them to let go of it returns the buffer to the reader
/// ([`Arc::into_inner`] hands it to exactly one of them).
struct Chunk {
    sequence: u64,
    /// A pool buffer; only `data[..length]` belongs to this chunk (the rest is stale bytes kept
    /// initialised so that refilling a recycled buffer never zeroes it again).
    data: Vec<u8>,
    length: usize,
    start_offset: u64,
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        &self.data[..self.length]
    }
}

/// Returns the chunk's buffer to the reader when this was the last reference to it.
fn release(chunk: Arc<Chunk>, recycle_sender: &mpsc::Sender<Vec<u8>>) {
    if let Some(chunk) = Arc::into_inner(chunk) {
        // The reader may have finished already; then the buffer is simply dropped.
        let _ = recycle_sender.send(chunk.data);
    }
}

struct ChunkOutput<T> {
    chunk: Arc<Chunk>,
    lines: u64,
    blank_lines: u64,
    /// (line ordinal within the chunk, byte offset within the chunk, mapped value)
    rows: Vec<(u64, u64, T)>,
}

/// Reads every line of `path`: `map` runs on worker threads for each non-blank line (without
/// its line end), and `consume` runs on the calling thread for each result, in file order.
///
/// Only problems with the file itself are errors; what `map` makes of a bad line is up to it
/// (typically a `Result` carrying a [`LineError`]).
///
/// Threads: one reader (`read()` into pooled buffers, cut after the last newline), one hasher
/// when `options.sha256` (hashes each chunk in file order as soon as it is read, so the hash
/// is never behind parsing nor parsing behind the hash), `options.workers` parsers, and the
/// calling thread putting results back in order.
pub fn for_each_line<T, Map, Consume>(
    path: &Path,
    options: &ReadOptions,
    map: Map,
    mut consume: Consume,
) -> Result<ReadSummary, ReadError>
where
    T: Send,
    Map: Fn(Line<'_>) -> T + Sync,
    Consume: FnMut(LinePosition, T),
{
    try_for_each_line(path, options, map, |position, value| {
        consume(position, value);
        Ok::<(), ReadError>(())
    })
}

/// [`for_each_line`] whose `consume` can stop the read: its first error is returned once every
/// thread has ended, and reading stops at once (the reader sends no new chunk; chunks already
/// read are dropped without running `map`), so at most the buffer pool, `(2 * workers + 2) *
/// chunk_bytes`, is read past the row that failed. A problem with the file is an `E` too.
pub fn try_for_each_line<T, E, Map, Consume>(
    path: &Path,
    options: &ReadOptions,
    map: Map,
    mut consume: Consume,
) -> Result<ReadSummary, E>
where
    T: Send,
    E: From<ReadError>,
    Map: Fn(Line<'_>) -> T + Sync,
    Consume: FnMut(LinePosition, T) -> Result<(), E>,
{
    let (file, _) = open(path)?;
    let workers = options.workers.max(1);
    let pool_size = 2 * workers + 2;
    let chunk_bytes = options.chunk_bytes.max(1024);
    let (chunk_sender, chunk_receiver) = mpsc::sync_channel::<Arc<Chunk>>(pool_size);
    let chunk_receiver = Mutex::new(chunk_receiver);
    let (output_sender, output_receiver) = mpsc::channel::<thread::Result<ChunkOutput<T>>>();
    // Set when `map` or `consume` panicked or `consume` failed: the reader stops, the rest is
    // drained (unparsed), and the panic is resumed, or the error returned, on the calling thread
    // once every thread has ended (unwinding at once would leave the reader waiting for buffers
    // that never come back: a deadlock).
    let stop = AtomicBool::new(false);
    let (recycle_sender, recycle_receiver) = mpsc::channel::<Vec<u8>>();
    let (hash_sender, hash_receiver) = if options.sha256 {
        let (sender, receiver) = mpsc::sync_channel::<Arc<Chunk>>(pool_size);
        (Some(sender), Some(receiver))
    } else {
        (None, None)
    };
    std::thread::scope(|scope| {
        let hasher = hash_receiver.map(|hash_receiver| {
            let recycle_sender = recycle_sender.clone();
            scope.spawn(move || {
                let mut hasher = Sha256::new();
                for chunk in hash_receiver {
                    hasher.update(chunk.bytes());
                    release(chunk, &recycle_sender);
                }
                <[u8; 32]>::from(hasher.finalize())
            })
        });
        let reader = scope.spawn({
            let path = path.to_path_buf();
            let stop = &stop;
            move || {
                let senders = ChunkSenders {
                    parse: chunk_sender,
                    hash: hash_sender,
                };
                read_chunks(
                    file,
                    path,
                    chunk_bytes,
                    pool_size,
                    &senders,
                    &recycle_receiver,
                    stop,
                )
            }
        });
        for _ in 0..workers {
            let output_sender = output_sender.clone();
            let (chunk_receiver, map, stop) = (&chunk_receiver, &map, &stop);
            scope.spawn(move || parse_chunks(chunk_receiver, &output_sender, map, stop));
        }
        drop(output_sender);

        let mut summary = ReadSummary {
            bytes: 0,
            lines: 0,
            rows: 0,
            blank_lines: 0,
            sha256: None,
        };
        let mut pending = std::collections::BTreeMap::<u64, ChunkOutput<T>>::new();
        let mut next_sequence = 0;
        let mut panicked = None;
        let mut consumer_error = None;
        for output in output_receiver {
            let output = match output {
                Ok(output) if panicked.is_none() && consumer_error.is_none() => output,
                Ok(output) => {
                    release(output.chunk, &recycle_sender);
                    continue;
                }
                Err(payload) => {
                    panicked.get_or_insert(payload);
                    abandon(&stop, &mut pending, &recycle_sender);
                    continue;
                }
            };
            pending.insert(output.chunk.sequence, output);
            while let Some(output) = pending.remove(&next_sequence) {
                let start_offset = output.chunk.start_offset;
                let mut rows = output.rows.into_iter();
                let consumed = panic::catch_unwind(AssertUnwindSafe(|| {
                    for (line, offset, value) in rows.by_ref() {
                        let position = LinePosition {
                            row: summary.rows,
                            line: summary.lines + line + 1,
                            byte_offset: start_offset + offset,
                        };
                        summary.rows += 1;
                        consume(position, value)?;
                    }
                    Ok(())
                }));
                drop(rows);
                summary.lines += output.lines;
                summary.blank_lines += output.blank_lines;
                release(output.chunk, &recycle_sender);
                next_sequence += 1;
                match consumed {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        consumer_error = Some(error);
                        abandon(&stop, &mut pending, &recycle_sender);
                        break;
                    }
                    Err(payload) => {
                        panicked = Some(payload);
                        abandon(&stop, &mut pending, &recycle_sender);
                        break;
                    }
                }
            }
        }
        drop(recycle_sender);
        let reader_result = match reader.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let sha256 = match hasher.map(std::thread::ScopedJoinHandle::join) {
            None => None,
            Some(Ok(digest)) => Some(digest),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
        };
        if let Some(payload) = panicked {
            panic::resume_unwind(payload);
        }
        if let Some(error) = consumer_error {
            return Err(error);
        }
        summary.bytes = reader_result?;
        summary.sha256 = sha256;
        Ok(summary)
    })
}

/// A parsing worker: splits and maps the chunks it takes until none is left, handing each
/// back unparsed once the read stopped; a panic in `map` travels in its output.
fn parse_chunks<T>(
    chunk_receiver: &Mutex<mpsc::Receiver<Arc<Chunk>>>,
    output_sender: &mpsc::Sender<thread::Result<ChunkOutput<T>>>,
    map: &(impl Fn(Line<'_>) -> T + Sync),
    stop: &AtomicBool,
) {
    loop {
        let next = match chunk_receiver.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(chunk) = next else { return };
        let output = if stop.load(Ordering::Relaxed) {
            // Its rows would be thrown away: hand the buffer back unparsed.
            Ok(ChunkOutput {
                chunk,
                lines: 0,
                blank_lines: 0,
                rows: Vec::new(),
            })
        } else {
            panic::catch_unwind(AssertUnwindSafe(|| split_and_map(chunk, map)))
        };
        if output_sender.send(output).is_err() {
            return;
        }
    }
}

/// After a panic in the caller's functions or an error from `consume`: stops the reader and hands back the buffers of the
/// chunks waiting for their turn (the lost chunk's turn never comes).
fn abandon<T>(
    stop: &AtomicBool,
    pending: &mut std::collections::BTreeMap<u64, ChunkOutput<T>>,
    recycle_sender: &mpsc::Sender<Vec<u8>>,
) {
    stop.store(true, Ordering::Relaxed);
    for (_, output) in std::mem::take(pending) {
        release(output.chunk, recycle_sender);
    }
}

fn split_and_map<T>(chunk: Arc<Chunk>, map: &(impl Fn(Line<'_>) -> T + Sync)) -> ChunkOutput<T> {
    let data = chunk.bytes();
    let mut rows = Vec::new();
    let (mut lines, mut blank_lines, mut start) = (0, 0, 0);
    while start < data.len() {
        let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |found| start + found);
        let line = strip_carriage_return(&data[start..end]);
        if is_blank(line) {
            blank_lines += 1;
        } else {
            rows.push((lines, start as u64, map(Line { bytes: line })));
        }
        lines += 1;
        start = end + 1;
    }
    ChunkOutput {
        chunk,
        lines,
        blank_lines,
        rows,
    }
}

/// Reads up to `want` more bytes into `buffer[*filled..]`; returns true at end of file.
fn fill(
    file: &mut std::fs::File,
    path: &Path,
    buffer: &mut Vec<u8>,
    filled: &mut usize,
    want: usize,
) -> Result<bool, ReadError> {
    let target = *filled + want;
    if buffer.len() < target {
        buffer.resize(target, 0);
    }
    while *filled < target {
        match file.read(&mut buffer[*filled..target]) {
            Ok(0) => break,
            Ok(read) => *filled += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => return Err(io_error(path, source)),
        }
    }
    Ok(*filled < target)
}

/// Where the reader sends each chunk: to the parsers, and in file order to the hasher.
struct ChunkSenders {
    parse: mpsc::SyncSender<Arc<Chunk>>,
    hash: Option<mpsc::SyncSender<Arc<Chunk>>>,
}

/// Reads the file into chunks of whole lines; returns the number of bytes read. Stops early
/// when `stop` is set (a caller's function panicked, or `consume` failed).
fn read_chunks(
    mut file: std::fs::File,
    path: PathBuf,
    chunk_bytes: usize,
    pool_size: usize,
    senders: &ChunkSenders,
    recycle_receiver: &mpsc::Receiver<Vec<u8>>,
    stop: &AtomicBool,
) -> Result<u64, ReadError> {
    let mut carry: Vec<u8> = Vec::new();
    let (mut allocated, mut sequence, mut offset) = (0, 0u64, 0u64);
    let mut at_end = false;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut buffer = if allocated < pool_size {
            allocated += 1;
            Vec::new()
        } else {
            match recycle_receiver.recv() {
                Ok(buffer) => buffer,
                Err(_) => break,
            }
        };
        if buffer.len() < carry.len() {
            buffer.resize(carry.len(), 0);
        }
        buffer[..carry.len()].copy_from_slice(&carry);
        let mut filled = carry.len();
        carry.clear();
        if !at_end && filled < chunk_bytes {
            let want = chunk_bytes - filled;
            at_end = fill(&mut file, &path, &mut buffer, &mut filled, want)?;
        }
        // Cut after the last newline; a chunk without one grows until it has one or the file ends.
        loop {
            if let Some(last) = memchr::memrchr(b'\n', &buffer[..filled]) {
                carry.extend_from_slice(&buffer[last + 1..filled]);
                filled = last + 1;
                break;
            }
            if at_end {
                break;
            }
            if filled >= MAX_LINE_BYTES {
                return Err(ReadError::LineTooLong {
                    path,
                    byte_offset: offset,
                    limit: MAX_LINE_BYTES,
                });
            }
            let want = filled.max(chunk_bytes);
            at_end = fill(&mut file, &path, &mut buffer, &mut filled, want)?;
        }
        if filled == 0 {
            break;
        }
        let chunk = Arc::new(Chunk {
            sequence,
            data: buffer,
            length: filled,
            start_offset: offset,
        });
        if let Some(hash) = &senders.hash
            && hash.send(Arc::clone(&chunk)).is_err()
        {
            break;
        }
        if senders.parse.send(chunk).is_err() {
            break;
        }
        sequence += 1;
        offset += filled as u64;
        if at_end && carry.is_empty() {
            break;
        }
    }
    Ok(offset)
}

/// One line fetched by index, without its line end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRow {
    /// Where it is.
    pub position: LinePosition,
    /// The line's bytes.
    pub bytes: Vec<u8>,
}

/// The result of looking a row up by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowLookup {
    /// The row exists.
    Found(RawRow),
    /// The file has only `rows` rows.
    OutOfRange {
        /// How many rows the file has.
        rows: u64,
    },
}

/// What [`scan_rows`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan<T> {
    /// The whole file: `rows` rows in `bytes` bytes.
    Ended {
        /// Rows in the file.
        rows: u64,
        /// Bytes in the file.
        bytes: u64,
    },
    /// The visitor stopped the scan at a row, with this.
    Stopped(T),
}

/// Hands `visit` where each row starts, in file order, scanning for newlines only (nothing is
/// parsed or copied); `visit` can stop the scan. The one definition of a row that
/// [`read_row`] and [`crate::DatasetRows`] share with [`for_each_line`]: a non-blank line.
pub(crate) fn scan_rows<T>(
    file: &mut std::fs::File,
    path: &Path,
    mut visit: impl FnMut(LinePosition) -> std::ops::ControlFlow<T>,
) -> Result<Scan<T>, ReadError> {
    let mut block = vec![0u8; 1 << 20];
    let (mut rows, mut line, mut line_start, mut file_offset) = (0u64, 0u64, 0u64, 0u64);
    let mut has_content = false;
    loop {
        let read = file
            .read(&mut block)
            .map_err(|source| io_error(path, source))?;
        if read == 0 {
            return Ok(Scan::Ended {
                rows,
                bytes: file_offset,
            });
        }
        let data = &block[..read];
        let mut position = 0;
        while position < data.len() {
            let newline = memchr::memchr(b'\n', &data[position..]).map(|found| position + found);
            let end = newline.unwrap_or(data.len());
            if !has_content && !is_blank(&data[position..end]) {
                has_content = true;
                let start = LinePosition {
                    row: rows,
                    line: line + 1,
                    byte_offset: line_start,
                };
                if let std::ops::ControlFlow::Break(stopped) = visit(start) {
                    return Ok(Scan::Stopped(stopped));
                }
                rows += 1;
            }
            let Some(newline) = newline else {
                position = end;
                continue;
            };
            line += 1;
            has_content = false;
            line_start = file_offset + newline as u64 + 1;
            position = newline + 1;
        }
        file_offset += read as u64;
    }
}

/// Finds row `index` (zero-based, blank lines skipped) by scanning for newlines only; nothing
/// but the wanted line is parsed or copied.
pub fn read_row(path: &Path, index: u64) -> Result<RowLookup, ReadError> {
    let (mut file, _) = open(path)?;
    let scan = scan_rows(&mut file, path, |position| {
        if position.row == index {
            std::ops::ControlFlow::Break(position)
        } else {
            std::ops::ControlFlow::Continue(())
        }
    })?;
    match scan {
        Scan::Stopped(position) => Ok(RowLookup::Found(RawRow {
            position,
            bytes: read_line_at(&file, path, position.byte_offset)?,
        })),
        Scan::Ended { rows, .. } => Ok(RowLookup::OutOfRange { rows }),
    }
}

/// The line starting at `offset`, without its line end (`\n`, or `\r\n`).
fn read_line_at(file: &std::fs::File, path: &Path, offset: u64) -> Result<Vec<u8>, ReadError> {
    use std::os::unix::fs::FileExt;
    let mut bytes = Vec::new();
    let mut block = vec![0u8; 1 << 20];
    let mut at = offset;
    loop {
        let read = file
            .read_at(&mut block, at)
            .map_err(|source| io_error(path, source))?;
        let data = &block[..read];
        let newline = memchr::memchr(b'\n', data);
        let piece = &data[..newline.unwrap_or(read)];
        if bytes.len() + piece.len() > MAX_LINE_BYTES {
            return Err(ReadError::LineTooLong {
                path: path.to_path_buf(),
                byte_offset: offset,
                limit: MAX_LINE_BYTES,
            });
        }
        bytes.extend_from_slice(piece);
        if read == 0 || newline.is_some() {
            break;
        }
        at += read as u64;
    }
    if bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    Ok(bytes)
}

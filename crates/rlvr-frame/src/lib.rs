//! The one frame format of every channel between rlvr's processes: the engine and the warm
//! Python runner, the engine and the referee, the live relay between a test child and the
//! referee, the exec supervisor and its client, the red team's reward-function harness.
//!
//! # The format
//!
//! A frame is, back to back:
//!
//! 1. the header's length `N`: 4 bytes, an unsigned little-endian integer;
//! 2. the header: `N` bytes of JSON, an object;
//! 3. the payloads the header names: raw bytes, in the order and of the lengths the header
//!    lists (a frame whose header names none ends with the header).
//!
//! Bulk bytes (a program's source or image, a test's input and output) travel as payloads,
//! never escaped into the JSON; a reader learns each payload's length from the header before it
//! reads it. Every reader refuses a header longer than its channel's limit as soon as it has
//! the 4 length bytes, before reading or allocating the rest, so a peer that lies about a
//! length costs nothing. Which fields a header has is each channel's business (docs/runner.md,
//! "The frame format", lists the channels); the Python side is `runner/protocol.py`, which
//! every Python program that speaks to rlvr includes.
//!
//! This crate holds the format only: [`encode`] a frame, take frames out of bytes that arrive
//! a piece at a time ([`FrameBuffer`], for non-blocking pipes with deadlines), or read them
//! from a blocking reader ([`read_header`], [`read_payload`]).

#![forbid(unsafe_code)]

use std::io::{self, Read};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Bytes of the length that starts every frame.
pub const LENGTH_BYTES: usize = 4;

/// Why bytes are not a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The length names a header longer than the channel allows.
    #[error("a header of {length} bytes, over the limit of {limit}")]
    Oversized { length: usize, limit: usize },
    /// The header is not the JSON the channel expects.
    #[error("a malformed header: {0}")]
    Malformed(serde_json::Error),
    /// The stream ended inside a frame.
    #[error("the stream ended inside a frame")]
    Truncated,
    /// Reading failed.
    #[error("reading a frame failed: {0}")]
    Io(io::Error),
}

// The cause is in the message (which reaches results as a reason), so not in the chain.
impl From<io::Error> for FrameError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            Self::Truncated
        } else {
            Self::Io(error)
        }
    }
}

impl From<FrameError> for io::Error {
    fn from(error: FrameError) -> Self {
        match error {
            FrameError::Io(error) => error,
            FrameError::Truncated => io::ErrorKind::UnexpectedEof.into(),
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// A frame: `header` as JSON, then `payloads`.
pub fn encode<T: Serialize + ?Sized>(header: &T, payloads: &[&[u8]]) -> Vec<u8> {
    let header = serde_json::to_vec(header).expect("a header always serializes");
    encode_raw(&header, payloads)
}

/// A frame whose header is already JSON (a message relayed as it came).
pub fn encode_raw(header: &[u8], payloads: &[&[u8]]) -> Vec<u8> {
    let length = u32::try_from(header.len()).expect("a header fits in 4 GiB");
    let payload: usize = payloads.iter().map(|payload| payload.len()).sum();
    let mut bytes = Vec::with_capacity(LENGTH_BYTES + header.len() + payload);
    bytes.extend_from_slice(&length.to_le_bytes());
    bytes.extend_from_slice(header);
    for payload in payloads {
        bytes.extend_from_slice(payload);
    }
    bytes
}

/// A header's JSON as `T`.
pub fn parse<T: DeserializeOwned>(header: &[u8]) -> Result<T, FrameError> {
    serde_json::from_slice(header).map_err(FrameError::Malformed)
}

/// The header length the first [`LENGTH_BYTES`] of `bytes` announce, checked against `limit`.
fn header_length(bytes: [u8; LENGTH_BYTES], limit: usize) -> Result<usize, FrameError> {
    let length = u32::from_le_bytes(bytes) as usize;
    if length > limit {
        return Err(FrameError::Oversized { length, limit });
    }
    Ok(length)
}

/// Frames out of bytes that arrive a piece at a time: what was read goes in with
/// [`FrameBuffer::extend`], and complete headers and payloads come out.
#[derive(Debug, Default)]
pub struct FrameBuffer {
    bytes: Vec<u8>,
}

impl FrameBuffer {
    /// Appends bytes that arrived.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// Bytes held that no header or payload taken yet covers.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Drops everything held (the stream is abandoned).
    pub fn clear(&mut self) {
        self.bytes = Vec::new();
    }

    /// The next header, once all of it arrived; `Err` as soon as its length is over `limit`.
    pub fn take_header(&mut self, limit: usize) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(length) = self.bytes.first_chunk::<LENGTH_BYTES>() else {
            return Ok(None);
        };
        let length = header_length(*length, limit)?;
        if self.bytes.len() < LENGTH_BYTES + length {
            return Ok(None);
        }
        self.bytes.drain(..LENGTH_BYTES);
        Ok(self.take_exact(length))
    }

    /// Exactly `length` bytes (a payload), once they arrived.
    pub fn take_exact(&mut self, length: usize) -> Option<Vec<u8>> {
        if self.bytes.len() < length {
            return None;
        }
        let rest = self.bytes.split_off(length);
        Some(std::mem::replace(&mut self.bytes, rest))
    }
}

/// Reads the next header from a blocking reader: `Ok(None)` when the stream ends cleanly
/// before a frame, [`FrameError::Truncated`] when it ends inside one.
pub fn read_header(input: &mut impl Read, limit: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut length = [0u8; LENGTH_BYTES];
    let mut filled = 0;
    while filled < LENGTH_BYTES {
        match input.read(&mut length[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error.into()),
        }
    }
    let length = header_length(length, limit)?;
    read_payload(input, length).map(Some)
}

/// Reads exactly `length` bytes (a payload) from a blocking reader. The memory grows with what
/// arrives, not with what `length` claims.
pub fn read_payload(input: &mut impl Read, length: usize) -> Result<Vec<u8>, FrameError> {
    let mut payload = Vec::with_capacity(length.min(1 << 16));
    let wanted = u64::try_from(length).unwrap_or(u64::MAX);
    input.take(wanted).read_to_end(&mut payload)?;
    if payload.len() < length {
        return Err(FrameError::Truncated);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_the_length_the_json_header_then_the_payloads() {
        let frame = encode(&serde_json::json!({"op": "exit"}), &[b"ab", b"c"]);
        assert_eq!(&frame[..4], &13u32.to_le_bytes());
        assert_eq!(&frame[4..17], br#"{"op":"exit"}"#);
        assert_eq!(&frame[17..], b"abc");
        assert_eq!(encode_raw(b"{}", &[]), b"\x02\x00\x00\x00{}");
    }

    #[test]
    fn a_buffer_gives_frames_only_once_whole_whatever_the_pieces() {
        let mut stream = encode(&serde_json::json!({"size": 3}), &[b"xyz"]);
        stream.extend(encode_raw(br#"{"t":"end"}"#, &[]));
        for piece in [1, 2, 5, stream.len()] {
            let mut buffer = FrameBuffer::default();
            let mut headers = Vec::new();
            let mut payload = None;
            for chunk in stream.chunks(piece) {
                buffer.extend(chunk);
                if headers.is_empty() {
                    headers.extend(buffer.take_header(64).expect("under the limit"));
                }
                if headers.len() == 1 && payload.is_none() {
                    payload = buffer.take_exact(3);
                }
                if payload.is_some() {
                    headers.extend(buffer.take_header(64).expect("under the limit"));
                }
            }
            assert_eq!(
                headers,
                [br#"{"size":3}"#.to_vec(), br#"{"t":"end"}"#.to_vec()]
            );
            assert_eq!(payload.as_deref(), Some(&b"xyz"[..]));
            assert!(buffer.is_empty());
        }
    }

    #[test]
    fn a_header_over_the_limit_is_refused_from_its_length_alone() {
        let mut buffer = FrameBuffer::default();
        buffer.extend(&65u32.to_le_bytes());
        assert!(matches!(
            buffer.take_header(64),
            Err(FrameError::Oversized {
                length: 65,
                limit: 64
            })
        ));
        let mut reader: &[u8] = &u32::MAX.to_le_bytes();
        assert!(matches!(
            read_header(&mut reader, 1 << 20),
            Err(FrameError::Oversized { .. })
        ));
    }

    #[test]
    fn a_blocking_reader_tells_a_clean_end_from_a_cut_frame() {
        let frame = encode(&serde_json::json!({"n": 1}), &[b"payload"]);
        let mut whole: &[u8] = &frame;
        let header = read_header(&mut whole, 64)
            .expect("a frame")
            .expect("not the end");
        assert_eq!(parse::<serde_json::Value>(&header).expect("json")["n"], 1);
        assert_eq!(read_payload(&mut whole, 7).expect("payload"), b"payload");
        assert!(read_header(&mut whole, 64).expect("clean end").is_none());
        for cut in [2, 6, frame.len() - 1] {
            let mut reader = &frame[..cut];
            let result =
                read_header(&mut reader, 64).and_then(|_| read_payload(&mut reader, 7).map(drop));
            assert!(matches!(result, Err(FrameError::Truncated)), "cut at {cut}");
        }
        // A payload length nobody sends is not allocated up front.
        let mut empty: &[u8] = b"";
        assert!(matches!(
            read_payload(&mut empty, usize::MAX),
            Err(FrameError::Truncated)
        ));
    }

    #[test]
    fn a_header_that_is_not_the_expected_json_is_malformed() {
        assert!(matches!(
            parse::<serde_json::Value>(b"{not json"),
            Err(FrameError::Malformed(_))
        ));
    }
}

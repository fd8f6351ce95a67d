//! A pool of realistic test-input text (rows of numbers, character grids, edge lists, words),
//! generated once per file and sliced by every test string. Slicing a shared pool is what makes
//! the generator fast: the pool is stored already JSON-escaped (it holds only printable ASCII
//! other than `"` and `\`, plus line ends written as the two bytes `\n`), so the bulk of a
//! record is one plain copy. Slices start and end on whole lines, never inside an escape.

use rand::RngExt;
use rayon::prelude::*;

use crate::random::{Random, Stream, random_for};

/// Bytes per block; each block has one flavour of line.
const BLOCK_BYTES: usize = 32 * 1024;
/// How far from the requested end a slice may stop to end on a whole line.
const LINE_FINISH_WINDOW: usize = 96;
/// An escaped line end.
const ESCAPED_NEWLINE: &[u8; 2] = b"\\n";

/// The shared, already escaped text that test strings are cut from.
pub(crate) struct TextPool {
    text: Vec<u8>,
}

impl TextPool {
    /// A pool of at least `bytes` escaped bytes (rounded up to whole blocks), the same for the
    /// same seed.
    pub(crate) fn new(seed: u64, bytes: usize) -> Self {
        let blocks = bytes.div_ceil(BLOCK_BYTES).max(1);
        let pieces: Vec<Vec<u8>> = (0..blocks)
            .into_par_iter()
            .map(|block| generate_block(&mut random_for(seed, Stream::PoolBlock, block as u64)))
            .collect();
        Self {
            text: pieces.concat(),
        }
    }

    /// Appends about `escaped_bytes` bytes of whole lines starting at a random line. The result
    /// always ends with an escaped newline.
    pub(crate) fn push_slice(&self, random: &mut Random, out: &mut Vec<u8>, escaped_bytes: usize) {
        let mut start = self.line_start_after(random.random_range(0..self.text.len()));
        let mut remaining = escaped_bytes.max(1);
        loop {
            let available = self.text.len() - start;
            if remaining <= available {
                let end = self.line_end_near(start, start + remaining);
                out.extend_from_slice(&self.text[start..end]);
                if !self.text[..end].ends_with(ESCAPED_NEWLINE) {
                    out.extend_from_slice(ESCAPED_NEWLINE);
                }
                return;
            }
            out.extend_from_slice(&self.text[start..]);
            remaining -= available;
            start = 0;
        }
    }

    /// The first line start at or after `position` (wrapping to 0). Found by a short scan
    /// rather than a table of line starts: a random lookup in a large table costs a cache miss
    /// per string, the scan touches the bytes that are copied next anyway.
    fn line_start_after(&self, position: usize) -> usize {
        if position == 0 || self.text[..position].ends_with(ESCAPED_NEWLINE) {
            return position;
        }
        match memchr::memchr(b'\\', &self.text[position - 1..]) {
            Some(offset) if position - 1 + offset + 2 < self.text.len() => {
                position - 1 + offset + 2
            }
            _ => 0,
        }
    }

    /// The line end nearest to `end` (after `start`) within a small window, so slices end on
    /// whole lines without a bias in size; otherwise `end` itself, moved past an escape it would
    /// split.
    fn line_end_near(&self, start: usize, end: usize) -> usize {
        if self.text[..end].ends_with(ESCAPED_NEWLINE) {
            return end;
        }
        let window_end = (end + LINE_FINISH_WINDOW).min(self.text.len());
        let window_start = end.saturating_sub(LINE_FINISH_WINDOW).max(start);
        // Every backslash in the pool starts an escaped newline, so a line ends two bytes later.
        let after =
            memchr::memchr(b'\\', &self.text[end..window_end]).map(|offset| end + offset + 2);
        let before = memchr::memrchr(b'\\', &self.text[window_start..end])
            .map(|offset| window_start + offset + 2);
        match (before, after) {
            (Some(before), Some(after)) => {
                if before.abs_diff(end) <= after.abs_diff(end) {
                    before
                } else {
                    after
                }
            }
            (Some(nearest), None) | (None, Some(nearest)) => nearest,
            (None, None) if self.text[end - 1] == b'\\' => end + 1,
            (None, None) => end,
        }
    }
}

/// One block of lines of a single flavour.
fn generate_block(random: &mut Random) -> Vec<u8> {
    let mut block = Vec::with_capacity(BLOCK_BYTES + 256);
    let flavour = random.random_range(0..6u8);
    let grid_width = random.random_range(3..80usize);
    let alphabets: [&[u8]; 5] = [b".#", b"01", b"abcdefghijklmnopqrstuvwxyz", b"RGB", b"*.xo"];
    let alphabet = alphabets[random.random_range(0..alphabets.len())];
    let magnitude = 10i64.pow(random.random_range(1..10u32));
    let nodes = random.random_range(2..200_000i64);
    while block.len() < BLOCK_BYTES {
        match flavour {
            0 => {
                let count = random.random_range(1..16);
                for index in 0..count {
                    if index > 0 {
                        block.push(b' ');
                    }
                    let value = random.random_range(-magnitude / 8..=magnitude);
                    block.extend_from_slice(value.to_string().as_bytes());
                }
            }
            1 => {
                for _ in 0..grid_width {
                    block.push(alphabet[random.random_range(0..alphabet.len())]);
                }
            }
            2 => {
                let from = random.random_range(1..=nodes);
                let to = random.random_range(1..=nodes);
                block.extend_from_slice(format!("{from} {to}").as_bytes());
                if random.random_bool(0.5) {
                    block.extend_from_slice(
                        format!(" {}", random.random_range(1..=magnitude)).as_bytes(),
                    );
                }
            }
            3 => {
                let digits = random.random_range(1..40);
                block.push(b'1' + random.random_range(0..9u8));
                for _ in 1..digits {
                    block.push(b'0' + random.random_range(0..10u8));
                }
            }
            4 => {
                let length = random.random_range(1..60);
                for _ in 0..length {
                    block.push(b'a' + random.random_range(0..26u8));
                }
            }
            _ => {
                let count = random.random_range(1..6);
                for index in 0..count {
                    if index > 0 {
                        block.push(b' ');
                    }
                    let value = random.random::<f64>() * magnitude as f64;
                    block.extend_from_slice(format!("{value:.6}").as_bytes());
                }
            }
        }
        block.extend_from_slice(ESCAPED_NEWLINE);
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_holds_only_plain_text_and_escaped_newlines() {
        let pool = TextPool::new(9, 200_000);
        assert!(pool.text.len() >= 200_000);
        let text = String::from_utf8(pool.text.clone())
            .expect("ASCII")
            .replace("\\n", "\n");
        assert!(
            text.bytes().all(|byte| byte == b'\n'
                || (0x20..0x7f).contains(&byte) && byte != b'"' && byte != b'\\')
        );
        assert!(pool.text.ends_with(ESCAPED_NEWLINE));
    }

    #[test]
    fn slices_are_close_to_the_requested_size_and_end_with_a_newline() {
        let pool = TextPool::new(9, 100_000);
        let mut random = random_for(9, Stream::Row, 0);
        for wanted in [1usize, 10, 500, 20_000, 250_000] {
            let mut out = Vec::new();
            pool.push_slice(&mut random, &mut out, wanted);
            assert!(out.ends_with(b"\\n"));
            assert!(
                out.len() <= wanted + 2 * LINE_FINISH_WINDOW + 4,
                "{} for {wanted}",
                out.len()
            );
            if wanted >= 500 {
                assert!(out.len() * 10 >= wanted * 9, "{} for {wanted}", out.len());
            }
        }
    }
}

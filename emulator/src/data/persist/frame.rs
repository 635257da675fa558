//! The unit of the data directory's files: a frame is the payload's length
//! (`u32` little-endian), its CRC-32 (`crc32fast`, little-endian) and the
//! payload. A frame is written whole or detected as torn: reading stops at
//! the first frame that is short (its length runs past the file's end) or
//! whose checksum does not match.

/// Bytes before a frame's payload.
pub const HEADER_BYTES: usize = 8;

/// Appends `payload` to `out` as one frame.
pub fn encode(payload: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    encode_parts(&[payload], out)
}

/// Appends one frame whose payload is `parts` one after the other; refuses
/// a payload of 4 GiB or more, which its length cannot say.
pub fn encode_parts(parts: &[&[u8]], out: &mut Vec<u8>) -> std::io::Result<()> {
    let length: usize = parts.iter().map(|p| p.len()).sum();
    let length = u32::try_from(length).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("an operation's records take {length} bytes, more than a frame holds (4 GiB)"),
        )
    })?;
    let mut crc = crc32fast::Hasher::new();
    for part in parts {
        crc.update(part);
    }
    out.reserve(HEADER_BYTES + length as usize);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    for part in parts {
        out.extend_from_slice(part);
    }
    Ok(())
}

/// Reads frames one at a time from a file (start-up reads logs of hundreds
/// of megabytes: holding one frame at a time keeps that out of memory).
pub struct Reader<R> {
    input: R,
    position: u64,
    /// The input's size: a length past it is corruption (or a torn write),
    /// not a request to allocate.
    size: u64,
}

/// What [`Reader::next_into`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A whole, checksummed frame; its payload is in the buffer.
    Frame,
    /// The end of the input, after the last whole frame.
    End,
    /// A short or corrupt frame at [`Reader::position`]: nothing after it
    /// can be trusted.
    Torn,
}

impl<R: std::io::Read> Reader<R> {
    /// Reads `input`, which holds `size` bytes.
    pub fn new(input: R, size: u64) -> Self {
        Reader {
            input,
            position: 0,
            size,
        }
    }

    /// The offset just after the last whole frame read.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Reads the next frame's payload into `payload`.
    pub fn next_into(&mut self, payload: &mut Vec<u8>) -> std::io::Result<Next> {
        let mut header = [0u8; HEADER_BYTES];
        match read_full(&mut self.input, &mut header)? {
            0 => return Ok(Next::End),
            HEADER_BYTES => {}
            _ => return Ok(Next::Torn),
        }
        let length = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if self.position + (HEADER_BYTES + length) as u64 > self.size {
            return Ok(Next::Torn);
        }
        payload.clear();
        payload.resize(length, 0);
        if read_full(&mut self.input, payload)? != length || crc32fast::hash(payload) != crc {
            return Ok(Next::Torn);
        }
        self.position += (HEADER_BYTES + length) as u64;
        Ok(Next::Frame)
    }
}

/// Reads until `buffer` is full or the input ends; returns how much it read.
fn read_full(input: &mut impl std::io::Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            encode(p, &mut out).unwrap();
        }
        out
    }

    /// Every frame `data` holds, where the whole frames end, and why reading stopped.
    fn read(data: &[u8]) -> (Vec<Vec<u8>>, usize, Next) {
        let mut reader = Reader::new(data, data.len() as u64);
        let (mut payload, mut frames) = (Vec::new(), Vec::new());
        loop {
            match reader.next_into(&mut payload).unwrap() {
                Next::Frame => frames.push(payload.clone()),
                last => return (frames, reader.position() as usize, last),
            }
        }
    }

    #[test]
    fn whole_frames_read_back_in_order() {
        let data = file(&[b"one", b"", b"three"]);
        let (frames, position, last) = read(&data);
        assert_eq!(frames, [&b"one"[..], b"", b"three"]);
        assert_eq!((position, last), (data.len(), Next::End));
    }

    #[test]
    fn a_torn_last_frame_is_not_read() {
        let data = file(&[b"kept", b"torn away"]);
        for cut in 1..(HEADER_BYTES + 9) {
            let (frames, position, last) = read(&data[..data.len() - cut]);
            assert_eq!(frames, [&b"kept"[..]], "cut {cut}");
            assert_eq!((position, last), (HEADER_BYTES + 4, Next::Torn));
        }
    }

    #[test]
    fn a_flipped_byte_stops_reading_at_its_frame() {
        let clean = file(&[b"first", b"second", b"third"]);
        let second = HEADER_BYTES + 5;
        for at in second..second + HEADER_BYTES + 6 {
            let mut data = clean.clone();
            data[at] ^= 0x40;
            let (frames, position, last) = read(&data);
            assert_eq!(frames, [&b"first"[..]], "byte {at}");
            assert_eq!((position, last), (second, Next::Torn));
        }
    }

    #[test]
    fn an_absurd_length_is_corruption() {
        let mut data = file(&[b"ok"]);
        data.extend_from_slice(&u32::MAX.to_le_bytes());
        data.extend_from_slice(&[0; 12]);
        let (frames, _, last) = read(&data);
        assert_eq!((frames.len(), last), (1, Next::Torn));
    }
}

//! The unit of the data directory's files: a frame is the payload's length
//! (`u32` little-endian), its CRC-32 (`crc32fast`, little-endian) and the
//! payload. A frame is written whole or detected as torn: reading stops at
//! the first frame that is short or whose checksum does not match.

/// Bytes before a frame's payload.
pub const HEADER_BYTES: usize = 8;

/// The largest payload a frame may hold: a transactional batch of the most
/// operations at the largest item size fits many times over. A length above
/// it is read as corruption, not as a request to allocate.
pub const MAX_PAYLOAD_BYTES: usize = 1 << 30;

/// Appends `payload` to `out` as one frame.
pub fn encode(payload: &[u8], out: &mut Vec<u8>) {
    let length = u32::try_from(payload.len()).expect("payloads stay under MAX_PAYLOAD_BYTES");
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// The frames of `data`, in order, and where the readable part ends.
pub struct Frames<'a> {
    data: &'a [u8],
    position: usize,
}

impl<'a> Frames<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Frames { data, position: 0 }
    }

    /// The offset just after the last whole, checksummed frame read so far.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = &self.data[self.position..];
        let header = rest.get(..HEADER_BYTES)?;
        let length = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if length > MAX_PAYLOAD_BYTES {
            return None;
        }
        let payload = rest.get(HEADER_BYTES..HEADER_BYTES + length)?;
        if crc32fast::hash(payload) != crc {
            return None;
        }
        self.position += HEADER_BYTES + length;
        Some(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            encode(p, &mut out);
        }
        out
    }

    #[test]
    fn whole_frames_read_back_in_order() {
        let data = file(&[b"one", b"", b"three"]);
        let mut frames = Frames::new(&data);
        let read: Vec<&[u8]> = frames.by_ref().collect();
        assert_eq!(read, [&b"one"[..], b"", b"three"]);
        assert_eq!(frames.position(), data.len());
    }

    #[test]
    fn a_torn_last_frame_is_not_read() {
        let data = file(&[b"kept", b"torn away"]);
        for cut in 1..(HEADER_BYTES + 9) {
            let torn = &data[..data.len() - cut];
            let mut frames = Frames::new(torn);
            assert_eq!(
                frames.by_ref().collect::<Vec<_>>(),
                [&b"kept"[..]],
                "cut {cut}"
            );
            assert_eq!(frames.position(), HEADER_BYTES + 4);
        }
    }

    #[test]
    fn a_flipped_byte_stops_reading_at_its_frame() {
        let clean = file(&[b"first", b"second", b"third"]);
        let second = HEADER_BYTES + 5;
        for at in second..second + HEADER_BYTES + 6 {
            let mut data = clean.clone();
            data[at] ^= 0x40;
            let mut frames = Frames::new(&data);
            assert_eq!(
                frames.by_ref().collect::<Vec<_>>(),
                [&b"first"[..]],
                "byte {at}"
            );
            assert_eq!(frames.position(), second);
        }
    }

    #[test]
    fn an_absurd_length_is_corruption() {
        let mut data = file(&[b"ok"]);
        data.extend_from_slice(&u32::MAX.to_le_bytes());
        data.extend_from_slice(&[0; 12]);
        assert_eq!(Frames::new(&data).count(), 1);
    }
}

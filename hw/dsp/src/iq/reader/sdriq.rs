//! SDRangel's `.sdriq` recordings, recognised by their header so that they are refused
//! naming what they are, never read as raw samples: a 32-byte header (sample rate u32
//! LE, centre frequency u64 LE, start time u64 LE, sample size u32: 16 or 24, a filler
//! u32, the CRC-32 of the first 28 bytes, u32 LE), then I/Q pairs of int16, or for
//! 24-bit samples of int32 holding 24-bit values (full scale 2²³).
use std::io::Read;

/// What an `.sdriq` header says.
#[derive(Debug, PartialEq)]
pub(super) struct SdriqHeader {
    pub(super) rate: u32,
    pub(super) center_hz: u64,
    pub(super) bits: u32,
}

/// The CRC-32 (IEEE 802.3, reflected, as zlib computes it) of `bytes`.
fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The header the 32 bytes `h` are, when their CRC-32 matches and the sample size is
/// 16 or 24; else None.
pub(super) fn parse(h: &[u8; 32]) -> Option<SdriqHeader> {
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let mut f = [0u8; 8];
    f.copy_from_slice(&h[4..12]);
    let center_hz = u64::from_le_bytes(f);
    let bits = u32_at(20);
    (crc32(&h[..28]) == u32_at(28) && (bits == 16 || bits == 24)).then_some(SdriqHeader {
        rate: u32_at(0),
        center_hz,
        bits,
    })
}

/// The `.sdriq` header a file starts with, if it starts with one (a file too short or
/// unreadable: None; reading it proper names what is wrong).
pub(super) fn header_of(file: &mut impl Read) -> Option<SdriqHeader> {
    let mut h = [0u8; 32];
    file.read_exact(&mut h).ok()?;
    parse(&h)
}

/// Why a file with this header is not read: completes "… is an SDRangel .sdriq recording".
pub(super) fn refusal(h: &SdriqHeader, as_format: Option<&str>) -> String {
    let how = match as_format {
        Some(f) => format!("read as {f}, "),
        None => "rxnode reads no .sdriq natively, and read raw ".to_owned(),
    };
    let scale = if h.bits == 24 {
        "; its 24-bit samples are stored in 32-bit words at full scale 2^23, which no raw \
         format reads at their level (cs32's full scale 2^31 reads them 48 dB low)"
    } else {
        "; to read its samples, drop the 32-byte header (`tail -c +33 FILE > FILE.cs16`) and \
         give --format cs16 with -r and -f from the header"
    };
    format!(
        " (its 32-byte header, CRC-checked: {} S/s, centre {} Hz, {}-bit I/Q): not read; \
         {how}its header would be taken as samples{scale}",
        h.rate, h.center_hz, h.bits
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// zlib's check value for "123456789".
    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_header_is_recognised_only_with_its_crc_and_sample_size() {
        let mut h = [0u8; 32];
        h[0..4].copy_from_slice(&2_000_000u32.to_le_bytes());
        h[4..12].copy_from_slice(&100_000_000u64.to_le_bytes());
        h[20..24].copy_from_slice(&24u32.to_le_bytes());
        let crc = crc32(&h[..28]);
        h[28..32].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            parse(&h),
            Some(SdriqHeader {
                rate: 2_000_000,
                center_hz: 100_000_000,
                bits: 24
            })
        );
        let mut wrong = h;
        wrong[28] ^= 1;
        assert_eq!(parse(&wrong), None);
        let mut eight = h;
        eight[20..24].copy_from_slice(&8u32.to_le_bytes());
        let crc = crc32(&eight[..28]);
        eight[28..32].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(parse(&eight), None);
    }
}

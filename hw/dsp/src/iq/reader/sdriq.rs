//! SDRangel's `.sdriq` recordings, read natively: a 32-byte header (sample rate u32
//! LE, centre frequency u64 LE, start time u64 LE, sample size u32: 16 or 24, a filler
//! u32, the CRC-32 of the first 28 bytes, u32 LE), then I/Q pairs of int16, or for
//! 24-bit samples of int32 holding 24-bit values (full scale 2²³). A file is one when
//! it is named `.sdriq` (its header is then checked field by field, a bad one refused
//! naming the field) or when its first 32 bytes are such a header, CRC and all.
use super::Datatype;
use std::io::Read;

/// The header's length; the samples follow it.
pub(super) const HEADER_BYTES: u64 = 32;

/// What an `.sdriq` header says.
#[derive(Debug, PartialEq)]
pub(super) struct SdriqHeader {
    pub(super) rate: u32,
    pub(super) center_hz: u64,
    pub(super) bits: u32,
}

impl SdriqHeader {
    /// How the samples after the header are stored.
    pub(super) fn datatype(&self) -> Datatype {
        if self.bits == 24 {
            Datatype::Ci24In32Le
        } else {
            Datatype::Ci16Le
        }
    }

    /// The first field whose value no recording has (a rate or centre of 0, or one
    /// out of range), in words naming it; None when both are plausible.
    pub(super) fn implausible(&self) -> Option<String> {
        let rate = f64::from(self.rate);
        let center = self.center_hz as f64;
        if self.rate == 0 {
            return Some("sample rate is 0 S/s, not a rate > 0".to_owned());
        }
        if let Some(why) = rxnode_interlock::Quantity::SampleRate.implausible(rate) {
            return Some(format!("sample rate {}: {why}", self.rate));
        }
        if self.center_hz == 0 {
            return Some("centre frequency is 0 Hz, not a frequency > 0".to_owned());
        }
        rxnode_interlock::Quantity::Frequency
            .implausible(center)
            .map(|why| format!("centre frequency {}: {why}", self.center_hz))
    }
}

/// The CRC-32 (IEEE 802.3, reflected, as zlib computes it) of `bytes`.
fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The header the 32 bytes `h` are; else why not, naming the field (the CRC-32, the
/// sample size).
pub(super) fn parse_checked(h: &[u8; 32]) -> Result<SdriqHeader, String> {
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let mut f = [0u8; 8];
    f.copy_from_slice(&h[4..12]);
    let center_hz = u64::from_le_bytes(f);
    let (stored, computed) = (u32_at(28), crc32(&h[..28]));
    if stored != computed {
        return Err(format!(
            "its header's CRC-32 (bytes 28..32) is 0x{stored:08x}, but its first 28 bytes \
             hash to 0x{computed:08x}: the header is damaged, or the file is not one"
        ));
    }
    let bits = u32_at(20);
    if bits != 16 && bits != 24 {
        return Err(format!(
            "its header's sample size (bytes 20..24) is {bits}: SDRangel writes 16 or 24"
        ));
    }
    Ok(SdriqHeader {
        rate: u32_at(0),
        center_hz,
        bits,
    })
}

/// The header the 32 bytes `h` are, when their CRC-32 matches and the sample size is
/// 16 or 24; else None.
pub(super) fn parse(h: &[u8; 32]) -> Option<SdriqHeader> {
    parse_checked(h).ok()
}

/// The `.sdriq` header a file starts with, if it starts with one (a file too short or
/// unreadable: None; reading it proper names what is wrong).
pub(super) fn header_of(file: &mut impl Read) -> Option<SdriqHeader> {
    let mut h = [0u8; 32];
    file.read_exact(&mut h).ok()?;
    parse(&h)
}

/// Why a file with this header is not read as the raw format `given`: completes
/// "… is an SDRangel .sdriq recording".
pub(super) fn wrong_format(h: &SdriqHeader, given: &str) -> String {
    format!(
        " (its 32-byte header, CRC-checked: {} S/s, centre {} Hz, {}-bit I/Q): read as \
         {given}, its header would be taken as samples{}; leave --format out and it is read \
         from its header",
        h.rate,
        h.center_hz,
        h.bits,
        if h.bits == 24 {
            " and its 24-bit samples, stored in 32-bit words at full scale 2^23, read at no \
             raw format's level (cs32's full scale 2^31 reads them 48 dB low)"
        } else {
            ""
        }
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
        assert!(parse_checked(&wrong)
            .unwrap_err()
            .contains("CRC-32 (bytes 28..32) is 0x"));
        let mut eight = h;
        eight[20..24].copy_from_slice(&8u32.to_le_bytes());
        let crc = crc32(&eight[..28]);
        eight[28..32].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(parse(&eight), None);
        assert!(parse_checked(&eight)
            .unwrap_err()
            .contains("sample size (bytes 20..24) is 8"));
    }
}

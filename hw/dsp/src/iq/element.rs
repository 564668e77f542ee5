//! Sample layouts: one [`Element`] per stored I/Q value type, one generic decoder
//! over it, and the [`Datatype`] naming each (SigMF `core:datatype`).
use num_complex::Complex;
use serde::{Deserialize, Serialize};

/// One stored I or Q value: its size, its conversion to a float in full-scale
/// units (±1), and the level at which it clips.
pub(super) trait Element {
    /// Bytes of one value.
    const BYTES: usize;
    /// Whether the value is a float (checked for NaN and infinity after reading).
    const FLOAT: bool;
    /// The magnitude, after conversion, of the largest value the type holds: a sample
    /// at it (or beyond) is clipped.
    const CLIP: f32;
    /// The value of `b` (exactly `BYTES` long), in full-scale units.
    fn value(b: &[u8]) -> f32;
}

macro_rules! element {
    ($name:ident, $bytes:expr, $float:expr, $clip:expr, |$b:ident| $value:expr) => {
        pub(super) struct $name;
        impl Element for $name {
            const BYTES: usize = $bytes;
            const FLOAT: bool = $float;
            const CLIP: f32 = $clip;
            #[inline(always)]
            fn value($b: &[u8]) -> f32 {
                $value
            }
        }
    };
}

element!(U8, 1, false, 127.5 / 128.0, |b| (f32::from(b[0]) - 127.5)
    * (1.0 / 128.0));
// Through the unsigned value (x ^ 0x80 = x + 128 as u8), which vectorises as cu8 does.
element!(I8, 1, false, 127.0 / 128.0, |b| (f32::from(b[0] ^ 0x80)
    - 128.0)
    * (1.0 / 128.0));
element!(U16Le, 2, false, 32767.5 / 32768.0, |b| (f32::from(
    u16::from_le_bytes([b[0], b[1]])
) - 32767.5)
    * (1.0 / 32768.0));
element!(U16Be, 2, false, 32767.5 / 32768.0, |b| (f32::from(
    u16::from_be_bytes([b[0], b[1]])
) - 32767.5)
    * (1.0 / 32768.0));
// 2³¹ − 0.5 rounds to 2³¹ in f32: full scale is 1.0.
element!(
    U32Le,
    4,
    false,
    1.0,
    |b| ((f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])) - 2_147_483_647.5)
        * (1.0 / 2_147_483_648.0)) as f32
);
element!(
    U32Be,
    4,
    false,
    1.0,
    |b| ((f64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])) - 2_147_483_647.5)
        * (1.0 / 2_147_483_648.0)) as f32
);
element!(I16Le, 2, false, 32767.0 / 32768.0, |b| f32::from(
    i16::from_le_bytes([b[0], b[1]])
) * (1.0 / 32768.0));
element!(I16Be, 2, false, 32767.0 / 32768.0, |b| f32::from(
    i16::from_be_bytes([b[0], b[1]])
) * (1.0 / 32768.0));
// Three bytes, as a WAV stores 24-bit PCM: sign-extended through the top of an i32.
element!(
    I24Le,
    3,
    false,
    8_388_607.0 / 8_388_608.0,
    |b| (i32::from_le_bytes([0, b[0], b[1], b[2]]) as f32) * (1.0 / 2_147_483_648.0)
);
// A 24-bit value in a 32-bit word, as SDRangel stores it: full scale 2²³ (a word
// beyond ±2²³ reads beyond full scale, and counts as clipped).
element!(
    I24In32Le,
    4,
    false,
    8_388_607.0 / 8_388_608.0,
    |b| (f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])) * (1.0 / 8_388_608.0)) as f32
);
// 2³¹ − 1 rounds to 2³¹ in f32: full scale is 1.0.
element!(
    I32Le,
    4,
    false,
    1.0,
    |b| (i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32) * (1.0 / 2_147_483_648.0)
);
element!(
    I32Be,
    4,
    false,
    1.0,
    |b| (i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as f32) * (1.0 / 2_147_483_648.0)
);
element!(F32Le, 4, true, 1.0, |b| f32::from_le_bytes([
    b[0], b[1], b[2], b[3]
]));
element!(F32Be, 4, true, 1.0, |b| f32::from_be_bytes([
    b[0], b[1], b[2], b[3]
]));
element!(F64Le, 8, true, 1.0, |b| narrow(f64::from_le_bytes([
    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
])));
element!(F64Be, 8, true, 1.0, |b| narrow(f64::from_be_bytes([
    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
])));

/// A float64 value as float32. A value that is not zero stays not zero: one below
/// float32's smallest (|v| < 1.4·10⁻⁴⁵) becomes that smallest value with its sign,
/// so only an exact zero in the file reads as zero
/// (docs/reliability.md#8-digital-silence-in-a-recording).
#[inline(always)]
fn narrow(v: f64) -> f32 {
    let f = v as f32;
    if f == 0.0 && v != 0.0 {
        let tiny = f32::from_bits(1);
        if v < 0.0 {
            -tiny
        } else {
            tiny
        }
    } else {
        f
    }
}

/// A complex sample layout a receiver writes (SigMF 1.2 `core:datatype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Datatype {
    /// Unsigned 8-bit, offset 127.5 (rtl-sdr).
    Cu8,
    /// Signed 8-bit.
    Ci8,
    /// Unsigned 16-bit little-endian, offset 32767.5.
    Cu16Le,
    /// Unsigned 16-bit big-endian, offset 32767.5.
    Cu16Be,
    /// Unsigned 32-bit little-endian, offset 2³¹ − 0.5.
    Cu32Le,
    /// Unsigned 32-bit big-endian, offset 2³¹ − 0.5.
    Cu32Be,
    /// Signed 16-bit little-endian.
    Ci16Le,
    /// Signed 16-bit big-endian.
    Ci16Be,
    /// Signed 24-bit little-endian, three bytes a value: only a WAV stores it (24-bit
    /// PCM); no SigMF datatype names it.
    Ci24Le,
    /// Signed 24-bit values in 32-bit little-endian words (full scale 2²³): only an
    /// SDRangel `.sdriq` recording stores it; no SigMF datatype names it.
    Ci24In32Le,
    /// Signed 32-bit little-endian.
    Ci32Le,
    /// Signed 32-bit big-endian.
    Ci32Be,
    /// IEEE float32 little-endian.
    Cf32Le,
    /// IEEE float32 big-endian.
    Cf32Be,
    /// IEEE float64 little-endian.
    Cf64Le,
    /// IEEE float64 big-endian.
    Cf64Be,
}

/// Every layout a SigMF `core:datatype` names, for lookups by name (not
/// [`Datatype::Ci24Le`], which only a WAV stores).
const ALL: [Datatype; 14] = [
    Datatype::Cu8,
    Datatype::Ci8,
    Datatype::Cu16Le,
    Datatype::Cu16Be,
    Datatype::Cu32Le,
    Datatype::Cu32Be,
    Datatype::Ci16Le,
    Datatype::Ci16Be,
    Datatype::Ci32Le,
    Datatype::Ci32Be,
    Datatype::Cf32Le,
    Datatype::Cf32Be,
    Datatype::Cf64Le,
    Datatype::Cf64Be,
];

/// A value's size, float-ness and clip level, of whichever element `$dt` names.
macro_rules! with_element {
    ($dt:expr, $e:ident => $body:expr) => {
        match $dt {
            Datatype::Cu8 => {
                type $e = U8;
                $body
            }
            Datatype::Ci8 => {
                type $e = I8;
                $body
            }
            Datatype::Cu16Le => {
                type $e = U16Le;
                $body
            }
            Datatype::Cu16Be => {
                type $e = U16Be;
                $body
            }
            Datatype::Cu32Le => {
                type $e = U32Le;
                $body
            }
            Datatype::Cu32Be => {
                type $e = U32Be;
                $body
            }
            Datatype::Ci16Le => {
                type $e = I16Le;
                $body
            }
            Datatype::Ci16Be => {
                type $e = I16Be;
                $body
            }
            Datatype::Ci24Le => {
                type $e = I24Le;
                $body
            }
            Datatype::Ci24In32Le => {
                type $e = I24In32Le;
                $body
            }
            Datatype::Ci32Le => {
                type $e = I32Le;
                $body
            }
            Datatype::Ci32Be => {
                type $e = I32Be;
                $body
            }
            Datatype::Cf32Le => {
                type $e = F32Le;
                $body
            }
            Datatype::Cf32Be => {
                type $e = F32Be;
                $body
            }
            Datatype::Cf64Le => {
                type $e = F64Le;
                $body
            }
            Datatype::Cf64Be => {
                type $e = F64Be;
                $body
            }
        }
    };
}

impl Datatype {
    /// The SigMF name (`cu8`, `ci16_le`, `cf32_be` …); `ci24_le`, in SigMF's manner,
    /// for the 24-bit WAV layout SigMF has no name for.
    pub fn sigmf_name(self) -> &'static str {
        match self {
            Self::Cu8 => "cu8",
            Self::Ci8 => "ci8",
            Self::Cu16Le => "cu16_le",
            Self::Cu16Be => "cu16_be",
            Self::Cu32Le => "cu32_le",
            Self::Cu32Be => "cu32_be",
            Self::Ci16Le => "ci16_le",
            Self::Ci16Be => "ci16_be",
            Self::Ci24Le => "ci24_le",
            Self::Ci24In32Le => "ci24_in32_le",
            Self::Ci32Le => "ci32_le",
            Self::Ci32Be => "ci32_be",
            Self::Cf32Le => "cf32_le",
            Self::Cf32Be => "cf32_be",
            Self::Cf64Le => "cf64_le",
            Self::Cf64Be => "cf64_be",
        }
    }

    /// The layout a SigMF `core:datatype` names (`None`: not one rxnode reads).
    pub fn from_sigmf(name: &str) -> Option<Self> {
        ALL.into_iter().find(|d| d.sigmf_name() == name)
    }

    /// Every SigMF name read, for messages.
    pub fn sigmf_names() -> String {
        ALL.map(Self::sigmf_name).join(", ")
    }

    /// Bytes of one complex sample of one channel.
    pub fn sample_bytes(self) -> usize {
        with_element!(self, E => 2 * E::BYTES)
    }

    /// The magnitude, after conversion, at which a value clips.
    pub fn clip_level(self) -> f32 {
        with_element!(self, E => E::CLIP)
    }

    /// Whether a sample can be exactly zero: every signed and float layout; not the
    /// unsigned ones, whose zero lies half a step between two values (cu8's 127.5).
    pub fn has_exact_zero(self) -> bool {
        !matches!(
            self,
            Self::Cu8 | Self::Cu16Le | Self::Cu16Be | Self::Cu32Le | Self::Cu32Be
        )
    }

    /// Whether values are floats (NaN and infinity are possible).
    pub fn is_float(self) -> bool {
        with_element!(self, E => E::FLOAT)
    }

    /// Decode `out.len()` samples of channel `channel` from `bytes`, frames of
    /// `channels` interleaved samples each (`bytes` holds exactly that many frames).
    pub(super) fn decode(
        self,
        bytes: &[u8],
        channels: usize,
        channel: usize,
        out: &mut [Complex<f32>],
    ) {
        with_element!(self, E => decode::<E>(bytes, channels, channel, out))
    }
}

/// The one decoder: every layout runs through it.
fn decode<E: Element>(bytes: &[u8], channels: usize, channel: usize, out: &mut [Complex<f32>]) {
    let size = 2 * E::BYTES;
    let value = |s: &[u8]| Complex::new(E::value(&s[..E::BYTES]), E::value(&s[E::BYTES..size]));
    if channels == 1 {
        // The common case with a constant stride, which the compiler vectorises.
        for (o, s) in out.iter_mut().zip(bytes.chunks_exact(size)) {
            *o = value(s);
        }
    } else {
        let at = channel * size;
        for (o, f) in out.iter_mut().zip(bytes.chunks_exact(size * channels)) {
            *o = value(&f[at..at + size]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each layout's full-scale values, offsets and byte order.
    #[test]
    fn every_layout_decodes_its_values() {
        let one = |d: Datatype, b: &[u8]| {
            let mut o = [Complex::new(0.0, 0.0)];
            d.decode(b, 1, 0, &mut o);
            (o[0].re, o[0].im)
        };
        assert_eq!(
            one(Datatype::Cu8, &[255, 0]),
            (127.5 / 128.0, -127.5 / 128.0)
        );
        assert_eq!(one(Datatype::Ci8, &[0x80, 0x40]), (-1.0, 0.5));
        assert_eq!(one(Datatype::Ci16Le, &[0, 0x40, 0, 0xc0]), (0.5, -0.5));
        assert_eq!(one(Datatype::Ci16Be, &[0x40, 0, 0xc0, 0]), (0.5, -0.5));
        assert_eq!(
            one(Datatype::Cu16Le, &[0xff, 0xff, 0, 0]).0,
            32767.5 / 32768.0
        );
        assert_eq!(
            one(Datatype::Ci32Le, &[0, 0, 0, 0x40, 0, 0, 0, 0xc0]),
            (0.5, -0.5)
        );
        assert_eq!(
            one(Datatype::Ci32Be, &[0x40, 0, 0, 0, 0xc0, 0, 0, 0]),
            (0.5, -0.5)
        );
        let mut b = 0.25f32.to_be_bytes().to_vec();
        b.extend((-0.75f32).to_be_bytes());
        assert_eq!(one(Datatype::Cf32Be, &b), (0.25, -0.75));
        let mut b = 0.25f64.to_le_bytes().to_vec();
        b.extend((-0.75f64).to_le_bytes());
        assert_eq!(one(Datatype::Cf64Le, &b), (0.25, -0.75));
        let mut b = 0.25f64.to_be_bytes().to_vec();
        b.extend((-0.75f64).to_be_bytes());
        assert_eq!(one(Datatype::Cf64Be, &b), (0.25, -0.75));
        assert_eq!(
            one(Datatype::Cu16Be, &[0xff, 0xff, 0, 0]).0,
            32767.5 / 32768.0
        );
        assert_eq!(
            one(Datatype::Cu32Le, &[0, 0, 0, 0xc0, 0, 0, 0, 0x40]),
            (0.5, -0.5)
        );
        assert_eq!(
            one(Datatype::Cu32Be, &[0xc0, 0, 0, 0, 0x40, 0, 0, 0]),
            (0.5, -0.5)
        );
        assert_eq!(
            one(Datatype::Ci24Le, &[0, 0, 0x40, 0, 0, 0xc0]),
            (0.5, -0.5)
        );
        assert_eq!(
            one(Datatype::Ci24Le, &[0xff, 0xff, 0x7f, 0, 0, 0x80]),
            (8_388_607.0 / 8_388_608.0, -1.0)
        );
        // SDRangel's 24-bit samples in 32-bit words: full scale 2^23, not 2^31.
        assert_eq!(
            one(Datatype::Ci24In32Le, &[0, 0, 0x40, 0, 0, 0, 0xc0, 0xff]),
            (0.5, -0.5)
        );
        assert_eq!(
            one(
                Datatype::Ci24In32Le,
                &[0xff, 0xff, 0x7f, 0, 0, 0, 0x80, 0xff]
            ),
            (8_388_607.0 / 8_388_608.0, -1.0)
        );
        for d in ALL {
            assert_eq!(Datatype::from_sigmf(d.sigmf_name()), Some(d));
        }
        // Only a WAV stores 24-bit samples: a SigMF meta cannot name them.
        assert_eq!(Datatype::from_sigmf("ci24_le"), None);
        assert_eq!(Datatype::from_sigmf("ci24_in32_le"), None);
    }

    /// A float64 value too small for float32 reads as its smallest value, never as
    /// zero: only an exact zero in the file is a zero sample (digital silence).
    #[test]
    fn a_cf64_value_below_float32_is_not_read_as_zero() {
        let mut b = 1e-50f64.to_le_bytes().to_vec();
        b.extend((-1e-50f64).to_le_bytes());
        let mut o = [Complex::new(1.0, 1.0)];
        Datatype::Cf64Le.decode(&b, 1, 0, &mut o);
        assert_eq!(o[0], Complex::new(f32::from_bits(1), -f32::from_bits(1)));
        let mut b = 0.0f64.to_be_bytes().to_vec();
        b.extend((-0.0f64).to_be_bytes());
        Datatype::Cf64Be.decode(&b, 1, 0, &mut o);
        assert_eq!((o[0].re, o[0].im), (0.0, 0.0));
        assert!(Datatype::Ci8.has_exact_zero() && Datatype::Cf64Be.has_exact_zero());
        assert!(!Datatype::Cu8.has_exact_zero() && !Datatype::Cu16Le.has_exact_zero());
    }

    /// Channel 1 of a 2-channel frame is its second sample.
    #[test]
    fn one_channel_of_interleaved_frames() {
        let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut o = [Complex::new(0.0, 0.0); 2];
        Datatype::Ci8.decode(&bytes, 2, 1, &mut o);
        assert_eq!(o[0], Complex::new(3.0 / 128.0, 4.0 / 128.0));
        assert_eq!(o[1], Complex::new(7.0 / 128.0, 8.0 / 128.0));
    }
}

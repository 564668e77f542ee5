//! The driver's native CS16 to the DSP's CF32, in one pass: each int16 becomes the
//! float `v / 32768`, exactly (every int16 is an f32, and the scale is a power of
//! two), so any instruction set gives the same floats bit for bit. With AVX-512 or
//! AVX2 where the CPU has them (run-time detection), else the same loop for the
//! build's baseline (SSE2 on x86-64).
use num_complex::Complex;

/// Full scale of a CS16 sample.
const SCALE: f32 = 1.0 / 32768.0;

/// Which instruction set the conversion runs on this CPU (asked once).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Isa {
    Avx512,
    Avx2,
    Baseline,
}

#[cfg(target_arch = "x86_64")]
fn isa() -> Isa {
    use std::sync::OnceLock;
    static HAS: OnceLock<Isa> = OnceLock::new();
    *HAS.get_or_init(|| {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            Isa::Avx512
        } else if std::arch::is_x86_feature_detected!("avx2") {
            Isa::Avx2
        } else {
            Isa::Baseline
        }
    })
}

/// `out[i] = x[i] / 32768` for the first `min(x.len(), out.len())` samples.
pub(crate) fn cs16_to_cf32(x: &[Complex<i16>], out: &mut [Complex<f32>]) {
    let n = x.len().min(out.len());
    let src: &[i16] = bytemuck::cast_slice(&x[..n]);
    let dst: &mut [f32] = bytemuck::cast_slice_mut(&mut out[..n]);
    #[cfg(target_arch = "x86_64")]
    match isa() {
        // SAFETY: the CPU has AVX-512F and AVX-512BW (checked by `isa`); the
        // function only reads `src` and writes `dst`, both in bounds.
        Isa::Avx512 => return unsafe { convert_avx512(src, dst) },
        // SAFETY: the CPU has AVX2 (checked by `isa`); as above.
        Isa::Avx2 => return unsafe { convert_avx2(src, dst) },
        Isa::Baseline => {}
    }
    convert(src, dst);
}

/// [`convert`] compiled for AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn convert_avx512(src: &[i16], dst: &mut [f32]) {
    convert(src, dst);
}

/// [`convert`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn convert_avx2(src: &[i16], dst: &mut [f32]) {
    convert(src, dst);
}

/// The conversion, in chunks of 32 values the compiler turns into vector code.
#[inline(always)]
fn convert(src: &[i16], dst: &mut [f32]) {
    const L: usize = 32;
    let n = src.len().min(dst.len());
    let (sa, sr) = src[..n].as_chunks::<L>();
    let (da, dr) = dst[..n].as_chunks_mut::<L>();
    for (d, s) in da.iter_mut().zip(sa) {
        for j in 0..L {
            d[j] = f32::from(s[j]) * SCALE;
        }
    }
    for (d, s) in dr.iter_mut().zip(sr) {
        *d = f32::from(*s) * SCALE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every int16 converts to exactly `v / 32768` on this CPU's kernel, at every
    /// length and alignment of the tail (the extremes included).
    #[test]
    fn cs16_converts_exactly_at_every_length() {
        let all: Vec<Complex<i16>> = (i16::MIN..=i16::MAX)
            .step_by(2)
            .zip((i16::MIN..=i16::MAX).rev().step_by(2))
            .map(|(a, b)| Complex::new(a, b))
            .collect();
        let mut out = vec![Complex::new(f32::NAN, f32::NAN); all.len() + 1];
        for n in (0..70).chain([all.len() - 1, all.len()]) {
            out.fill(Complex::new(f32::NAN, f32::NAN));
            cs16_to_cf32(&all[..n], &mut out);
            for (i, (o, x)) in out[..n].iter().zip(&all).enumerate() {
                let want = Complex::new(f32::from(x.re) / 32768.0, f32::from(x.im) / 32768.0);
                assert_eq!(o.re.to_bits(), want.re.to_bits(), "n {n} sample {i}");
                assert_eq!(o.im.to_bits(), want.im.to_bits(), "n {n} sample {i}");
            }
            assert!(out[n].re.is_nan(), "n {n}: wrote past the input");
        }
        assert_eq!(out[0], Complex::new(-1.0, 32767.0 / 32768.0));
    }
}

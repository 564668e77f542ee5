//! The two ISAs behind [`Simd`]: AVX-512F/DQ (16 lanes) and AVX2 + FMA (8 lanes).
use super::*;

/// The one-intrinsic methods of [`Simd`] (`zero` … `loadu`), for vector type `$v`.
macro_rules! arithmetic {
    ($v:ty, $zero:ident, $set1:ident, $add:ident, $sub:ident, $mul:ident,
     $fmadd:ident, $fmsub:ident, $load:ident, $store:ident, $loadu:ident $(,)?) => {
        #[inline(always)]
        unsafe fn zero() -> $v {
            $zero()
        }
        #[inline(always)]
        unsafe fn set1(a: f32) -> $v {
            $set1(a)
        }
        #[inline(always)]
        unsafe fn add(a: $v, b: $v) -> $v {
            $add(a, b)
        }
        #[inline(always)]
        unsafe fn sub(a: $v, b: $v) -> $v {
            $sub(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: $v, b: $v) -> $v {
            $mul(a, b)
        }
        #[inline(always)]
        unsafe fn fmadd(a: $v, b: $v, c: $v) -> $v {
            $fmadd(a, b, c)
        }
        #[inline(always)]
        unsafe fn fmsub(a: $v, b: $v, c: $v) -> $v {
            $fmsub(a, b, c)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> $v {
            $load(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: $v) {
            $store(p, v)
        }
        #[inline(always)]
        unsafe fn loadu(p: *const f32) -> $v {
            $loadu(p)
        }
    };
}

/// AVX-512F (the kernels are chosen on CPUs with DQ too): 16 lanes.
#[derive(Clone, Copy)]
pub(super) struct Avx512;

/// `exp(-2πi·p/16)` for p in 0..10 (re, im).
const W16: [(f32, f32); 10] = [
    (1.0, 0.0),
    (0.923_879_5, -0.382_683_43),
    (
        std::f32::consts::FRAC_1_SQRT_2,
        -std::f32::consts::FRAC_1_SQRT_2,
    ),
    (0.382_683_43, -0.923_879_5),
    (0.0, -1.0),
    (-0.382_683_43, -0.923_879_5),
    (
        -std::f32::consts::FRAC_1_SQRT_2,
        -std::f32::consts::FRAC_1_SQRT_2,
    ),
    (-0.923_879_5, -0.382_683_43),
    (-1.0, 0.0),
    (-0.923_879_5, 0.382_683_43),
];

impl Avx512 {
    /// Transpose 16 vectors of 16 (row i lane j → row j lane i).
    #[inline(always)]
    unsafe fn transpose(r: [__m512; 16]) -> [__m512; 16] {
        let mut t = [_mm512_setzero_ps(); 16];
        for k in 0..8 {
            t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
            t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
        }
        let mut u = [_mm512_setzero_ps(); 16];
        for k in 0..4 {
            let b = 4 * k;
            u[b] = _mm512_shuffle_ps::<0x44>(t[b], t[b + 2]);
            u[b + 1] = _mm512_shuffle_ps::<0xEE>(t[b], t[b + 2]);
            u[b + 2] = _mm512_shuffle_ps::<0x44>(t[b + 1], t[b + 3]);
            u[b + 3] = _mm512_shuffle_ps::<0xEE>(t[b + 1], t[b + 3]);
        }
        let mut v = [_mm512_setzero_ps(); 16];
        for h in 0..2 {
            let b = 8 * h;
            for k in 0..4 {
                v[b + k] = _mm512_shuffle_f32x4::<0x88>(u[b + k], u[b + 4 + k]);
                v[b + 4 + k] = _mm512_shuffle_f32x4::<0xDD>(u[b + k], u[b + 4 + k]);
            }
        }
        let mut o = [_mm512_setzero_ps(); 16];
        for k in 0..8 {
            o[k] = _mm512_shuffle_f32x4::<0x88>(v[k], v[k + 8]);
            o[k + 8] = _mm512_shuffle_f32x4::<0xDD>(v[k], v[k + 8]);
        }
        o
    }
}

impl Simd for Avx512 {
    const LANES: usize = 16;
    type V = __m512;

    arithmetic!(
        __m512,
        _mm512_setzero_ps,
        _mm512_set1_ps,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        _mm512_fmadd_ps,
        _mm512_fmsub_ps,
        _mm512_load_ps,
        _mm512_store_ps,
        _mm512_loadu_ps,
    );
    #[inline(always)]
    unsafe fn abs_max(m: __m512, v: __m512) -> __m512 {
        // |v| by clearing the sign bit; vmaxps returns its second operand when either
        // is NaN, so a NaN may stay in the lane or be dropped by the next sample.
        _mm512_max_ps(m, _mm512_abs_ps(v))
    }
    #[inline(always)]
    unsafe fn hsum(v: __m512) -> f32 {
        _mm512_reduce_add_ps(v)
    }
    #[inline(always)]
    unsafe fn hmax(v: __m512) -> f32 {
        _mm512_reduce_max_ps(v)
    }

    #[inline(always)]
    unsafe fn load_windowed_cs16(src: *const i16, win: *const f32, i: usize) -> Cx<Self> {
        // One complex CS16 sample per 32-bit lane: re in the low half, im in the high.
        let x = _mm512_loadu_si512(src.add(2 * i).cast());
        let re = _mm512_srai_epi32::<16>(_mm512_slli_epi32::<16>(x));
        let im = _mm512_srai_epi32::<16>(x);
        let w = _mm512_load_ps(win.add(i));
        Cx {
            re: _mm512_mul_ps(_mm512_cvtepi32_ps(re), w),
            im: _mm512_mul_ps(_mm512_cvtepi32_ps(im), w),
        }
    }

    #[inline(always)]
    unsafe fn loadu_cs16(p: *const i16) -> __m512 {
        let v = _mm512_cvtepi16_epi32(_mm256_loadu_si256(p.cast()));
        _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(CS16_SCALE))
    }

    #[inline(always)]
    unsafe fn load_windowed(src: *const f32, win: *const f32, i: usize) -> Cx<Self> {
        let a = _mm512_loadu_ps(src.add(2 * i));
        let b = _mm512_loadu_ps(src.add(2 * i + 16));
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        let w = _mm512_load_ps(win.add(i));
        Cx {
            re: _mm512_mul_ps(_mm512_permutex2var_ps(a, even, b), w),
            im: _mm512_mul_ps(_mm512_permutex2var_ps(a, odd, b), w),
        }
    }

    /// Two radix-4 stages over whole vectors (spans 128 … 16, twiddles `W256`, then
    /// `W64` 384 f32 further on), the transpose, and the 16-point DIF as two radix-4
    /// stages across registers.
    #[inline(always)]
    unsafe fn final_group(re: *const f32, im: *const f32, acc: *mut f32, tw: *const f32) {
        let (ta, tb) = (tw, tw.add(384));
        let mut x = [Cx::<Self>::zero(); 16];
        for (v, xv) in x.iter_mut().enumerate() {
            *xv = load(re, im, 16 * v);
        }
        for v in 0..4 {
            let w = [
                twiddle(ta, 64, 0, 16 * v),
                twiddle(ta, 64, 1, 16 * v),
                twiddle(ta, 64, 2, 16 * v),
            ];
            let z = radix4([x[v], x[v + 4], x[v + 8], x[v + 12]], Some(w));
            x[v] = z[0];
            x[v + 4] = z[1];
            x[v + 8] = z[2];
            x[v + 12] = z[3];
        }
        let w = [
            twiddle(tb, 16, 0, 0),
            twiddle(tb, 16, 1, 0),
            twiddle(tb, 16, 2, 0),
        ];
        for c in (0..16).step_by(4) {
            let z = radix4([x[c], x[c + 1], x[c + 2], x[c + 3]], Some(w));
            x[c..c + 4].copy_from_slice(&z);
        }
        let (rr, ii) = split(&x);
        let mut x = join(Self::transpose(rr), Self::transpose(ii));
        // Radix-4 with quarter span 4 (twiddles W16^j, W16^2j, W16^3j), then radix-4
        // with quarter span 1 (no twiddles).
        for j in 0..4 {
            let w = if j == 0 {
                None
            } else {
                let c = |p: usize| Cx::<Self>::splat(W16[p].0, W16[p].1);
                Some([c(j), c(2 * j), c(3 * j)])
            };
            let z = radix4([x[j], x[j + 4], x[j + 8], x[j + 12]], w);
            x[j] = z[0];
            x[j + 4] = z[1];
            x[j + 8] = z[2];
            x[j + 12] = z[3];
        }
        for b in (0..16).step_by(4) {
            let z = radix4([x[b], x[b + 1], x[b + 2], x[b + 3]], None);
            x[b..b + 4].copy_from_slice(&z);
        }
        for (k, v) in x.into_iter().enumerate() {
            accumulate(acc.add(16 * k), v);
        }
    }
}

/// AVX2 and FMA: 8 lanes.
#[derive(Clone, Copy)]
pub(super) struct Avx2;

impl Avx2 {
    /// Transpose 8 vectors of 8 (row i lane j → row j lane i).
    #[inline(always)]
    unsafe fn transpose(r: [__m256; 8]) -> [__m256; 8] {
        let mut t = [_mm256_setzero_ps(); 8];
        for k in 0..4 {
            t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
            t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
        }
        // u[b + c] holds, per 128-bit half, column c (low half) and c + 4 (high half)
        // of rows b … b + 3.
        let mut u = [_mm256_setzero_ps(); 8];
        for b in [0, 4] {
            u[b] = _mm256_shuffle_ps::<0x44>(t[b], t[b + 2]);
            u[b + 1] = _mm256_shuffle_ps::<0xEE>(t[b], t[b + 2]);
            u[b + 2] = _mm256_shuffle_ps::<0x44>(t[b + 1], t[b + 3]);
            u[b + 3] = _mm256_shuffle_ps::<0xEE>(t[b + 1], t[b + 3]);
        }
        let mut o = [_mm256_setzero_ps(); 8];
        for c in 0..4 {
            o[c] = _mm256_permute2f128_ps::<0x20>(u[c], u[c + 4]);
            o[c + 4] = _mm256_permute2f128_ps::<0x31>(u[c], u[c + 4]);
        }
        o
    }
}

impl Simd for Avx2 {
    const LANES: usize = 8;
    type V = __m256;

    arithmetic!(
        __m256,
        _mm256_setzero_ps,
        _mm256_set1_ps,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_fmadd_ps,
        _mm256_fmsub_ps,
        _mm256_load_ps,
        _mm256_store_ps,
        _mm256_loadu_ps,
    );
    #[inline(always)]
    unsafe fn abs_max(m: __m256, v: __m256) -> __m256 {
        // |v| by clearing the sign bit; vmaxps returns its second operand when either
        // is NaN, so a NaN may stay in the lane or be dropped by the next sample.
        _mm256_max_ps(m, _mm256_andnot_ps(_mm256_set1_ps(-0.0), v))
    }
    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        let mut a = [0.0f32; 8];
        _mm256_storeu_ps(a.as_mut_ptr(), v);
        a.iter().sum()
    }
    #[inline(always)]
    unsafe fn hmax(v: __m256) -> f32 {
        let mut a = [0.0f32; 8];
        _mm256_storeu_ps(a.as_mut_ptr(), v);
        // A NaN lane wins, so that the caller sees it.
        a.iter().copied().fold(0.0, |m, x| {
            if x.is_nan() || m.is_nan() {
                f32::NAN
            } else {
                m.max(x)
            }
        })
    }

    #[inline(always)]
    unsafe fn load_windowed_cs16(src: *const i16, win: *const f32, i: usize) -> Cx<Self> {
        // One complex CS16 sample per 32-bit lane: re in the low half, im in the high.
        let x = _mm256_loadu_si256(src.add(2 * i).cast());
        let re = _mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(x));
        let im = _mm256_srai_epi32::<16>(x);
        let w = _mm256_load_ps(win.add(i));
        Cx {
            re: _mm256_mul_ps(_mm256_cvtepi32_ps(re), w),
            im: _mm256_mul_ps(_mm256_cvtepi32_ps(im), w),
        }
    }

    #[inline(always)]
    unsafe fn loadu_cs16(p: *const i16) -> __m256 {
        let v = _mm256_cvtepi16_epi32(_mm_loadu_si128(p.cast()));
        _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(CS16_SCALE))
    }

    #[inline(always)]
    unsafe fn load_windowed(src: *const f32, win: *const f32, i: usize) -> Cx<Self> {
        // a = r0 i0 r1 i1 | r2 i2 r3 i3, b = r4 i4 r5 i5 | r6 i6 r7 i7.
        let a = _mm256_loadu_ps(src.add(2 * i));
        let b = _mm256_loadu_ps(src.add(2 * i + 8));
        // Per 128-bit half: r0 r1 r4 r5 | r2 r3 r6 r7 (and the same for im); then the
        // 64-bit quarters 0, 2, 1, 3 put them in order.
        let re = _mm256_castps_pd(_mm256_shuffle_ps::<0x88>(a, b));
        let im = _mm256_castps_pd(_mm256_shuffle_ps::<0xDD>(a, b));
        let w = _mm256_load_ps(win.add(i));
        Cx {
            re: _mm256_mul_ps(_mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(re)), w),
            im: _mm256_mul_ps(_mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(im)), w),
        }
    }

    /// One radix-8 stage over whole vectors (spans 32 … 8, twiddles `W64^{pj}`), the
    /// transpose, and the 8-point DIF across registers.
    #[inline(always)]
    unsafe fn final_group(re: *const f32, im: *const f32, acc: *mut f32, tw: *const f32) {
        let mut x = [Cx::<Self>::zero(); 8];
        for (v, xv) in x.iter_mut().enumerate() {
            *xv = load(re, im, 8 * v);
        }
        let mut w = [Cx::<Self>::zero(); 7];
        for (k, wk) in w.iter_mut().enumerate() {
            *wk = twiddle(tw, 8, k, 0);
        }
        let x = radix8(x, Some(w));
        let (rr, ii) = split(&x);
        let x: [Cx<Self>; 8] = join(Self::transpose(rr), Self::transpose(ii));
        for (k, v) in radix8(x, None).into_iter().enumerate() {
            accumulate(acc.add(8 * k), v);
        }
    }
}

/// Transpose an L × L matrix (rows of L) with the ISA's own transpose.
#[cfg(test)]
pub(in crate::dsp::simd_psd) fn transpose_for_test(
    isa: crate::dsp::simd_psd::Isa,
    m: &[f32],
) -> Vec<f32> {
    assert!(isa.on_this_cpu(), "transpose_for_test needs {isa:?}");
    let mut out = vec![0.0f32; m.len()];
    match isa {
        crate::dsp::simd_psd::Isa::Avx512 => {
            assert_eq!(m.len(), 256);
            #[target_feature(enable = "avx512f")]
            unsafe fn go(m: &[f32], out: &mut [f32]) {
                let mut v = [_mm512_setzero_ps(); 16];
                for (k, r) in v.iter_mut().enumerate() {
                    *r = _mm512_loadu_ps(m.as_ptr().add(16 * k));
                }
                for (k, r) in Avx512::transpose(v).into_iter().enumerate() {
                    _mm512_storeu_ps(out.as_mut_ptr().add(16 * k), r);
                }
            }
            // SAFETY: AVX-512F checked above; the 16 loads and stores of 16 stay
            // inside the 256 values of `m` and `out`.
            unsafe { go(m, &mut out) }
        }
        crate::dsp::simd_psd::Isa::Avx2 => {
            assert_eq!(m.len(), 64);
            #[target_feature(enable = "avx2,fma")]
            unsafe fn go(m: &[f32], out: &mut [f32]) {
                let mut v = [_mm256_setzero_ps(); 8];
                for (k, r) in v.iter_mut().enumerate() {
                    *r = _mm256_loadu_ps(m.as_ptr().add(8 * k));
                }
                for (k, r) in Avx2::transpose(v).into_iter().enumerate() {
                    _mm256_storeu_ps(out.as_mut_ptr().add(8 * k), r);
                }
            }
            // SAFETY: AVX2 checked above; the 8 loads and stores of 8 stay inside the
            // 64 values of `m` and `out`.
            unsafe { go(m, &mut out) }
        }
    }
    out
}

//! The AVX-512 power-spectrum kernel: window, FFT and |X|² accumulation fused for one
//! segment, on split (re/im) arrays, with the output left in the kernel's own order.
//!
//! Welch needs only Σ|X[k]|², so the kernel never puts the spectrum back into natural
//! order: it accumulates |X|² wherever the butterflies leave each bin and a table maps
//! slot → bin once, when the estimate is read. That and the split layout (no shuffles in
//! the complex multiplies) are what let it beat a general-purpose FFT used as a black box.
//!
//! Shape, for N = 2^m ≥ 256 (decimation in frequency throughout):
//! 1. an input stage that reads the interleaved input, applies the window and splits
//!    re/im on the way in, doing one radix-8, radix-4 or radix-2 stage at the same time
//!    (none for N = 256) so that the stages left pair up;
//! 2. radix-4 stages over whole 16-lane vectors (lanes are independent butterflies) down
//!    to groups of 256;
//! 3. per group of 256, in registers: two radix-4 stages over vectors, a 16 × 16
//!    transpose, a 16-point DFT across registers (lanes are blocks), and |X|² added to
//!    the accumulator.
//!
//! Chosen at run time (`is_x86_feature_detected!` for AVX-512F and AVX-512DQ), whatever
//! `target-cpu` the binary was built for; everywhere else [`super::welch::Welch`] uses
//! rustfft. The result is checked against the rustfft path in the tests.

use num_complex::Complex;

/// Smallest FFT size the kernel handles (one group of 16 × 16).
pub(crate) const MIN_N: usize = 256;
/// Largest FFT size the kernel handles (slot indices are u32; tables stay < 100 MiB).
pub(crate) const MAX_N: usize = 1 << 22;

/// 16 f32 on a 64-byte boundary: the unit of every buffer here.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Lane([f32; 16]);

/// A zeroed f32 buffer of `len` (a multiple of 16) values on a 64-byte boundary.
struct Aligned(Vec<Lane>);

impl Aligned {
    fn zeroed(len: usize) -> Self {
        debug_assert_eq!(len % 16, 0);
        Self(vec![Lane::default(); len / 16])
    }

    fn from_slice(v: &[f32]) -> Self {
        let mut a = Self::zeroed(v.len());
        a.as_mut_slice().copy_from_slice(v);
        a
    }

    fn as_slice(&self) -> &[f32] {
        bytemuck_lanes(&self.0)
    }

    fn as_mut_slice(&mut self) -> &mut [f32] {
        bytemuck_lanes_mut(&mut self.0)
    }
}

fn bytemuck_lanes(l: &[Lane]) -> &[f32] {
    // SAFETY: `Lane` is `repr(C)` of `[f32; 16]` with no padding (64 bytes, align 64),
    // so `l.len()` lanes are exactly `16 * l.len()` initialised, aligned f32.
    unsafe { std::slice::from_raw_parts(l.as_ptr().cast::<f32>(), l.len() * 16) }
}

fn bytemuck_lanes_mut(l: &mut [Lane]) -> &mut [f32] {
    // SAFETY: as in `bytemuck_lanes`; the borrow is unique.
    unsafe { std::slice::from_raw_parts_mut(l.as_mut_ptr().cast::<f32>(), l.len() * 16) }
}

/// The first stage: reads the interleaved input through the window into split re/im.
enum Input {
    /// No butterflies (n = 256: the final groups do every stage).
    Copy,
    /// Radix-2 with span n/2; twiddles `W_n^j` (re[n/2] then im[n/2]).
    Radix2(Aligned),
    /// Radix-4 with quarter span n/4; twiddles `W_n^{pj}`, p = 1, 2, 3.
    Radix4(Aligned),
    /// Radix-8 with eighth span n/8; twiddles `W_n^{pj}`, p = 1 … 7.
    Radix8(Aligned),
}

/// `twiddles(s, p, m)` for p = 1, 2, 3, one after the other (a radix-4 stage's table).
fn radix4_twiddles(s: usize, m: usize) -> Aligned {
    let mut tw = twiddles(s, 1, m);
    tw.extend(twiddles(s, 2, m));
    tw.extend(twiddles(s, 3, m));
    Aligned::from_slice(&tw)
}

/// One radix-4 DIF stage over whole vectors: quarter span `s`; twiddles `w, w², w³`
/// (re[s] then im[s] each) for j in 0..s.
struct Stage {
    s: usize,
    tw: Aligned,
}

/// Twiddles `exp(-2πi·p·j / m)` for j in 0..s, as re[s] then im[s].
fn twiddles(s: usize, p: usize, m: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; 2 * s];
    for j in 0..s {
        let a = -2.0 * std::f64::consts::PI * (p * j) as f64 / m as f64;
        v[j] = a.cos() as f32;
        v[s + j] = a.sin() as f32;
    }
    v
}

fn bit_reverse(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The fused window + FFT + |X|² kernel for one FFT size and window.
pub(crate) struct SimdPsd {
    n: usize,
    window: Aligned,
    /// The stage that reads the input.
    input: Input,
    /// Radix-4 stages between the input stage and the final groups.
    stages: Vec<Stage>,
    /// The final groups' two radix-4 stages over whole vectors: `W256^{pj}` (j < 64)
    /// and `W64^{pj}` (j < 16), p = 1, 2, 3.
    final_tw: [Aligned; 2],
    re: Aligned,
    im: Aligned,
    /// Σ|X|² per slot since the last flush.
    acc: Aligned,
    /// The FFT bin held by each slot.
    bin_of_slot: Vec<u32>,
}

impl SimdPsd {
    /// The kernel for `window.len()` points, or `None` when this CPU lacks AVX-512F/DQ or the
    /// size is not a power of two in `MIN_N..=MAX_N`.
    pub(crate) fn new(window: &[f32]) -> Option<Self> {
        if !cpu_has_avx512() {
            return None;
        }
        Self::build(window)
    }

    fn build(window: &[f32]) -> Option<Self> {
        let n = window.len();
        if !n.is_power_of_two() || !(MIN_N..=MAX_N).contains(&n) {
            return None;
        }
        let bits = n.trailing_zeros();
        // Spans n/2 … 256 are stages over whole vectors before the final groups of 256
        // (which do spans 128 … 1): the input stage takes one or two of them (so that
        // the rest pair up), radix-4 stages the rest.
        let vertical = bits - 8;
        let (input, mut group) = match vertical {
            0 => (Input::Copy, n),
            1 => (
                Input::Radix2(Aligned::from_slice(&twiddles(n / 2, 1, n))),
                n / 2,
            ),
            v if v % 2 == 1 => {
                let s = n / 8;
                let tw: Vec<f32> = (1..8).flat_map(|p| twiddles(s, p, n)).collect();
                (Input::Radix8(Aligned::from_slice(&tw)), s)
            }
            _ => (Input::Radix4(radix4_twiddles(n / 4, n)), n / 4),
        };
        let mut stages = Vec::new();
        while group > 256 {
            let s = group / 4;
            stages.push(Stage {
                s,
                tw: radix4_twiddles(s, group),
            });
            group /= 4;
        }
        debug_assert_eq!(group, 256);
        // Slot 256g + 16r + lane holds DIF position 16·(16g + lane) + r, i.e. bin
        // bitrev(that position).
        let mut bin_of_slot = vec![0u32; n];
        for (slot, b) in bin_of_slot.iter_mut().enumerate() {
            let (g, r, lane) = (slot / 256, (slot / 16) % 16, slot % 16);
            let pos = 16 * (16 * g + lane) + r;
            // n ≤ MAX_N = 2^22, so every bin fits in u32.
            *b = bit_reverse(pos, bits) as u32;
        }
        Some(Self {
            n,
            window: Aligned::from_slice(window),
            input,
            stages,
            final_tw: [radix4_twiddles(64, 256), radix4_twiddles(16, 64)],
            re: Aligned::zeroed(n),
            im: Aligned::zeroed(n),
            acc: Aligned::zeroed(n),
            bin_of_slot,
        })
    }

    /// Window, transform and accumulate |X|² of one segment of exactly `n` samples.
    ///
    /// # Panics
    /// On a segment of another length: `Welch` slices every segment to `n`, and a
    /// skipped segment would silently bias the average.
    pub(crate) fn segment(&mut self, x: &[Complex<f32>]) {
        assert_eq!(x.len(), self.n, "segment length");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `SimdPsd::new` is the only way to a kernel outside this module's
        // tests (which never transform), and it checks AVX-512F and DQ first; the
        // length is checked above.
        unsafe {
            avx512::segment(self, x)
        }
    }

    /// Add the accumulated |X|² to `totals` (natural FFT bin order).
    pub(crate) fn peek(&self, totals: &mut [f64]) {
        for (&b, &a) in self.bin_of_slot.iter().zip(self.acc.as_slice()) {
            if let Some(t) = totals.get_mut(b as usize) {
                *t += f64::from(a);
            }
        }
    }

    /// Σ|x|² (f32 partial sums of at most 4096 samples, added in f64) and the number of
    /// samples with |re| or |im| at or above `clip`.
    pub(crate) fn stats(&self, x: &[Complex<f32>], clip: f32) -> (f64, u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `SimdPsd` exists only on a CPU with AVX-512F and DQ (see `segment`).
        unsafe {
            avx512::stats(x, clip)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, clip);
            unreachable!("SimdPsd::new declines on every CPU but x86_64 with AVX-512")
        }
    }

    /// Clear the accumulator.
    pub(crate) fn reset(&mut self) {
        self.acc.as_mut_slice().fill(0.0);
    }
}

fn cpu_has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Input, SimdPsd};
    use num_complex::Complex;
    use std::arch::x86_64::*;

    /// A complex vector of 16 lanes, split.
    #[derive(Clone, Copy)]
    struct C16 {
        re: __m512,
        im: __m512,
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add(a: C16, b: C16) -> C16 {
        C16 {
            re: _mm512_add_ps(a.re, b.re),
            im: _mm512_add_ps(a.im, b.im),
        }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn sub(a: C16, b: C16) -> C16 {
        C16 {
            re: _mm512_sub_ps(a.re, b.re),
            im: _mm512_sub_ps(a.im, b.im),
        }
    }

    /// a · w
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn mul(a: C16, w: C16) -> C16 {
        C16 {
            re: _mm512_fmsub_ps(a.re, w.re, _mm512_mul_ps(a.im, w.im)),
            im: _mm512_fmadd_ps(a.re, w.im, _mm512_mul_ps(a.im, w.re)),
        }
    }

    /// a − i·b
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn sub_i(a: C16, b: C16) -> C16 {
        C16 {
            re: _mm512_add_ps(a.re, b.im),
            im: _mm512_sub_ps(a.im, b.re),
        }
    }

    /// a + i·b
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add_i(a: C16, b: C16) -> C16 {
        C16 {
            re: _mm512_sub_ps(a.re, b.im),
            im: _mm512_add_ps(a.im, b.re),
        }
    }

    /// The radix-4 DIF butterfly: (x0, x1, x2, x3) → (z0, z1, z2, z3) in place positions.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn radix4(x: [C16; 4], w: Option<[C16; 3]>) -> [C16; 4] {
        let s02 = add(x[0], x[2]);
        let d02 = sub(x[0], x[2]);
        let s13 = add(x[1], x[3]);
        let d13 = sub(x[1], x[3]);
        let z0 = add(s02, s13);
        let z1 = sub(s02, s13);
        let z2 = sub_i(d02, d13);
        let z3 = add_i(d02, d13);
        match w {
            Some([w1, w2, w3]) => [z0, mul(z1, w2), mul(z2, w1), mul(z3, w3)],
            None => [z0, z1, z2, z3],
        }
    }

    /// Load a split vector from `re`/`im` at `i` (64-byte aligned: `i` % 16 == 0).
    ///
    /// # Safety
    /// `i + 16 ≤` both lengths, and both point into 64-byte aligned buffers.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(re: *const f32, im: *const f32, i: usize) -> C16 {
        C16 {
            re: _mm512_load_ps(re.add(i)),
            im: _mm512_load_ps(im.add(i)),
        }
    }

    /// # Safety
    /// As for [`load`].
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(re: *mut f32, im: *mut f32, i: usize, v: C16) {
        _mm512_store_ps(re.add(i), v.re);
        _mm512_store_ps(im.add(i), v.im);
    }

    /// Twiddle `k` (0-based: w^(k+1)) at `j` of a table laid out re[s], im[s] per power.
    ///
    /// # Safety
    /// `tw` holds `2·s·(k+1)` values from a 64-byte boundary, `s % 16 == 0`,
    /// `j + 16 ≤ s`, `j % 16 == 0`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn twiddle(tw: *const f32, s: usize, k: usize, j: usize) -> C16 {
        load(tw.add(2 * s * k), tw.add(2 * s * k + s), j)
    }

    /// Segment: the whole kernel.
    ///
    /// # Safety
    /// The CPU supports AVX-512F; `x.len() == p.n`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn segment(p: &mut SimdPsd, x: &[Complex<f32>]) {
        let n = p.n;
        let re = p.re.as_mut_slice().as_mut_ptr();
        let im = p.im.as_mut_slice().as_mut_ptr();
        let src = x.as_ptr().cast::<f32>();
        let win = p.window.as_slice().as_ptr();
        match &p.input {
            Input::Copy => input_copy(src, win, n, re, im),
            Input::Radix2(tw) => input_radix2(src, win, tw.as_slice().as_ptr(), n, re, im),
            Input::Radix4(tw) => radix4_pass(
                |i| load_windowed(src, win, i),
                re,
                im,
                n,
                n / 4,
                tw.as_slice().as_ptr(),
            ),
            Input::Radix8(tw) => input_radix8(src, win, tw.as_slice().as_ptr(), n, re, im),
        }
        for st in &p.stages {
            radix4_pass(
                |i| load(re, im, i),
                re,
                im,
                n,
                st.s,
                st.tw.as_slice().as_ptr(),
            );
        }
        let acc = p.acc.as_mut_slice().as_mut_ptr();
        let ta = p.final_tw[0].as_slice().as_ptr();
        let tb = p.final_tw[1].as_slice().as_ptr();
        let mut g = 0;
        while g < n {
            final_group(re.add(g), im.add(g), acc.add(g), ta, tb);
            g += 256;
        }
    }

    /// Load 16 interleaved complex values at `src + 2i`, window them, split re/im.
    ///
    /// # Safety
    /// `src` has `2(i + 16)` readable f32, `win` `i + 16` aligned f32.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load_windowed(src: *const f32, win: *const f32, i: usize) -> C16 {
        let a = _mm512_loadu_ps(src.add(2 * i));
        let b = _mm512_loadu_ps(src.add(2 * i + 16));
        let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        let w = _mm512_load_ps(win.add(i));
        C16 {
            re: _mm512_mul_ps(_mm512_permutex2var_ps(a, even, b), w),
            im: _mm512_mul_ps(_mm512_permutex2var_ps(a, odd, b), w),
        }
    }

    /// The input through the window into `re`/`im`, no butterflies.
    ///
    /// # Safety
    /// `src` holds `2n` f32, `win` `n`, `re`/`im` `n` (aligned).
    #[target_feature(enable = "avx512f")]
    unsafe fn input_copy(src: *const f32, win: *const f32, n: usize, re: *mut f32, im: *mut f32) {
        let mut j = 0;
        while j < n {
            store(re, im, j, load_windowed(src, win, j));
            j += 16;
        }
    }

    /// A radix-2 stage (span n/2) reading the interleaved input through the window.
    ///
    /// # Safety
    /// `src` holds `2n` f32, `win` `n`, `tw` `n`, `re`/`im` `n` (aligned).
    #[target_feature(enable = "avx512f")]
    unsafe fn input_radix2(
        src: *const f32,
        win: *const f32,
        tw: *const f32,
        n: usize,
        re: *mut f32,
        im: *mut f32,
    ) {
        let s = n / 2;
        let mut j = 0;
        while j < s {
            let a = load_windowed(src, win, j);
            let b = load_windowed(src, win, j + s);
            store(re, im, j, add(a, b));
            store(re, im, j + s, mul(sub(a, b), twiddle(tw, s, 0, j)));
            j += 16;
        }
    }

    /// `a · (1 − i)/√2` (times `W8`).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn mul_w8(a: C16) -> C16 {
        let h = _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2);
        C16 {
            re: _mm512_mul_ps(_mm512_add_ps(a.re, a.im), h),
            im: _mm512_mul_ps(_mm512_sub_ps(a.im, a.re), h),
        }
    }

    /// `a · (−1 − i)/√2` (times `W8³`).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn mul_w8_3(a: C16) -> C16 {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        C16 {
            re: _mm512_mul_ps(_mm512_sub_ps(a.im, a.re), _mm512_set1_ps(h)),
            im: _mm512_mul_ps(_mm512_add_ps(a.re, a.im), _mm512_set1_ps(-h)),
        }
    }

    /// The radix-8 DIF butterfly (three radix-2 stages) with the per-position twiddles
    /// pulled to the end: output k is multiplied by `w^{rev3(k)}`, given as `w[p − 1]`
    /// for `w^p`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn radix8(x: [C16; 8], w: [C16; 7]) -> [C16; 8] {
        let a = [
            add(x[0], x[4]),
            add(x[1], x[5]),
            add(x[2], x[6]),
            add(x[3], x[7]),
        ];
        let u = [
            sub(x[0], x[4]),
            sub(x[1], x[5]),
            sub(x[2], x[6]),
            sub(x[3], x[7]),
        ];
        // v = (u0, u1·W8, u2·(−i), u3·W8³); the −i is folded into the sums below.
        let v1 = mul_w8(u[1]);
        let v3 = mul_w8_3(u[3]);
        let c0 = add(a[0], a[2]);
        let c1 = add(a[1], a[3]);
        let c2 = sub(a[0], a[2]);
        let c3 = sub(a[1], a[3]); // times −i below
        let d0 = sub_i(u[0], u[2]);
        let d2 = add_i(u[0], u[2]);
        let d1 = add(v1, v3);
        let d3 = sub(v1, v3); // times −i below
        [
            add(c0, c1),
            mul(sub(c0, c1), w[3]),
            mul(sub_i(c2, c3), w[1]),
            mul(add_i(c2, c3), w[5]),
            mul(add(d0, d1), w[0]),
            mul(sub(d0, d1), w[4]),
            mul(sub_i(d2, d3), w[2]),
            mul(add_i(d2, d3), w[6]),
        ]
    }

    /// A radix-8 stage (eighth span n/8) reading the interleaved input through the
    /// window.
    ///
    /// # Safety
    /// `src` holds `2n` f32, `win` `n`, `tw` `14·n/8`, `re`/`im` `n` (aligned).
    #[target_feature(enable = "avx512f")]
    unsafe fn input_radix8(
        src: *const f32,
        win: *const f32,
        tw: *const f32,
        n: usize,
        re: *mut f32,
        im: *mut f32,
    ) {
        let s = n / 8;
        let mut j = 0;
        while j < s {
            let zero = C16 {
                re: _mm512_setzero_ps(),
                im: _mm512_setzero_ps(),
            };
            let mut x = [zero; 8];
            for (k, xk) in x.iter_mut().enumerate() {
                *xk = load_windowed(src, win, j + k * s);
            }
            let mut w = [zero; 7];
            for (k, wk) in w.iter_mut().enumerate() {
                *wk = twiddle(tw, s, k, j);
            }
            for (k, v) in radix8(x, w).into_iter().enumerate() {
                store(re, im, j + k * s, v);
            }
            j += 16;
        }
    }

    /// Radix-4 stages with quarter span `s` over groups of `4s` in `n`: `load(i)` gives
    /// point `i` (the windowed input, or `re`/`im` themselves), results go to `re`/`im` at
    /// the same positions.
    ///
    /// # Safety
    /// `load` is valid for every `i < n` with `i % 16 == 0`; `re`/`im` hold `n` aligned
    /// f32, `tw` `6s`; `s` ≥ 16 and a multiple of 16; `n` a multiple of `4s`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn radix4_pass(
        load: impl Fn(usize) -> C16,
        re: *mut f32,
        im: *mut f32,
        n: usize,
        s: usize,
        tw: *const f32,
    ) {
        let mut base = 0;
        while base < n {
            let mut j = 0;
            while j < s {
                let at = base + j;
                let x = [load(at), load(at + s), load(at + 2 * s), load(at + 3 * s)];
                let w = [
                    twiddle(tw, s, 0, j),
                    twiddle(tw, s, 1, j),
                    twiddle(tw, s, 2, j),
                ];
                for (k, v) in radix4(x, Some(w)).into_iter().enumerate() {
                    store(re, im, at + k * s, v);
                }
                j += 16;
            }
            base += 4 * s;
        }
    }

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

    /// Transpose 16 vectors of 16 (row i lane j → row j lane i).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn transpose(r: [__m512; 16]) -> [__m512; 16] {
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

    /// One group of 256 at `re`/`im` as 16 vectors: two radix-4 stages over whole
    /// vectors (spans 128 … 16, twiddles `ta`, `tb`), a transpose, the 16-point DIF across
    /// registers, and |X|² into `acc` (slot 16r + lane for register r).
    ///
    /// # Safety
    /// `re`, `im`, `acc` each have 256 aligned f32; `ta` 384, `tb` 96.
    #[target_feature(enable = "avx512f")]
    unsafe fn final_group(
        re: *const f32,
        im: *const f32,
        acc: *mut f32,
        ta: *const f32,
        tb: *const f32,
    ) {
        let mut x = [C16 {
            re: _mm512_setzero_ps(),
            im: _mm512_setzero_ps(),
        }; 16];
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
        let mut rr = [_mm512_setzero_ps(); 16];
        let mut ii = [_mm512_setzero_ps(); 16];
        for (k, v) in x.iter().enumerate() {
            rr[k] = v.re;
            ii[k] = v.im;
        }
        let rr = transpose(rr);
        let ii = transpose(ii);
        let mut x = [C16 {
            re: _mm512_setzero_ps(),
            im: _mm512_setzero_ps(),
        }; 16];
        for k in 0..16 {
            x[k] = C16 {
                re: rr[k],
                im: ii[k],
            };
        }
        // Radix-4 with quarter span 4 (twiddles W16^j, W16^2j, W16^3j), then radix-4
        // with quarter span 1 (no twiddles).
        for j in 0..4 {
            let w = if j == 0 {
                None
            } else {
                let c = |p: usize| C16 {
                    re: _mm512_set1_ps(W16[p].0),
                    im: _mm512_set1_ps(W16[p].1),
                };
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
        for (k, v) in x.iter().enumerate() {
            let a = acc.add(16 * k);
            let p = _mm512_fmadd_ps(v.re, v.re, _mm512_load_ps(a));
            _mm512_store_ps(a, _mm512_fmadd_ps(v.im, v.im, p));
        }
    }

    /// See [`SimdPsd::stats`]. The clip count is exact; it is worked out sample by sample
    /// only for a run of 4096 samples whose largest |re| or |im| reaches `clip` (rare),
    /// else one `vrangeps` per 8 samples keeps the running maximum.
    ///
    /// # Safety
    /// The CPU supports AVX-512F and AVX-512DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn stats(x: &[Complex<f32>], clip: f32) -> (f64, u64) {
        let f = x.as_ptr().cast::<f32>();
        let len = 2 * x.len();
        let whole = len - len % 32;
        let mut total = 0.0f64;
        let mut clipped = 0u64;
        let mut i = 0;
        while i < whole {
            let start = i;
            let end = whole.min(i + 8192);
            let (mut a0, mut a1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
            let (mut m0, mut m1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
            while i < end {
                // SAFETY: i + 32 ≤ whole ≤ len f32 in `x`.
                let v0 = _mm512_loadu_ps(f.add(i));
                let v1 = _mm512_loadu_ps(f.add(i + 16));
                a0 = _mm512_fmadd_ps(v0, v0, a0);
                a1 = _mm512_fmadd_ps(v1, v1, a1);
                // imm 0b1011: the larger magnitude, sign cleared (running max |v|).
                m0 = _mm512_range_ps::<0b1011>(m0, v0);
                m1 = _mm512_range_ps::<0b1011>(m1, v1);
                i += 32;
            }
            let power = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
            total += f64::from(power);
            // vrangeps ignores a quiet NaN and turns a signalling one into a NaN lane
            // (which resets that lane's maximum); either way `power` is NaN, and then
            // the count is exact too.
            let top = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
            if power.is_nan() || top.is_nan() || top >= clip {
                clipped += x[start / 2..end / 2]
                    .iter()
                    .filter(|v| v.re.abs() >= clip || v.im.abs() >= clip)
                    .count() as u64;
            }
        }
        for v in &x[whole / 2..] {
            total += f64::from(v.re * v.re + v.im * v.im);
            clipped += u64::from(v.re.abs() >= clip || v.im.abs() >= clip);
        }
        (total, clipped)
    }

    #[cfg(test)]
    pub(super) fn transpose_for_test(r: [[f32; 16]; 16]) -> [[f32; 16]; 16] {
        assert!(super::cpu_has_avx512(), "transpose_for_test needs AVX-512");
        let mut out = [[0.0f32; 16]; 16];
        // SAFETY: AVX-512F checked just above; loads/stores stay inside the 16 × 16
        // arrays.
        unsafe {
            #[target_feature(enable = "avx512f")]
            unsafe fn go(r: &[[f32; 16]; 16], out: &mut [[f32; 16]; 16]) {
                let mut v = [_mm512_setzero_ps(); 16];
                for k in 0..16 {
                    v[k] = _mm512_loadu_ps(r[k].as_ptr());
                }
                let t = transpose(v);
                for k in 0..16 {
                    _mm512_storeu_ps(out[k].as_mut_ptr(), t[k]);
                }
            }
            go(&r, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustfft::FftPlanner;

    fn signal(n: usize, seed: u64) -> Vec<Complex<f32>> {
        let mut s = seed | 1;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        (0..n)
            .map(|i| {
                let t = i as f32 * 0.0123;
                Complex::new(0.3 * t.cos() + rnd(), 0.3 * t.sin() + rnd())
            })
            .collect()
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn transpose_is_a_transpose() {
        if !cpu_has_avx512() {
            return;
        }
        let mut m = [[0.0f32; 16]; 16];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (16 * i + j) as f32;
            }
        }
        let t = avx512::transpose_for_test(m);
        for i in 0..16 {
            for j in 0..16 {
                assert_eq!(t[i][j], m[j][i], "({i}, {j})");
            }
        }
    }

    /// The kernel's Σ|X|² per bin equals rustfft's on the same windowed segments.
    #[test]
    fn matches_rustfft_for_every_size() {
        if !cpu_has_avx512() {
            eprintln!("no AVX-512F on this CPU: the kernel is not used here");
            return;
        }
        for bits in 8..=16 {
            let n = 1usize << bits;
            let window = crate::dsp::Window::Hann.build(n);
            let mut k = SimdPsd::new(&window).expect("avx512 kernel");
            let fft = FftPlanner::<f32>::new().plan_fft_forward(n);
            let mut want = vec![0.0f64; n];
            for seg in 0..3 {
                let x = signal(n, 99 + seg);
                k.segment(&x);
                let mut buf: Vec<Complex<f32>> =
                    x.iter().zip(&window).map(|(v, w)| v * w).collect();
                fft.process(&mut buf);
                for (t, v) in want.iter_mut().zip(&buf) {
                    *t += f64::from(v.norm_sqr());
                }
            }
            let mut got = vec![0.0f64; n];
            k.peek(&mut got);
            let top = want.iter().copied().fold(0.0, f64::max);
            for (b, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * top + 1e-3 * w,
                    "n {n} bin {b}: got {g}, want {w}"
                );
            }
            k.reset();
            let mut after = vec![0.0f64; n];
            k.peek(&mut after);
            assert!(after.iter().all(|&v| v == 0.0));
        }
    }

    #[test]
    fn stats_count_power_and_clipping() {
        let Some(k) = SimdPsd::new(&vec![1.0; 256]) else {
            return;
        };
        for len in [0usize, 1, 15, 16, 17, 100, 5000, 20_011] {
            let mut x = signal(len, len as u64 + 3);
            for (i, v) in x.iter_mut().enumerate() {
                match i % 37 {
                    3 => v.re = 1.0,
                    11 => v.im = -1.25,
                    20 => *v = Complex::new(-1.0, 1.0),
                    _ => {}
                }
            }
            let want_p: f64 = x.iter().map(|v| f64::from(v.norm_sqr())).sum();
            let want_c = x
                .iter()
                .filter(|v| v.re.abs() >= 1.0 || v.im.abs() >= 1.0)
                .count() as u64;
            let (p, c) = k.stats(&x, 1.0);
            assert_eq!(c, want_c, "len {len}");
            assert!(
                (p - want_p).abs() <= 1e-5 * want_p.max(1.0),
                "len {len}: {p} vs {want_p}"
            );
        }
    }

    #[test]
    fn stats_count_clipping_beside_nan() {
        let Some(k) = SimdPsd::new(&vec![1.0; 256]) else {
            return;
        };
        let mut x = vec![Complex::new(0.1f32, 0.1); 10_000];
        x[5] = Complex::new(2.0, 0.0);
        x[6] = Complex::new(f32::NAN, 0.0);
        x[9_000] = Complex::new(0.0, f32::INFINITY);
        let (p, c) = k.stats(&x, 1.0);
        assert_eq!(c, 2);
        assert!(p.is_nan());
    }

    #[test]
    fn sizes_outside_the_kernel_are_declined() {
        for n in [16usize, 128, 1000, 3 * 1024] {
            assert!(SimdPsd::build(&vec![1.0; n]).is_none(), "{n}");
        }
    }

    #[test]
    fn slots_cover_every_bin_once() {
        let Some(k) = SimdPsd::build(&vec![1.0; 4096]) else {
            panic!("4096 is a kernel size");
        };
        let mut seen = vec![false; 4096];
        for &b in &k.bin_of_slot {
            assert!(!seen[b as usize], "bin {b} twice");
            seen[b as usize] = true;
        }
    }
}

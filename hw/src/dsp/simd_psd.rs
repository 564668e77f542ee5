//! The SIMD power-spectrum kernels (AVX-512 and AVX2): window, FFT and |X|² accumulation
//! fused for one segment, on split (re/im) arrays, with the output left in the kernel's own
//! order.
//!
//! Welch needs only Σ|X[k]|², so the kernel never puts the spectrum back into natural
//! order: it accumulates |X|² wherever the butterflies leave each bin and a table maps
//! slot → bin once, when the estimate is read. That and the split layout (no shuffles in
//! the complex multiplies) are what let it beat a general-purpose FFT used as a black box.
//!
//! One kernel, two vector widths: L = 16 lanes (`__m512`, AVX-512F/DQ) or L = 8 lanes
//! (`__m256`, AVX2 + FMA). Shape, for N = 2^m ≥ L² (decimation in frequency throughout):
//! 1. an input stage that reads the interleaved input, applies the window and splits
//!    re/im on the way in, doing one radix-8, radix-4 or radix-2 stage at the same time
//!    (none for N = L²) so that the stages left pair up;
//! 2. radix-4 stages over whole L-lane vectors (lanes are independent butterflies) down
//!    to groups of L²;
//! 3. per group of L², in registers: the DIF stages over vectors down to span L (two
//!    radix-4 for L = 16, one radix-8 for L = 8), an L × L transpose, an L-point DFT
//!    across registers (lanes are blocks), and |X|² added to the accumulator.
//!
//! The stage logic is written once, generic over [`x86::Simd`] (the ISA primitives:
//! load/store, arithmetic, deinterleave-with-window, the final group with its transpose);
//! every helper is `#[inline(always)]`, so it is compiled inside the ISA's
//! `#[target_feature]` entry point with that ISA's instructions.
//!
//! Chosen at run time (`is_x86_feature_detected!`), whatever `target-cpu` the binary was
//! built for: AVX-512F+DQ first, else AVX2+FMA; everywhere else [`super::welch::Welch`]
//! uses rustfft. The results are checked against the rustfft path in the tests.

use num_complex::Complex;

/// Largest FFT size the kernel handles (slot indices are u32; tables stay < 100 MiB).
pub(crate) const MAX_N: usize = 1 << 22;

/// The instruction set a kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// AVX-512F and AVX-512DQ: 16-lane vectors, final groups of 256.
    Avx512,
    /// AVX2 and FMA: 8-lane vectors, final groups of 64.
    Avx2,
}

impl Isa {
    /// Every kernel, fastest first.
    pub(crate) const ALL: [Isa; 2] = [Isa::Avx512, Isa::Avx2];

    /// The name [`super::welch::Welch::engine`] reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512",
            Self::Avx2 => "avx2",
        }
    }

    /// Lanes per vector.
    fn lanes(self) -> usize {
        match self {
            Self::Avx512 => 16,
            Self::Avx2 => 8,
        }
    }

    /// Smallest FFT size: one final group of lanes × lanes.
    pub(crate) fn min_n(self) -> usize {
        self.lanes() * self.lanes()
    }

    /// Whether this CPU runs the kernel.
    pub(crate) fn on_this_cpu(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Self::Avx512 => has!("avx512f") && has!("avx512dq"),
                Self::Avx2 => has!("avx2") && has!("fma"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

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
    /// No butterflies (n = L²: the final groups do every stage).
    Copy,
    /// Radix-2 with span n/2; twiddles `W_n^j` (re[n/2] then im[n/2]).
    Radix2(Aligned),
    /// Radix-4 with quarter span n/4; twiddles `W_n^{pj}`, p = 1, 2, 3.
    Radix4(Aligned),
    /// Radix-8 with eighth span n/8; twiddles `W_n^{pj}`, p = 1 … 7.
    Radix8(Aligned),
}

/// `twiddles(s, p, m)` for p = 1 … `powers`, one after the other (a radix-4 stage's
/// table for 3, a radix-8 stage's for 7).
fn stage_twiddles(s: usize, m: usize, powers: usize) -> Vec<f32> {
    (1..=powers).flat_map(|p| twiddles(s, p, m)).collect()
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

/// The fused window + FFT + |X|² kernel for one FFT size, window and ISA.
pub(crate) struct SimdPsd {
    isa: Isa,
    n: usize,
    window: Aligned,
    /// The stage that reads the input.
    input: Input,
    /// Radix-4 stages between the input stage and the final groups.
    stages: Vec<Stage>,
    /// The final groups' stages over whole vectors. AVX-512: two radix-4 stages,
    /// `W256^{pj}` (j < 64) then `W64^{pj}` (j < 16), p = 1, 2, 3; AVX2: one radix-8
    /// stage, `W64^{pj}` (j < 8), p = 1 … 7.
    final_tw: Aligned,
    re: Aligned,
    im: Aligned,
    /// Σ|X|² per slot since the last flush.
    acc: Aligned,
    /// The FFT bin held by each slot.
    bin_of_slot: Vec<u32>,
}

impl SimdPsd {
    /// The fastest kernel this CPU has for `window.len()` points, or `None` when it has
    /// none or the size is not a power of two the kernels handle.
    pub(crate) fn new(window: &[f32]) -> Option<Self> {
        Isa::ALL
            .into_iter()
            .find_map(|isa| Self::with_isa(window, isa))
    }

    /// The `isa` kernel for `window.len()` points, or `None` when this CPU lacks `isa` or
    /// the size is not a power of two in `isa.min_n()..=MAX_N`.
    pub(crate) fn with_isa(window: &[f32], isa: Isa) -> Option<Self> {
        if !isa.on_this_cpu() {
            return None;
        }
        Self::build(window, isa)
    }

    /// The plan, tables and buffers (no CPU check: [`Self::segment`] and [`Self::stats`]
    /// need one made by [`Self::with_isa`]).
    fn build(window: &[f32], isa: Isa) -> Option<Self> {
        let n = window.len();
        let lanes = isa.lanes();
        let group = isa.min_n();
        if !n.is_power_of_two() || !(group..=MAX_N).contains(&n) {
            return None;
        }
        let bits = n.trailing_zeros();
        // Spans n/2 … L² are stages over whole vectors before the final groups of L²
        // (which do spans L²/2 … 1): the input stage takes one or two of them (so that
        // the rest pair up), radix-4 stages the rest.
        let vertical = bits - group.trailing_zeros();
        let (input, mut span) = match vertical {
            0 => (Input::Copy, n),
            1 => (
                Input::Radix2(Aligned::from_slice(&twiddles(n / 2, 1, n))),
                n / 2,
            ),
            v if v % 2 == 1 => (
                Input::Radix8(Aligned::from_slice(&stage_twiddles(n / 8, n, 7))),
                n / 8,
            ),
            _ => (
                Input::Radix4(Aligned::from_slice(&stage_twiddles(n / 4, n, 3))),
                n / 4,
            ),
        };
        let mut stages = Vec::new();
        while span > group {
            let s = span / 4;
            stages.push(Stage {
                s,
                tw: Aligned::from_slice(&stage_twiddles(s, span, 3)),
            });
            span /= 4;
        }
        debug_assert_eq!(span, group);
        let final_tw = match isa {
            Isa::Avx512 => {
                let mut tw = stage_twiddles(64, 256, 3);
                tw.extend(stage_twiddles(16, 64, 3));
                tw
            }
            Isa::Avx2 => stage_twiddles(8, 64, 7),
        };
        // Slot L²g + Lr + lane holds DIF position L·(Lg + lane) + r (register r of group
        // g after the transpose holds the positions ≡ r mod L, one per lane), i.e. bin
        // bitrev(that position).
        let mut bin_of_slot = vec![0u32; n];
        for (slot, b) in bin_of_slot.iter_mut().enumerate() {
            let (g, r, lane) = (slot / group, (slot / lanes) % lanes, slot % lanes);
            let pos = lanes * (lanes * g + lane) + r;
            // n ≤ MAX_N = 2^22, so every bin fits in u32.
            *b = bit_reverse(pos, bits) as u32;
        }
        Some(Self {
            isa,
            n,
            window: Aligned::from_slice(window),
            input,
            stages,
            final_tw: Aligned::from_slice(&final_tw),
            re: Aligned::zeroed(n),
            im: Aligned::zeroed(n),
            acc: Aligned::zeroed(n),
            bin_of_slot,
        })
    }

    /// The instruction set this kernel runs on.
    pub(crate) fn isa(&self) -> Isa {
        self.isa
    }

    /// Window, transform and accumulate |X|² of one segment of exactly `n` samples.
    ///
    /// # Panics
    /// On a segment of another length: `Welch` slices every segment to `n`, and a
    /// skipped segment would silently bias the average.
    pub(crate) fn segment(&mut self, x: &[Complex<f32>]) {
        assert_eq!(x.len(), self.n, "segment length");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `SimdPsd::with_isa` is the only way to a kernel outside this module's
        // tests (which never transform), and it checks that the CPU has `self.isa`'s
        // features first; the length is checked above.
        unsafe {
            match self.isa {
                Isa::Avx512 => x86::segment_avx512(self, x),
                Isa::Avx2 => x86::segment_avx2(self, x),
            }
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
        // SAFETY: a `SimdPsd` that runs exists only on a CPU with `self.isa`'s features
        // (see `segment`).
        unsafe {
            match self.isa {
                Isa::Avx512 => x86::stats_avx512(x, clip),
                Isa::Avx2 => x86::stats_avx2(x, clip),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, clip);
            unreachable!("SimdPsd::with_isa declines on every CPU but x86_64")
        }
    }

    /// Clear the accumulator.
    pub(crate) fn reset(&mut self) {
        self.acc.as_mut_slice().fill(0.0);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Input, SimdPsd};
    use num_complex::Complex;
    use std::arch::x86_64::*;

    /// The ISA primitives the shared stage logic is written in.
    ///
    /// Every method is `#[inline(always)]` and uses the ISA's intrinsics without enabling
    /// its features itself: it must be compiled into a caller that does.
    ///
    /// # Safety
    /// Every method may be called only from code inlined into a function with the ISA's
    /// `#[target_feature]`s (`segment_*`, `stats_*` below) on a CPU that has them; the
    /// pointer methods' own conditions are stated on each.
    pub(super) trait Simd: Copy {
        /// Lanes per vector (L).
        const LANES: usize;
        /// A vector of L f32.
        type V: Copy;
        unsafe fn zero() -> Self::V;
        unsafe fn set1(a: f32) -> Self::V;
        unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
        unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
        unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
        /// a·b + c
        unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
        /// a·b − c
        unsafe fn fmsub(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
        /// Aligned load: `p` is on a 4L-byte boundary with L readable f32.
        unsafe fn load(p: *const f32) -> Self::V;
        /// Aligned store: `p` is on a 4L-byte boundary with L writable f32.
        unsafe fn store(p: *mut f32, v: Self::V);
        /// Unaligned load of L f32 at `p`.
        unsafe fn loadu(p: *const f32) -> Self::V;
        /// Lane-wise max(m, |v|), where `m` ≥ 0 (a NaN in `v` may be dropped or kept).
        unsafe fn abs_max(m: Self::V, v: Self::V) -> Self::V;
        /// Sum of the lanes.
        unsafe fn hsum(v: Self::V) -> f32;
        /// Largest lane.
        unsafe fn hmax(v: Self::V) -> f32;
        /// L interleaved complex values at `src + 2i` times the window at `win + i`, split.
        /// `src` has `2(i + L)` readable f32; `win + i` is aligned with L readable f32.
        unsafe fn load_windowed(src: *const f32, win: *const f32, i: usize) -> Cx<Self>;
        /// One final group of L² points at `re`/`im` (L vectors): the stages over vectors
        /// down to span L (twiddles `tw`), an L × L transpose, the L-point DIF across
        /// registers, and |X|² into `acc` (slot Lr + lane for register r). `re`, `im`,
        /// `acc` have L² aligned f32; `tw` is [`SimdPsd::final_tw`].
        unsafe fn final_group(re: *const f32, im: *const f32, acc: *mut f32, tw: *const f32);
    }

    /// A complex vector of L lanes, split.
    pub(super) struct Cx<S: Simd> {
        re: S::V,
        im: S::V,
    }

    impl<S: Simd> Clone for Cx<S> {
        fn clone(&self) -> Self {
            *self
        }
    }

    impl<S: Simd> Copy for Cx<S> {}

    impl<S: Simd> Cx<S> {
        #[inline(always)]
        unsafe fn zero() -> Self {
            Self {
                re: S::zero(),
                im: S::zero(),
            }
        }

        #[inline(always)]
        unsafe fn splat(re: f32, im: f32) -> Self {
            Self {
                re: S::set1(re),
                im: S::set1(im),
            }
        }
    }

    #[inline(always)]
    unsafe fn add<S: Simd>(a: Cx<S>, b: Cx<S>) -> Cx<S> {
        Cx {
            re: S::add(a.re, b.re),
            im: S::add(a.im, b.im),
        }
    }

    #[inline(always)]
    unsafe fn sub<S: Simd>(a: Cx<S>, b: Cx<S>) -> Cx<S> {
        Cx {
            re: S::sub(a.re, b.re),
            im: S::sub(a.im, b.im),
        }
    }

    /// a · w
    #[inline(always)]
    unsafe fn mul<S: Simd>(a: Cx<S>, w: Cx<S>) -> Cx<S> {
        Cx {
            re: S::fmsub(a.re, w.re, S::mul(a.im, w.im)),
            im: S::fmadd(a.re, w.im, S::mul(a.im, w.re)),
        }
    }

    /// a − i·b
    #[inline(always)]
    unsafe fn sub_i<S: Simd>(a: Cx<S>, b: Cx<S>) -> Cx<S> {
        Cx {
            re: S::add(a.re, b.im),
            im: S::sub(a.im, b.re),
        }
    }

    /// a + i·b
    #[inline(always)]
    unsafe fn add_i<S: Simd>(a: Cx<S>, b: Cx<S>) -> Cx<S> {
        Cx {
            re: S::sub(a.re, b.im),
            im: S::add(a.im, b.re),
        }
    }

    /// The radix-4 DIF butterfly: (x0, x1, x2, x3) → (z0, z1, z2, z3) in place positions.
    #[inline(always)]
    unsafe fn radix4<S: Simd>(x: [Cx<S>; 4], w: Option<[Cx<S>; 3]>) -> [Cx<S>; 4] {
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

    /// `a · (1 − i)/√2` (times `W8`).
    #[inline(always)]
    unsafe fn mul_w8<S: Simd>(a: Cx<S>) -> Cx<S> {
        let h = S::set1(std::f32::consts::FRAC_1_SQRT_2);
        Cx {
            re: S::mul(S::add(a.re, a.im), h),
            im: S::mul(S::sub(a.im, a.re), h),
        }
    }

    /// `a · (−1 − i)/√2` (times `W8³`).
    #[inline(always)]
    unsafe fn mul_w8_3<S: Simd>(a: Cx<S>) -> Cx<S> {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        Cx {
            re: S::mul(S::sub(a.im, a.re), S::set1(h)),
            im: S::mul(S::add(a.re, a.im), S::set1(-h)),
        }
    }

    /// The radix-8 DIF butterfly (three radix-2 stages) with the per-position twiddles
    /// pulled to the end: output k is multiplied by `w^{rev3(k)}`, given as `w[p − 1]`
    /// for `w^p` (none: a plain 8-point DIF).
    #[inline(always)]
    unsafe fn radix8<S: Simd>(x: [Cx<S>; 8], w: Option<[Cx<S>; 7]>) -> [Cx<S>; 8] {
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
        let z = [
            add(c0, c1),
            sub(c0, c1),
            sub_i(c2, c3),
            add_i(c2, c3),
            add(d0, d1),
            sub(d0, d1),
            sub_i(d2, d3),
            add_i(d2, d3),
        ];
        match w {
            Some(w) => [
                z[0],
                mul(z[1], w[3]),
                mul(z[2], w[1]),
                mul(z[3], w[5]),
                mul(z[4], w[0]),
                mul(z[5], w[4]),
                mul(z[6], w[2]),
                mul(z[7], w[6]),
            ],
            None => z,
        }
    }

    /// Load a split vector from `re`/`im` at `i`.
    ///
    /// # Safety
    /// `i + L ≤` both lengths, `i % L == 0`, and both point into 64-byte aligned buffers.
    #[inline(always)]
    unsafe fn load<S: Simd>(re: *const f32, im: *const f32, i: usize) -> Cx<S> {
        Cx {
            re: S::load(re.add(i)),
            im: S::load(im.add(i)),
        }
    }

    /// # Safety
    /// As for [`load`].
    #[inline(always)]
    unsafe fn store<S: Simd>(re: *mut f32, im: *mut f32, i: usize, v: Cx<S>) {
        S::store(re.add(i), v.re);
        S::store(im.add(i), v.im);
    }

    /// Twiddle `k` (0-based: w^(k+1)) at `j` of a table laid out re[s], im[s] per power.
    ///
    /// # Safety
    /// `tw` holds `2·s·(k+1)` values from a 64-byte boundary, `s % L == 0`,
    /// `j + L ≤ s`, `j % L == 0`.
    #[inline(always)]
    unsafe fn twiddle<S: Simd>(tw: *const f32, s: usize, k: usize, j: usize) -> Cx<S> {
        load(tw.add(2 * s * k), tw.add(2 * s * k + s), j)
    }

    /// The re and im vectors of `x`, apart (for a transpose).
    #[inline(always)]
    fn split<S: Simd, const K: usize>(x: &[Cx<S>; K]) -> ([S::V; K], [S::V; K]) {
        let (mut re, mut im) = ([x[0].re; K], [x[0].im; K]);
        for (k, v) in x.iter().enumerate() {
            re[k] = v.re;
            im[k] = v.im;
        }
        (re, im)
    }

    /// The complex vectors of `re` and `im`, back together.
    #[inline(always)]
    fn join<S: Simd, const K: usize>(re: [S::V; K], im: [S::V; K]) -> [Cx<S>; K] {
        let mut x = [Cx {
            re: re[0],
            im: im[0],
        }; K];
        for (k, v) in x.iter_mut().enumerate() {
            *v = Cx {
                re: re[k],
                im: im[k],
            };
        }
        x
    }

    /// |X|² of `v` added to the L accumulator slots at `acc`.
    ///
    /// # Safety
    /// `acc` is aligned with L writable f32.
    #[inline(always)]
    unsafe fn accumulate<S: Simd>(acc: *mut f32, v: Cx<S>) {
        let p = S::fmadd(v.re, v.re, S::load(acc));
        S::store(acc, S::fmadd(v.im, v.im, p));
    }

    /// Where a stage reads its points from.
    trait Source<S: Simd> {
        /// The L points from `i` (`i % L == 0`).
        ///
        /// # Safety
        /// `i + L` is within the source's `n` points.
        unsafe fn at(&self, i: usize) -> Cx<S>;
    }

    /// The interleaved input through the window.
    struct Windowed {
        src: *const f32,
        win: *const f32,
    }

    impl<S: Simd> Source<S> for Windowed {
        #[inline(always)]
        unsafe fn at(&self, i: usize) -> Cx<S> {
            S::load_windowed(self.src, self.win, i)
        }
    }

    /// The split arrays themselves.
    struct Split {
        re: *const f32,
        im: *const f32,
    }

    impl<S: Simd> Source<S> for Split {
        #[inline(always)]
        unsafe fn at(&self, i: usize) -> Cx<S> {
            load(self.re, self.im, i)
        }
    }

    /// The whole kernel for one segment.
    ///
    /// # Safety
    /// Inlined into an entry point with `S`'s features, on a CPU that has them;
    /// `p` was built for `S` and `x.len() == p.n`.
    #[inline(always)]
    unsafe fn segment<S: Simd>(p: &mut SimdPsd, x: &[Complex<f32>]) {
        let n = p.n;
        let re = p.re.as_mut_slice().as_mut_ptr();
        let im = p.im.as_mut_slice().as_mut_ptr();
        let input = Windowed {
            src: x.as_ptr().cast::<f32>(),
            win: p.window.as_slice().as_ptr(),
        };
        match &p.input {
            Input::Copy => input_copy::<S>(&input, n, re, im),
            Input::Radix2(tw) => input_radix2::<S>(&input, tw.as_slice().as_ptr(), n, re, im),
            Input::Radix4(tw) => {
                radix4_pass::<S>(&input, re, im, n, n / 4, tw.as_slice().as_ptr());
            }
            Input::Radix8(tw) => input_radix8::<S>(&input, tw.as_slice().as_ptr(), n, re, im),
        }
        let split = Split { re, im };
        for st in &p.stages {
            radix4_pass::<S>(&split, re, im, n, st.s, st.tw.as_slice().as_ptr());
        }
        let acc = p.acc.as_mut_slice().as_mut_ptr();
        let tw = p.final_tw.as_slice().as_ptr();
        let group = S::LANES * S::LANES;
        let mut g = 0;
        while g < n {
            S::final_group(re.add(g), im.add(g), acc.add(g), tw);
            g += group;
        }
    }

    /// The input through the window into `re`/`im`, no butterflies.
    ///
    /// # Safety
    /// `input` holds `n` points, `re`/`im` `n` aligned f32.
    #[inline(always)]
    unsafe fn input_copy<S: Simd>(input: &Windowed, n: usize, re: *mut f32, im: *mut f32) {
        let mut j = 0;
        while j < n {
            store::<S>(re, im, j, input.at(j));
            j += S::LANES;
        }
    }

    /// A radix-2 stage (span n/2) reading the interleaved input through the window.
    ///
    /// # Safety
    /// `input` holds `n` points, `tw` `n` aligned f32, `re`/`im` `n` aligned f32.
    #[inline(always)]
    unsafe fn input_radix2<S: Simd>(
        input: &Windowed,
        tw: *const f32,
        n: usize,
        re: *mut f32,
        im: *mut f32,
    ) {
        let s = n / 2;
        let mut j = 0;
        while j < s {
            let a: Cx<S> = input.at(j);
            let b = input.at(j + s);
            store(re, im, j, add(a, b));
            store(re, im, j + s, mul(sub(a, b), twiddle(tw, s, 0, j)));
            j += S::LANES;
        }
    }

    /// A radix-8 stage (eighth span n/8) reading the interleaved input through the
    /// window.
    ///
    /// # Safety
    /// `input` holds `n` points, `tw` `14·n/8` aligned f32, `re`/`im` `n` aligned f32.
    #[inline(always)]
    unsafe fn input_radix8<S: Simd>(
        input: &Windowed,
        tw: *const f32,
        n: usize,
        re: *mut f32,
        im: *mut f32,
    ) {
        let s = n / 8;
        let mut j = 0;
        while j < s {
            let mut x = [Cx::<S>::zero(); 8];
            for (k, xk) in x.iter_mut().enumerate() {
                *xk = input.at(j + k * s);
            }
            let mut w = [Cx::<S>::zero(); 7];
            for (k, wk) in w.iter_mut().enumerate() {
                *wk = twiddle(tw, s, k, j);
            }
            for (k, v) in radix8(x, Some(w)).into_iter().enumerate() {
                store(re, im, j + k * s, v);
            }
            j += S::LANES;
        }
    }

    /// Radix-4 stages with quarter span `s` over groups of `4s` in `n`: `from` gives
    /// point `i` (the windowed input, or `re`/`im` themselves), results go to `re`/`im` at
    /// the same positions.
    ///
    /// # Safety
    /// `from` holds `n` points; `re`/`im` hold `n` aligned f32, `tw` `6s`; `s` ≥ L and a
    /// multiple of L; `n` a multiple of `4s`.
    #[inline(always)]
    unsafe fn radix4_pass<S: Simd>(
        from: &impl Source<S>,
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
                let x = [
                    from.at(at),
                    from.at(at + s),
                    from.at(at + 2 * s),
                    from.at(at + 3 * s),
                ];
                let w = [
                    twiddle(tw, s, 0, j),
                    twiddle(tw, s, 1, j),
                    twiddle(tw, s, 2, j),
                ];
                for (k, v) in radix4(x, Some(w)).into_iter().enumerate() {
                    store(re, im, at + k * s, v);
                }
                j += S::LANES;
            }
            base += 4 * s;
        }
    }

    /// Σ|x|² and the exact clip count, see [`SimdPsd::stats`]. The count is worked out
    /// sample by sample only for a run of 4096 samples whose largest |re| or |im| reaches
    /// `clip` or whose power is NaN (rare); else [`Simd::abs_max`] keeps a running
    /// maximum. Whatever that maximum does with a NaN, `power` is NaN then, so the count
    /// is exact too.
    ///
    /// # Safety
    /// Inlined into an entry point with `S`'s features, on a CPU that has them.
    #[inline(always)]
    unsafe fn stats<S: Simd>(x: &[Complex<f32>], clip: f32) -> (f64, u64) {
        let f = x.as_ptr().cast::<f32>();
        let len = 2 * x.len();
        let step = 2 * S::LANES;
        let whole = len - len % step;
        let mut total = 0.0f64;
        let mut clipped = 0u64;
        let mut i = 0;
        while i < whole {
            let start = i;
            let end = whole.min(i + 8192);
            let (mut a0, mut a1) = (S::zero(), S::zero());
            let (mut m0, mut m1) = (S::zero(), S::zero());
            while i < end {
                // SAFETY: i + 2L ≤ whole ≤ len f32 in `x`.
                let v0 = S::loadu(f.add(i));
                let v1 = S::loadu(f.add(i + S::LANES));
                a0 = S::fmadd(v0, v0, a0);
                a1 = S::fmadd(v1, v1, a1);
                m0 = S::abs_max(m0, v0);
                m1 = S::abs_max(m1, v1);
                i += step;
            }
            let power = S::hsum(S::add(a0, a1));
            total += f64::from(power);
            let top = S::hmax(S::abs_max(m0, m1));
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

    /// The AVX-512 kernel.
    ///
    /// # Safety
    /// The CPU supports AVX-512F; `p` was built for [`super::Isa::Avx512`] and
    /// `x.len() == p.n`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn segment_avx512(p: &mut SimdPsd, x: &[Complex<f32>]) {
        segment::<Avx512>(p, x);
    }

    /// The AVX2 kernel.
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA; `p` was built for [`super::Isa::Avx2`] and
    /// `x.len() == p.n`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn segment_avx2(p: &mut SimdPsd, x: &[Complex<f32>]) {
        segment::<Avx2>(p, x);
    }

    /// [`stats`] with one `vrangeps` per 8 samples for the running maximum.
    ///
    /// # Safety
    /// The CPU supports AVX-512F and AVX-512DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn stats_avx512(x: &[Complex<f32>], clip: f32) -> (f64, u64) {
        stats::<Avx512>(x, clip)
    }

    /// [`stats`] with `vandnps` + `vmaxps` per 4 samples for the running maximum.
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn stats_avx2(x: &[Complex<f32>], clip: f32) -> (f64, u64) {
        stats::<Avx2>(x, clip)
    }

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

    /// AVX-512F (and DQ for `vrangeps`): 16 lanes.
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
            // imm 0b1011: the larger magnitude, sign cleared. vrangeps ignores a quiet
            // NaN and turns a signalling one into a NaN lane.
            _mm512_range_ps::<0b1011>(m, v)
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
    pub(super) fn transpose_for_test(isa: super::Isa, m: &[f32]) -> Vec<f32> {
        assert!(isa.on_this_cpu(), "transpose_for_test needs {isa:?}");
        let mut out = vec![0.0f32; m.len()];
        match isa {
            super::Isa::Avx512 => {
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
            super::Isa::Avx2 => {
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

    /// The kernels this CPU runs (each test runs on every one of them).
    fn isas_here() -> Vec<Isa> {
        let v: Vec<Isa> = Isa::ALL.into_iter().filter(|i| i.on_this_cpu()).collect();
        if v.is_empty() {
            eprintln!("neither AVX-512F/DQ nor AVX2/FMA on this CPU: no kernel runs here");
        }
        v
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn transpose_is_a_transpose() {
        for isa in isas_here() {
            let l = isa.lanes();
            let m: Vec<f32> = (0..l * l).map(|v| v as f32).collect();
            let t = x86::transpose_for_test(isa, &m);
            for i in 0..l {
                for j in 0..l {
                    assert_eq!(t[l * i + j], m[l * j + i], "{isa:?} ({i}, {j})");
                }
            }
        }
    }

    /// The kernel's Σ|X|² per bin equals rustfft's on the same windowed segments.
    #[test]
    fn matches_rustfft_for_every_size() {
        for isa in isas_here() {
            for bits in isa.min_n().trailing_zeros()..=16 {
                let n = 1usize << bits;
                let window = crate::dsp::Window::Hann.build(n);
                let mut k = SimdPsd::with_isa(&window, isa).expect("kernel");
                assert_eq!(k.isa(), isa);
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
                        "{isa:?} n {n} bin {b}: got {g}, want {w}"
                    );
                }
                k.reset();
                let mut after = vec![0.0f64; n];
                k.peek(&mut after);
                assert!(after.iter().all(|&v| v == 0.0));
            }
        }
    }

    #[test]
    fn stats_count_power_and_clipping() {
        for isa in isas_here() {
            let k = SimdPsd::with_isa(&vec![1.0; 256], isa).expect("kernel");
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 100, 5000, 20_011] {
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
                assert_eq!(c, want_c, "{isa:?} len {len}");
                assert!(
                    (p - want_p).abs() <= 1e-5 * want_p.max(1.0),
                    "{isa:?} len {len}: {p} vs {want_p}"
                );
            }
        }
    }

    #[test]
    fn stats_count_clipping_beside_nan() {
        for isa in isas_here() {
            let k = SimdPsd::with_isa(&vec![1.0; 256], isa).expect("kernel");
            let mut x = vec![Complex::new(0.1f32, 0.1); 10_000];
            x[5] = Complex::new(2.0, 0.0);
            x[6] = Complex::new(f32::NAN, 0.0);
            x[9_000] = Complex::new(0.0, f32::INFINITY);
            let (p, c) = k.stats(&x, 1.0);
            assert_eq!(c, 2, "{isa:?}");
            assert!(p.is_nan(), "{isa:?}");
        }
    }

    #[test]
    fn sizes_outside_the_kernel_are_declined() {
        for (isa, bad) in [
            (Isa::Avx512, [16usize, 128, 1000, 3 * 1024]),
            (Isa::Avx2, [16, 32, 1000, 3 * 1024]),
        ] {
            for n in bad {
                assert!(SimdPsd::build(&vec![1.0; n], isa).is_none(), "{isa:?} {n}");
            }
            assert!(SimdPsd::build(&vec![1.0; isa.min_n()], isa).is_some());
        }
    }

    #[test]
    fn slots_cover_every_bin_once() {
        for isa in Isa::ALL {
            for n in [isa.min_n(), 4096] {
                let Some(k) = SimdPsd::build(&vec![1.0; n], isa) else {
                    panic!("{n} is a kernel size");
                };
                let mut seen = vec![false; n];
                for &b in &k.bin_of_slot {
                    assert!(!seen[b as usize], "{isa:?} bin {b} twice");
                    seen[b as usize] = true;
                }
            }
        }
    }

    /// The AVX2 layout (slot 64g + 8r + lane ↔ DIF position 8·(8g + lane) + r), worked
    /// by hand for n = 128 (7 bits): slot 64 + 8·3 + 5 = 93 is position 8·13 + 3 = 107 =
    /// 0b1101011, bin 0b1101011 reversed = 0b1101011 = 107; slot 1 is position 8 =
    /// 0b0001000, bin 0b0001000 = 8; slot 8 is position 1, bin 0b1000000 = 64.
    #[test]
    fn avx2_slot_layout() {
        let Some(k) = SimdPsd::build(&vec![1.0; 128], Isa::Avx2) else {
            panic!("128 is an AVX2 kernel size");
        };
        assert_eq!(k.bin_of_slot[93], 107);
        assert_eq!(k.bin_of_slot[1], 8);
        assert_eq!(k.bin_of_slot[8], 64);
    }
}

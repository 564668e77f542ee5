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
//! 1. an input stage that reads the interleaved input (CF32, or CS16 converted to
//!    float in the registers: the window is stored times 1/32768 for it, so the
//!    product is the converted sample's to the bit), applies the window and splits
//!    re/im on the way in, doing one radix-8, radix-4 or radix-2 stage at the same time
//!    (none for N = L²) so that the stages left pair up; it writes the split arrays at
//!    padded positions (one cache line per 256 points) so that the power-of-two spans of
//!    the stages do not all fall on one L1 set;
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

pub(crate) use super::welch::{SampleKind, WelchSample};

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
    /// Radix-2 with span n/2; twiddles `W_n^j` ([`pass_twiddles`]).
    Radix2(Aligned),
    /// Radix-4 with quarter span n/4; twiddles `W_n^{pj}`, p = 1, 2, 3 ([`pass_twiddles`]).
    Radix4(Aligned),
    /// Radix-8 with eighth span n/8; twiddles `W_n^{pj}`, p = 1 … 7 ([`pass_twiddles`]).
    Radix8(Aligned),
}

/// `twiddles(s, p, m)` for p = 1 … `powers`, one after the other (the final groups'
/// tables: a radix-4 stage's for 3, a radix-8 stage's for 7).
fn stage_twiddles(s: usize, m: usize, powers: usize) -> Vec<f32> {
    (1..=powers).flat_map(|p| twiddles(s, p, m)).collect()
}

/// A pass's twiddles `exp(-2πi·p·j / m)` for j in 0..s and p = 1 … `powers`, in the
/// order the pass reads them: per vector of `lanes` j's, p = 1 … `powers` each as
/// re[lanes] then im[lanes]. One pointer walks the table: the twiddles of point j start
/// at `2·powers·j` (j a multiple of `lanes`).
fn pass_twiddles(s: usize, m: usize, powers: usize, lanes: usize) -> Vec<f32> {
    let per_power: Vec<Vec<f32>> = (1..=powers).map(|p| twiddles(s, p, m)).collect();
    let mut v = Vec::with_capacity(2 * powers * s);
    for j in (0..s).step_by(lanes) {
        for t in &per_power {
            v.extend_from_slice(&t[j..j + lanes]);
            v.extend_from_slice(&t[s + j..s + j + lanes]);
        }
    }
    v
}

/// One radix-4 DIF stage over whole vectors: quarter span `s`; twiddles `w, w², w³`
/// for j in 0..s as [`pass_twiddles`] lays them out.
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

/// Where logical point `i` of the split arrays is stored: one 64-byte line of padding
/// after every 256 points. The stages read and write four points a power-of-two span
/// apart; unpadded, spans of 1 Ki points and more put every stream on the same L1 cache
/// set and the stores alias the loads (a 4 KiB stride), which halved the speed from
/// N = 4096 up. A vector of L ≤ 16 aligned points never straddles a pad.
#[inline(always)]
fn padded(i: usize) -> usize {
    i + ((i >> 8) << 4)
}

/// The split buffer for `n` points: re at 0, im at the returned offset, which puts the
/// im array half the L1 sets (32 lines of 64 bytes) away from re.
fn split_buffer(n: usize) -> (Aligned, usize) {
    let len = padded(n);
    let lines = len / 16;
    let im_at = len + ((32 + 64 - lines % 64) % 64) * 16;
    (Aligned::zeroed(im_at + len), im_at)
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
    /// The window times 1/32768, for CS16 input converted in the input stage.
    window_cs16: Aligned,
    /// The stage that reads the input.
    input: Input,
    /// Radix-4 stages between the input stage and the final groups.
    stages: Vec<Stage>,
    /// The final groups' stages over whole vectors. AVX-512: two radix-4 stages,
    /// `W256^{pj}` (j < 64) then `W64^{pj}` (j < 16), p = 1, 2, 3; AVX2: one radix-8
    /// stage, `W64^{pj}` (j < 8), p = 1 … 7.
    final_tw: Aligned,
    /// The split re/im arrays, at [`padded`] positions: re from 0, im from `im_at`.
    split: Aligned,
    im_at: usize,
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
        // (which do spans L²/2 … 1): the input stage takes one or three of them when
        // their number is odd (so that the rest pair up), two when it is even; radix-4
        // stages the rest. Radix-8 (16 complex vectors live, 7 twiddles) pays only with
        // 32 registers and while the split arrays stay in L1: on AVX-512 up to n = 4096;
        // with AVX2's 16 registers it spills and radix-2 is faster at every size
        // (measured: avx2 N = 8192 360–390 → 430–440 MS/s, N = 32768 315–335 → 350–365).
        let vertical = bits - group.trailing_zeros();
        let radix2 = || {
            (
                Input::Radix2(Aligned::from_slice(&pass_twiddles(n / 2, n, 1, lanes))),
                n / 2,
            )
        };
        let (input, mut span) = match vertical {
            0 => (Input::Copy, n),
            1 => radix2(),
            v if v % 2 == 1 && (isa == Isa::Avx2 || n > 4096) => radix2(),
            v if v % 2 == 1 => (
                Input::Radix8(Aligned::from_slice(&pass_twiddles(n / 8, n, 7, lanes))),
                n / 8,
            ),
            _ => (
                Input::Radix4(Aligned::from_slice(&pass_twiddles(n / 4, n, 3, lanes))),
                n / 4,
            ),
        };
        let mut stages = Vec::new();
        while span > group {
            let s = span / 4;
            stages.push(Stage {
                s,
                tw: Aligned::from_slice(&pass_twiddles(s, span, 3, lanes)),
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
        let (split, im_at) = split_buffer(n);
        Some(Self {
            isa,
            n,
            window: Aligned::from_slice(window),
            window_cs16: Aligned::from_slice(
                &window.iter().map(|w| w / 32768.0).collect::<Vec<f32>>(),
            ),
            input,
            stages,
            final_tw: Aligned::from_slice(&final_tw),
            split,
            im_at,
            acc: Aligned::zeroed(n),
            bin_of_slot,
        })
    }

    /// The instruction set this kernel runs on.
    pub(crate) fn isa(&self) -> Isa {
        self.isa
    }

    /// Window, transform and accumulate |X|² of one segment of exactly `n` samples
    /// (CF32, or CS16 converted to float in the input stage: the same PSD to the bit
    /// as the converted block's).
    ///
    /// # Panics
    /// On a segment of another length: `Welch` slices every segment to `n`, and a
    /// skipped segment would silently bias the average.
    pub(crate) fn segment<E: WelchSample>(&mut self, x: &[E]) {
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

    /// [`Self::segment`] for the `count` segments that start every `hop` samples of `x`
    /// from its first: one call into the kernel for all of them (for small FFT sizes
    /// the call and its set-up cost as much as a few per cent of a segment).
    ///
    /// # Panics
    /// When `x` is shorter than the last segment's end.
    pub(crate) fn segments<E: WelchSample>(&mut self, x: &[E], hop: usize, count: usize) {
        if count == 0 {
            return;
        }
        let end = (count - 1) * hop + self.n;
        assert!(hop > 0 && x.len() >= end, "segments past the block");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `segment`; every segment `k·hop .. k·hop + n` lies inside `x`
        // (checked above).
        unsafe {
            match self.isa {
                Isa::Avx512 => x86::segments_avx512(self, &x[..end], hop, count),
                Isa::Avx2 => x86::segments_avx2(self, &x[..end], hop, count),
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
    pub(crate) fn stats<E: WelchSample>(&self, x: &[E], clip: f32) -> (f64, u64) {
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
mod x86;

#[cfg(test)]
mod tests;

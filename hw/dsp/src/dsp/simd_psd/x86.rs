//! The x86_64 kernels: the ISA primitives ([`Simd`]), the stage logic written once
//! over them, and the `#[target_feature]` entry points. The two ISAs (AVX-512, AVX2)
//! implement [`Simd`] in `x86/isa.rs`.
mod isa;

use super::{padded, Input, SampleKind, SimdPsd, WelchSample};
#[cfg(test)]
pub(super) use isa::transpose_for_test;
use isa::{Avx2, Avx512};
use std::arch::x86_64::*;

/// Full scale of a CS16 sample: it is read as `v / 32768`, exactly (every int16 is an
/// f32 and the scale a power of two), the float the capture's conversion gives.
const CS16_SCALE: f32 = 1.0 / 32768.0;

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
    /// [`Simd::load_windowed`] of interleaved CS16 at `src + 2i` (int16 values), each
    /// converted to f32 on the way in; `win` is the window already times
    /// [`CS16_SCALE`] (exactly: a power of two), so the product is the float path's
    /// to the bit. `src` has `2(i + L)` readable i16.
    unsafe fn load_windowed_cs16(src: *const i16, win: *const f32, i: usize) -> Cx<Self>;
    /// L int16 at `p` (unaligned) as f32 times [`CS16_SCALE`].
    unsafe fn loadu_cs16(p: *const i16) -> Self::V;
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

/// Where a stage reads its points from: a cursor at point `i`, then the L points `j`
/// further on. Within a run of points that crosses no pad of the split arrays (see
/// [`run_len`]) the cursor is a plain pointer, so a pass's inner loop computes no
/// [`padded`] position.
trait Source<S: Simd> {
    /// A position in the source.
    type At: Copy;
    /// The cursor at point `i`.
    ///
    /// # Safety
    /// `i` is within the source's `n` points.
    unsafe fn cursor(&self, i: usize) -> Self::At;
    /// The L points `j` after `at` (`j % L == 0`).
    ///
    /// # Safety
    /// The L points are within the source and within the run `at` was made for.
    unsafe fn at(at: Self::At, j: usize) -> Cx<S>;
}

/// The interleaved input (CF32 or CS16) through the window.
struct Windowed<E> {
    src: *const E,
    win: *const f32,
}

/// L samples of `E` at `src + i` times the window at `win + i`, split: CF32 as it
/// is, CS16 converted in the registers (`win` then holds the window times
/// [`CS16_SCALE`]).
///
/// # Safety
/// As [`Simd::load_windowed`], for `i + L` samples of `E` at `src`.
#[inline(always)]
unsafe fn load_windowed<S: Simd, E: WelchSample>(
    src: *const E,
    win: *const f32,
    i: usize,
) -> Cx<S> {
    match E::KIND {
        SampleKind::Cf32 => S::load_windowed(src.cast::<f32>(), win, i),
        SampleKind::Cs16 => S::load_windowed_cs16(src.cast::<i16>(), win, i),
    }
}

/// L values (I or Q) from the flat value `k` of `src` as f32 (CS16 scaled).
///
/// # Safety
/// `src` holds `k + L` values (`(k + L) / 2` samples of `E`).
#[inline(always)]
unsafe fn load_flat<S: Simd, E: WelchSample>(src: *const E, k: usize) -> S::V {
    match E::KIND {
        SampleKind::Cf32 => S::loadu(src.cast::<f32>().add(k)),
        SampleKind::Cs16 => S::loadu_cs16(src.cast::<i16>().add(k)),
    }
}

impl<S: Simd, E: WelchSample> Source<S> for Windowed<E> {
    type At = (*const E, *const f32);
    #[inline(always)]
    unsafe fn cursor(&self, i: usize) -> Self::At {
        (self.src.add(i), self.win.add(i))
    }
    #[inline(always)]
    unsafe fn at(at: Self::At, j: usize) -> Cx<S> {
        load_windowed::<S, E>(at.0, at.1, j)
    }
}

/// The split arrays themselves (point `i` at [`padded`]`(i)`).
struct Split {
    re: *mut f32,
    im: *mut f32,
}

impl Split {
    /// The re and im pointers of point `i`: the next points of its run follow it.
    ///
    /// # Safety
    /// `i` is within the split arrays' `n` points.
    #[inline(always)]
    unsafe fn cursor(&self, i: usize) -> (*mut f32, *mut f32) {
        (self.re.add(padded(i)), self.im.add(padded(i)))
    }
}

impl<S: Simd> Source<S> for Split {
    type At = (*mut f32, *mut f32);
    #[inline(always)]
    unsafe fn cursor(&self, i: usize) -> Self::At {
        Split::cursor(self, i)
    }
    #[inline(always)]
    unsafe fn at(at: Self::At, j: usize) -> Cx<S> {
        load(at.0, at.1, j)
    }
}

/// Store `v` at the L points `j` after the split-array cursor `at`.
///
/// # Safety
/// As for [`store`], within the run `at` was made for.
#[inline(always)]
unsafe fn put<S: Simd>(at: (*mut f32, *mut f32), j: usize, v: Cx<S>) {
    store(at.0, at.1, j, v);
}

/// Points per run of a pass whose streams are `s` apart: no run crosses a pad of the
/// split arrays (one per 256 points), as every stream starts a run at a multiple of
/// `s.min(256)`.
#[inline(always)]
fn run_len(s: usize) -> usize {
    s.min(256)
}

/// [`run_len`], for the tests.
#[cfg(test)]
pub(super) fn run_len_for_test(s: usize) -> usize {
    run_len(s)
}

/// The `k`-th of a pass's twiddles at the cursor `t` ([`super::pass_twiddles`]).
///
/// # Safety
/// `t` points at the twiddles of one vector with more than `k` powers.
#[inline(always)]
unsafe fn pass_twiddle<S: Simd>(t: *const f32, k: usize) -> Cx<S> {
    Cx {
        re: S::load(t.add(2 * k * S::LANES)),
        im: S::load(t.add((2 * k + 1) * S::LANES)),
    }
}

/// The whole kernel for one segment.
///
/// # Safety
/// Inlined into an entry point with `S`'s features, on a CPU that has them;
/// `p` was built for `S` and `x.len() == p.n`.
#[inline(always)]
unsafe fn segment<S: Simd, E: WelchSample>(p: &mut SimdPsd, x: &[E]) {
    let n = p.n;
    let re = p.split.as_mut_slice().as_mut_ptr();
    let im = re.add(p.im_at);
    let win = match E::KIND {
        SampleKind::Cf32 => &p.window,
        SampleKind::Cs16 => &p.window_cs16,
    };
    let input = Windowed {
        src: x.as_ptr(),
        win: win.as_slice().as_ptr(),
    };
    let split = Split { re, im };
    match &p.input {
        Input::Copy => input_copy::<S, E>(&input, &split, n),
        Input::Radix2(tw) => input_radix2::<S, E>(&input, &split, tw.as_slice().as_ptr(), n),
        Input::Radix4(tw) => {
            radix4_pass::<S, _>(&input, &split, n, n / 4, tw.as_slice().as_ptr());
        }
        Input::Radix8(tw) => input_radix8::<S, E>(&input, &split, tw.as_slice().as_ptr(), n),
    }
    for st in &p.stages {
        radix4_pass::<S, _>(&split, &split, n, st.s, st.tw.as_slice().as_ptr());
    }
    let acc = p.acc.as_mut_slice().as_mut_ptr();
    let tw = p.final_tw.as_slice().as_ptr();
    let group = S::LANES * S::LANES;
    let mut g = 0;
    while g < n {
        S::final_group(re.add(padded(g)), im.add(padded(g)), acc.add(g), tw);
        g += group;
    }
}

/// The input through the window into the split arrays, no butterflies. (Vector by
/// vector: with one stream, runs measured slower here.)
///
/// # Safety
/// `input` and `out` hold `n` points.
#[inline(always)]
unsafe fn input_copy<S: Simd, E: WelchSample>(input: &Windowed<E>, out: &Split, n: usize) {
    let mut i = 0;
    while i < n {
        let v: Cx<S> = load_windowed::<S, E>(input.src, input.win, i);
        put(out.cursor(i), 0, v);
        i += S::LANES;
    }
}

/// A radix-2 stage (span n/2) reading the interleaved input through the window.
///
/// # Safety
/// `input` and `out` hold `n` points, `tw` `n` aligned f32 ([`super::pass_twiddles`]).
#[inline(always)]
unsafe fn input_radix2<S: Simd, E: WelchSample>(
    input: &Windowed<E>,
    out: &Split,
    tw: *const f32,
    n: usize,
) {
    let s = n / 2;
    let run = run_len(s);
    let mut j0 = 0;
    while j0 < s {
        let (a, b) = (
            Source::<S>::cursor(input, j0),
            Source::<S>::cursor(input, j0 + s),
        );
        let (da, db) = (out.cursor(j0), out.cursor(j0 + s));
        let mut t = tw.add(2 * j0);
        let mut j = 0;
        while j < run {
            let x: Cx<S> = Windowed::<E>::at(a, j);
            let y = Windowed::<E>::at(b, j);
            put(da, j, add(x, y));
            put(db, j, mul(sub(x, y), pass_twiddle(t, 0)));
            t = t.add(2 * S::LANES);
            j += S::LANES;
        }
        j0 += run;
    }
}

/// A radix-8 stage (eighth span n/8) reading the interleaved input through the
/// window.
///
/// # Safety
/// `input` and `out` hold `n` points, `tw` `14·n/8` aligned f32
/// ([`super::pass_twiddles`]).
#[inline(always)]
unsafe fn input_radix8<S: Simd, E: WelchSample>(
    input: &Windowed<E>,
    out: &Split,
    tw: *const f32,
    n: usize,
) {
    let s = n / 8;
    let run = run_len(s);
    let mut j0 = 0;
    while j0 < s {
        let mut a = [Source::<S>::cursor(input, j0); 8];
        let mut d = [out.cursor(j0); 8];
        for k in 1..8 {
            a[k] = Source::<S>::cursor(input, j0 + k * s);
            d[k] = out.cursor(j0 + k * s);
        }
        let mut t = tw.add(14 * j0);
        let mut j = 0;
        while j < run {
            let mut x = [Cx::<S>::zero(); 8];
            for (xk, ak) in x.iter_mut().zip(a) {
                *xk = Windowed::<E>::at(ak, j);
            }
            let mut w = [Cx::<S>::zero(); 7];
            for (k, wk) in w.iter_mut().enumerate() {
                *wk = pass_twiddle(t, k);
            }
            for (v, dk) in radix8(x, Some(w)).into_iter().zip(d) {
                put(dk, j, v);
            }
            t = t.add(14 * S::LANES);
            j += S::LANES;
        }
        j0 += run;
    }
}

/// Radix-4 stages with quarter span `s` over groups of `4s` in `n`: `from` gives
/// point `i` (the windowed input, or the split arrays themselves), results go to `out`
/// at the same positions.
///
/// # Safety
/// `from` and `out` hold `n` points, `tw` `6s` aligned f32 ([`super::pass_twiddles`]);
/// `s` ≥ L and a multiple of L; `n` a multiple of `4s`.
#[inline(always)]
unsafe fn radix4_pass<S: Simd, F: Source<S>>(
    from: &F,
    out: &Split,
    n: usize,
    s: usize,
    tw: *const f32,
) {
    let run = run_len(s);
    let mut base = 0;
    while base < n {
        let mut j0 = 0;
        while j0 < s {
            let at = base + j0;
            let a = [
                from.cursor(at),
                from.cursor(at + s),
                from.cursor(at + 2 * s),
                from.cursor(at + 3 * s),
            ];
            let d = [
                out.cursor(at),
                out.cursor(at + s),
                out.cursor(at + 2 * s),
                out.cursor(at + 3 * s),
            ];
            let mut t = tw.add(6 * j0);
            let mut j = 0;
            while j < run {
                let x = [
                    F::at(a[0], j),
                    F::at(a[1], j),
                    F::at(a[2], j),
                    F::at(a[3], j),
                ];
                let w = [pass_twiddle(t, 0), pass_twiddle(t, 1), pass_twiddle(t, 2)];
                for (v, dk) in radix4(x, Some(w)).into_iter().zip(d) {
                    put(dk, j, v);
                }
                t = t.add(6 * S::LANES);
                j += S::LANES;
            }
            j0 += run;
        }
        base += 4 * s;
    }
}

/// Σ|x|² and the exact clip count, see [`SimdPsd::stats`]. The count is worked out
/// sample by sample only for a run of 4096 samples whose largest |re| or |im| reaches
/// `clip` or whose power is NaN (rare); else [`Simd::abs_max`] keeps a running
/// maximum. Whatever that maximum does with a NaN, `power` is NaN then, so the count
/// is exact too. Four vectors per step, each with its own sum and maximum: with one
/// chain of each the loop waited on the latency of the previous step's add.
///
/// # Safety
/// Inlined into an entry point with `S`'s features, on a CPU that has them.
#[inline(always)]
unsafe fn stats<S: Simd, E: WelchSample>(x: &[E], clip: f32) -> (f64, u64) {
    let f = x.as_ptr();
    let len = 2 * x.len();
    let step = 4 * S::LANES;
    let whole = len - len % step;
    let mut total = 0.0f64;
    let mut clipped = 0u64;
    let mut i = 0;
    while i < whole {
        let start = i;
        let end = whole.min(i + 8192);
        let mut a = [S::zero(); 4];
        let mut m = [S::zero(); 4];
        while i < end {
            for k in 0..4 {
                // SAFETY: i + 4L ≤ whole ≤ len f32 in `x`.
                let v = load_flat::<S, E>(f, i + k * S::LANES);
                a[k] = S::fmadd(v, v, a[k]);
                m[k] = S::abs_max(m[k], v);
            }
            i += step;
        }
        let power = S::hsum(S::add(S::add(a[0], a[1]), S::add(a[2], a[3])));
        total += f64::from(power);
        let top = S::hmax(S::abs_max(S::abs_max(m[0], m[1]), S::abs_max(m[2], m[3])));
        if power.is_nan() || top.is_nan() || top >= clip {
            clipped += x[start / 2..end / 2]
                .iter()
                .map(|v| v.to_cf32())
                .filter(|v| v.re.abs() >= clip || v.im.abs() >= clip)
                .count() as u64;
        }
    }
    for v in x[whole / 2..].iter().map(|v| v.to_cf32()) {
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
pub(super) unsafe fn segment_avx512<E: WelchSample>(p: &mut SimdPsd, x: &[E]) {
    segment::<Avx512, E>(p, x);
}

/// The AVX-512 kernel over `count` segments `hop` apart.
///
/// # Safety
/// As [`segment_avx512`], with `x.len() ≥ (count − 1)·hop + p.n`.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn segments_avx512<E: WelchSample>(
    p: &mut SimdPsd,
    x: &[E],
    hop: usize,
    count: usize,
) {
    for k in 0..count {
        segment::<Avx512, E>(p, x.get_unchecked(k * hop..k * hop + p.n));
    }
}

/// The AVX2 kernel over `count` segments `hop` apart.
///
/// # Safety
/// As [`segment_avx2`], with `x.len() ≥ (count − 1)·hop + p.n`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn segments_avx2<E: WelchSample>(
    p: &mut SimdPsd,
    x: &[E],
    hop: usize,
    count: usize,
) {
    for k in 0..count {
        segment::<Avx2, E>(p, x.get_unchecked(k * hop..k * hop + p.n));
    }
}

/// The AVX2 kernel.
///
/// # Safety
/// The CPU supports AVX2 and FMA; `p` was built for [`super::Isa::Avx2`] and
/// `x.len() == p.n`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn segment_avx2<E: WelchSample>(p: &mut SimdPsd, x: &[E]) {
    segment::<Avx2, E>(p, x);
}

/// [`stats`] with `vandps` + `vmaxps` per 8 samples for the running maximum.
///
/// # Safety
/// The CPU supports AVX-512F and AVX-512DQ.
#[target_feature(enable = "avx512f,avx512dq")]
pub(super) unsafe fn stats_avx512<E: WelchSample>(x: &[E], clip: f32) -> (f64, u64) {
    stats::<Avx512, E>(x, clip)
}

/// [`stats`] with `vandnps` + `vmaxps` per 4 samples for the running maximum.
///
/// # Safety
/// The CPU supports AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn stats_avx2<E: WelchSample>(x: &[E], clip: f32) -> (f64, u64) {
    stats::<Avx2, E>(x, clip)
}

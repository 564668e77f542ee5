//! The CLKIN estimator's hot loop, Σ x·t₁ and Σ x·t₂ over one stretch of a block, on
//! tables laid out for it: each table `t` is kept as two f32 arrays, `re` = [t₀.re,
//! t₀.re, t₁.re, t₁.re, …] and `im` = [t₀.im, t₀.im, …], so the interleaved input is
//! multiplied lane by lane with no shuffle. Over the lanes, with x = a + jb:
//! `acc_re` holds a·t.re (even lanes) and b·t.re (odd lanes), `acc_im` holds a·t.im
//! and b·t.im, and Σ x·t = (Σeven acc_re − Σodd acc_im) + j(Σeven acc_im + Σodd acc_re).
//!
//! Two kernels of that one formula: AVX2 + FMA (chosen at run time, as the Welch
//! kernels are) and a portable one in 16 independent lanes that compilers vectorize.
//! On a CPU with AVX-512 a third kernel reads the tables as plain interleaved complex
//! values instead (`inter`, half the bytes per sample: the tables of a 200 MS/s capture
//! are hundreds of KiB, as large as the L2 cache): x·t and x̃·t, x̃ = x with re and im
//! swapped, lane by lane, give Σx·t = (Σeven − Σodd of x·t) + j Σ x̃·t.
//! The sums are those of [`super::mac2`] up to f32 rounding (tested against it).
use num_complex::Complex;

/// One mixing table in the duplicated layout described above.
pub(crate) struct DupTable {
    re: Vec<f32>,
    im: Vec<f32>,
    /// [t₀.re, t₀.im, t₁.re, t₁.im, …], for the AVX-512 kernel.
    inter: Vec<f32>,
}

impl DupTable {
    /// The layout of `t`.
    pub(crate) fn new(t: &[Complex<f32>]) -> Self {
        Self {
            re: t.iter().flat_map(|c| [c.re, c.re]).collect(),
            im: t.iter().flat_map(|c| [c.im, c.im]).collect(),
            inter: t.iter().flat_map(|c| [c.re, c.im]).collect(),
        }
    }

    /// Entries (complex).
    pub(crate) fn len(&self) -> usize {
        self.re.len() / 2
    }
}

/// Σ x·t₁[from..] and Σ x·t₂[from..] over `x` (`from + x.len()` ≤ the tables' length).
pub(crate) fn mac2_dup(
    x: &[Complex<f32>],
    t1: &DupTable,
    t2: &DupTable,
    from: usize,
) -> (Complex<f32>, Complex<f32>) {
    let xs = as_floats(x);
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        let f = 2 * from..2 * (from + x.len());
        // SAFETY: the CPU has AVX-512F (checked above); both tables have 2n f32.
        return unsafe { x86::mac2_inter_avx512(xs, &t1.inter[f.clone()], &t2.inter[f]) };
    }
    let t = lanes(t1, t2, from, x.len());
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked above); every slice has 2n f32.
        return unsafe { x86::mac2_dup_avx2(xs, t) };
    }
    portable(xs, t)
}

/// [`mac2_dup`] over CS16 samples, read as they are (each int16 is the float v/32768),
/// where this CPU has a kernel for it (AVX-512), the same sums to the bit as [`mac2_dup`]
/// over the converted samples; `None` (nothing summed) where it has not.
pub(crate) fn mac2_dup_cs16(
    x: &[Complex<i16>],
    t1: &DupTable,
    t2: &DupTable,
    from: usize,
) -> Option<(Complex<f32>, Complex<f32>)> {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        let xs: &[i16] = bytemuck::cast_slice(x);
        let f = 2 * from..2 * (from + x.len());
        // SAFETY: the CPU has AVX-512F (checked above); both tables have 2n f32.
        return Some(unsafe {
            x86::mac2_inter_cs16_avx512(xs, &t1.inter[f.clone()], &t2.inter[f])
        });
    }
    let _ = (x, t1, t2, from);
    None
}

/// Whether [`mac2_dup_cs16`] has a kernel on this CPU.
pub(crate) fn reads_cs16() -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        return true;
    }
    false
}

/// The four lane tables of [`mac2_dup`]'s kernels, over the stretch summed:
/// t₁.re, t₁.im, t₂.re, t₂.im.
type Lanes<'a> = [&'a [f32]; 4];

/// The lane tables of `t1` and `t2` for `n` samples from entry `from` on.
fn lanes<'a>(t1: &'a DupTable, t2: &'a DupTable, from: usize, n: usize) -> Lanes<'a> {
    let f = 2 * from..2 * (from + n);
    [
        &t1.re[f.clone()],
        &t1.im[f.clone()],
        &t2.re[f.clone()],
        &t2.im[f],
    ]
}

/// Whether this CPU has AVX2 and FMA (asked once).
#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    })
}

/// Whether this CPU has AVX-512F (asked once).
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
}

/// Σ x·t over interleaved `x` and `t` (2n f32 each), from the lane sums of the
/// AVX-512 kernel: `p` = x·t lane by lane, `q` = x̃·t (x's re and im swapped), then the
/// floats from `from` on one sample at a time.
#[cfg(target_arch = "x86_64")]
fn combine_inter(p: &[f32], q: &[f32], x: &[f32], t: &[f32], from: usize) -> Complex<f32> {
    let even = p.iter().step_by(2).sum::<f32>();
    let odd = p.iter().skip(1).step_by(2).sum::<f32>();
    let mut s = Complex::new(even - odd, q.iter().sum::<f32>());
    for (xs, ts) in x[from..].chunks_exact(2).zip(t[from..].chunks_exact(2)) {
        s += Complex::new(xs[0], xs[1]) * Complex::new(ts[0], ts[1]);
    }
    s
}

/// The interleaved floats of complex samples.
fn as_floats(x: &[Complex<f32>]) -> &[f32] {
    // SAFETY: `Complex<f32>` is `#[repr(C)]` { re: f32, im: f32 }: 2·len f32, same
    // alignment, borrowed for the same lifetime.
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<f32>(), 2 * x.len()) }
}

/// Σ x·t from the lane sums: `re` = x·t.re lane by lane, `im` = x·t.im.
fn combine(re: &[f32], im: &[f32]) -> Complex<f32> {
    let even = |v: &[f32]| v.iter().step_by(2).sum::<f32>();
    let odd = |v: &[f32]| v.iter().skip(1).step_by(2).sum::<f32>();
    Complex::new(even(re) - odd(im), even(im) + odd(re))
}

/// The portable kernel: 16 lanes per accumulator, then the tail.
fn portable(x: &[f32], t: Lanes<'_>) -> (Complex<f32>, Complex<f32>) {
    const L: usize = 16;
    let mut acc = [[0f32; L]; 4];
    let body = x.len() / L * L;
    for k in (0..body).step_by(L) {
        let xs = &x[k..k + L];
        for (a, t) in acc.iter_mut().zip(t) {
            let t = &t[k..k + L];
            for j in 0..L {
                a[j] += xs[j] * t[j];
            }
        }
    }
    tail(x, t, body, &mut acc);
    (combine(&acc[0], &acc[1]), combine(&acc[2], &acc[3]))
}

/// The samples from `from` on, one float at a time, into the accumulators of the
/// four tables: lane k % 2 keeps even (real part of x) and odd (imaginary) apart.
fn tail<const L: usize>(x: &[f32], t: Lanes<'_>, from: usize, acc: &mut [[f32; L]; 4]) {
    for k in from..x.len() {
        let j = k % 2;
        for (a, t) in acc.iter_mut().zip(t) {
            a[j] += x[k] * t[k];
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{combine, combine_inter, tail, Lanes};
    use num_complex::Complex;
    use std::arch::x86_64::*;

    /// The AVX2 + FMA kernel: 16 floats (8 samples) per step in two independent
    /// accumulator sets, then the tail in scalar.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; every table of `t` is at least as long as `x`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn mac2_dup_avx2(x: &[f32], t: Lanes<'_>) -> (Complex<f32>, Complex<f32>) {
        let n = x.len();
        let [r1, i1, r2, i2] = t;
        assert!(r1.len() >= n && i1.len() >= n && r2.len() >= n && i2.len() >= n);
        let (px, pr1, pi1, pr2, pi2) = (
            x.as_ptr(),
            r1.as_ptr(),
            i1.as_ptr(),
            r2.as_ptr(),
            i2.as_ptr(),
        );
        let z = _mm256_setzero_ps();
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let (mut b0, mut b1, mut b2, mut b3) = (z, z, z, z);
        let mut k = 0;
        // SAFETY (every load): k + 16 ≤ n and each slice has ≥ n f32.
        while k + 16 <= n {
            let xa = _mm256_loadu_ps(px.add(k));
            let xb = _mm256_loadu_ps(px.add(k + 8));
            a0 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(pr1.add(k)), a0);
            a1 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(pi1.add(k)), a1);
            a2 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(pr2.add(k)), a2);
            a3 = _mm256_fmadd_ps(xa, _mm256_loadu_ps(pi2.add(k)), a3);
            b0 = _mm256_fmadd_ps(xb, _mm256_loadu_ps(pr1.add(k + 8)), b0);
            b1 = _mm256_fmadd_ps(xb, _mm256_loadu_ps(pi1.add(k + 8)), b1);
            b2 = _mm256_fmadd_ps(xb, _mm256_loadu_ps(pr2.add(k + 8)), b2);
            b3 = _mm256_fmadd_ps(xb, _mm256_loadu_ps(pi2.add(k + 8)), b3);
            k += 16;
        }
        let mut acc = [[0f32; 8]; 4];
        for (out, (a, b)) in acc.iter_mut().zip([(a0, b0), (a1, b1), (a2, b2), (a3, b3)]) {
            _mm256_storeu_ps(out.as_mut_ptr(), _mm256_add_ps(a, b));
        }
        tail(x, t, k, &mut acc);
        (combine(&acc[0], &acc[1]), combine(&acc[2], &acc[3]))
    }

    /// The AVX-512 kernel's loop: 32 floats (16 samples) per step in two independent
    /// accumulator sets, each x vector also with re and im swapped (one in-lane
    /// shuffle); `|i| load` gives the 16 floats of x from float `k` on. Leaves the lane
    /// sums of x·t₁, x̃·t₁, x·t₂, x̃·t₂ and the first float not summed.
    macro_rules! inter_loop {
        ($n:expr, $t1:expr, $t2:expr, |$i:ident| $load:expr) => {{
            let n: usize = $n;
            let (p1, p2) = ($t1.as_ptr(), $t2.as_ptr());
            let z = _mm512_setzero_ps();
            let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
            let (mut b0, mut b1, mut b2, mut b3) = (z, z, z, z);
            let mut k = 0;
            // SAFETY (every load): k + 32 ≤ n and each slice has ≥ n values.
            while k + 32 <= n {
                let xa: __m512 = {
                    let $i = k;
                    $load
                };
                let xb: __m512 = {
                    let $i = k + 16;
                    $load
                };
                // [re, im] → [im, re] in every pair.
                let sa = _mm512_permute_ps::<0b10_11_00_01>(xa);
                let sb = _mm512_permute_ps::<0b10_11_00_01>(xb);
                let (ta, ua) = (_mm512_loadu_ps(p1.add(k)), _mm512_loadu_ps(p2.add(k)));
                let (tb, ub) = (
                    _mm512_loadu_ps(p1.add(k + 16)),
                    _mm512_loadu_ps(p2.add(k + 16)),
                );
                a0 = _mm512_fmadd_ps(xa, ta, a0);
                a1 = _mm512_fmadd_ps(sa, ta, a1);
                a2 = _mm512_fmadd_ps(xa, ua, a2);
                a3 = _mm512_fmadd_ps(sa, ua, a3);
                b0 = _mm512_fmadd_ps(xb, tb, b0);
                b1 = _mm512_fmadd_ps(sb, tb, b1);
                b2 = _mm512_fmadd_ps(xb, ub, b2);
                b3 = _mm512_fmadd_ps(sb, ub, b3);
                k += 32;
            }
            let mut acc = [[0f32; 16]; 4];
            for (out, (a, b)) in acc.iter_mut().zip([(a0, b0), (a1, b1), (a2, b2), (a3, b3)]) {
                _mm512_storeu_ps(out.as_mut_ptr(), _mm512_add_ps(a, b));
            }
            (acc, k)
        }};
    }

    /// The AVX-512 kernel on interleaved tables and CF32 input, then the tail in scalar.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` has an even length and each table is at least as long.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn mac2_inter_avx512(
        x: &[f32],
        t1: &[f32],
        t2: &[f32],
    ) -> (Complex<f32>, Complex<f32>) {
        let n = x.len();
        assert!(n.is_multiple_of(2) && t1.len() >= n && t2.len() >= n);
        let px = x.as_ptr();
        let (acc, k) = inter_loop!(n, t1, t2, |k| _mm512_loadu_ps(px.add(k)));
        (
            combine_inter(&acc[0], &acc[1], x, t1, k),
            combine_inter(&acc[2], &acc[3], x, t2, k),
        )
    }

    /// The same on CS16 input: each int16 becomes its float value (exact) in the
    /// registers, and the sums are scaled by 1/32768 at the end — a power of two, so
    /// they are those of [`mac2_inter_avx512`] on the converted CF32 to the bit.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `x` has an even length and each table is at least as long.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn mac2_inter_cs16_avx512(
        x: &[i16],
        t1: &[f32],
        t2: &[f32],
    ) -> (Complex<f32>, Complex<f32>) {
        let n = x.len();
        assert!(n.is_multiple_of(2) && t1.len() >= n && t2.len() >= n);
        let px = x.as_ptr();
        let (acc, k) = inter_loop!(n, t1, t2, |k| _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(
            _mm256_loadu_si256(px.add(k).cast::<__m256i>())
        )));
        // Fewer than 32 values are left: their float values, exactly.
        let mut rest = [0f32; 32];
        for (r, v) in rest.iter_mut().zip(&x[k..]) {
            *r = f32::from(*v);
        }
        let rest = &rest[..n - k];
        let scale = 1.0 / 32768.0;
        (
            combine_inter(&acc[0], &acc[1], rest, &t1[k..n], 0) * scale,
            combine_inter(&acc[2], &acc[3], rest, &t2[k..n], 0) * scale,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsp::clkin::mac2;

    fn close(a: Complex<f32>, b: Complex<f32>, scale: f32) -> bool {
        (a - b).norm() <= 1e-5 * scale
    }

    /// Every kernel this CPU runs (AVX-512 on interleaved tables, AVX2 and the portable
    /// one on duplicated tables) gives the two-lane multiply-accumulate's sums at every length and offset,
    /// tails included.
    #[test]
    fn duplicated_table_sums_match_the_two_lane_sums() {
        let m = 1000;
        let t1: Vec<Complex<f32>> = (0..m)
            .map(|i| Complex::from_polar(1.0 + i as f32 * 1e-3, i as f32 * 0.37))
            .collect();
        let t2: Vec<Complex<f32>> = (0..m)
            .map(|i| Complex::from_polar(2.0 - i as f32 * 1e-3, -(i as f32) * 0.11))
            .collect();
        let x: Vec<Complex<f32>> = (0..m)
            .map(|i| Complex::new((i as f32 * 0.7).sin(), (i as f32 * 1.3).cos()))
            .collect();
        let (d1, d2) = (DupTable::new(&t1), DupTable::new(&t2));
        assert_eq!(d1.len(), m);
        for (from, n) in [
            (0, 0),
            (0, 1),
            (3, 7),
            (5, 16),
            (17, 333),
            (0, 1000),
            (999, 1),
        ] {
            let xs = &x[..n];
            let (w1, w2) = mac2(xs, &t1[from..from + n], &t2[from..from + n]);
            let scale = n.max(1) as f32;
            let (g1, g2) = mac2_dup(xs, &d1, &d2, from);
            assert!(
                close(g1, w1, scale) && close(g2, w2, scale),
                "{from} {n}: {g1} {w1} {g2} {w2}"
            );
            let (p1, p2) = portable(as_floats(xs), lanes(&d1, &d2, from, n));
            assert!(
                close(p1, w1, scale) && close(p2, w2, scale),
                "{from} {n}: {p1} {w1}"
            );
            #[cfg(target_arch = "x86_64")]
            if avx2_fma() {
                // SAFETY: the CPU has AVX2 and FMA; the lane tables have 2n f32.
                let (a1, a2) =
                    unsafe { x86::mac2_dup_avx2(as_floats(xs), lanes(&d1, &d2, from, n)) };
                assert!(
                    close(a1, w1, scale) && close(a2, w2, scale),
                    "avx2 {from} {n}: {a1} {w1}"
                );
            }
        }
    }
}

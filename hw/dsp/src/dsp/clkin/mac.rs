//! The CLKIN estimator's hot loop, Σ x·t₁ and Σ x·t₂ over one stretch of a block, on
//! tables laid out for it: each table `t` is kept as two f32 arrays, `re` = [t₀.re,
//! t₀.re, t₁.re, t₁.re, …] and `im` = [t₀.im, t₀.im, …], so the interleaved input is
//! multiplied lane by lane with no shuffle. Over the lanes, with x = a + jb:
//! `acc_re` holds a·t.re (even lanes) and b·t.re (odd lanes), `acc_im` holds a·t.im
//! and b·t.im, and Σ x·t = (Σeven acc_re − Σodd acc_im) + j(Σeven acc_im + Σodd acc_re).
//!
//! Two kernels of that one formula: AVX2 + FMA (chosen at run time, as the Welch
//! kernels are) and a portable one in 16 independent lanes that compilers vectorize.
//! The sums are those of [`super::mac2`] up to f32 rounding (tested against it).
use num_complex::Complex;

/// One mixing table in the duplicated layout described above.
pub(crate) struct DupTable {
    re: Vec<f32>,
    im: Vec<f32>,
}

impl DupTable {
    /// The layout of `t`.
    pub(crate) fn new(t: &[Complex<f32>]) -> Self {
        Self {
            re: t.iter().flat_map(|c| [c.re, c.re]).collect(),
            im: t.iter().flat_map(|c| [c.im, c.im]).collect(),
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
    let t = lanes(t1, t2, from, x.len());
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked above); every slice has 2n f32.
        return unsafe { x86::mac2_dup_avx2(xs, t) };
    }
    portable(xs, t)
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
    use super::{combine, tail, Lanes};
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsp::clkin::mac2;

    fn close(a: Complex<f32>, b: Complex<f32>, scale: f32) -> bool {
        (a - b).norm() <= 1e-5 * scale
    }

    /// The duplicated-table kernels (AVX2 where the CPU has it, and the portable one)
    /// give the two-lane multiply-accumulate's sums at every length and offset,
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
        }
    }
}

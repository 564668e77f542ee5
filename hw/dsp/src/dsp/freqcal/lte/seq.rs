//! The LTE synchronisation sequences (3GPP TS 36.211 §6.11) and where they sit on the
//! 128-point grid of the six central resource blocks at 1.92 MS/s.
use num_complex::Complex;
use std::f64::consts::PI;

/// Subcarriers of a PSS or SSS.
pub(crate) const SEQ_LEN: usize = 62;
/// FFT size at 1.92 MS/s (15 kHz subcarriers).
pub(crate) const NFFT: usize = 128;
/// Zadoff-Chu roots of the PSS for N_ID_2 = 0, 1, 2.
pub(crate) const PSS_ROOTS: [u32; 3] = [25, 29, 34];
/// Cell identity groups (N_ID_1 = 0..167).
pub(crate) const N_ID_1_COUNT: usize = 168;

/// Signed subcarrier (−31..−1, +1..+31; the DC subcarrier carries nothing) of sequence
/// element `n` (0..62): `k = n − 31 + N_RB·N_sc/2` on the grid, whose lower half lies
/// below DC.
pub(crate) fn subcarrier(n: usize) -> i32 {
    if n < 31 {
        n as i32 - 31
    } else {
        n as i32 - 30
    }
}

/// FFT bin (0..128) of sequence element `n`.
pub(crate) fn bin(n: usize) -> usize {
    subcarrier(n).rem_euclid(NFFT as i32) as usize
}

/// The PSS d_u(n) for N_ID_2 (0..=2): `exp(−jπu·n(n+1)/63)` for n < 31 and
/// `exp(−jπu·(n+1)(n+2)/63)` for n ≥ 31.
pub(crate) fn pss(n_id_2: usize) -> [Complex<f64>; SEQ_LEN] {
    let u = f64::from(PSS_ROOTS[n_id_2 % 3]);
    std::array::from_fn(|n| {
        let m = if n < 31 {
            n * (n + 1)
        } else {
            (n + 1) * (n + 2)
        };
        // m·u/63 can be large: reduce it mod 2 (a whole turn) exactly first.
        let turns = ((m as u64 * u as u64) % 126) as f64 / 63.0;
        Complex::from_polar(1.0, -PI * turns)
    })
}

/// A ±1 m-sequence of length 31: x(0..5) = 0,0,0,0,1 and x(i+5) = Σ x(i+t) mod 2 over
/// `taps`; element i is 1 − 2·x(i).
fn m_sequence(taps: &[usize]) -> [i8; 31] {
    let mut x = [0u8; 31];
    x[4] = 1;
    for i in 0..26 {
        x[i + 5] = taps.iter().map(|&t| x[i + t]).sum::<u8>() % 2;
    }
    x.map(|b| 1 - 2 * b as i8)
}

/// The SSS d(0..62) for N_ID_1 (0..168), N_ID_2 (0..3), in subframe 0 or 5.
pub(crate) fn sss(n_id_1: usize, n_id_2: usize, subframe_5: bool) -> [i8; SEQ_LEN] {
    let s = m_sequence(&[2, 0]);
    let c = m_sequence(&[3, 0]);
    let z = m_sequence(&[4, 2, 1, 0]);
    let q1 = n_id_1 / 30;
    let q = (n_id_1 + q1 * (q1 + 1) / 2) / 30;
    let m1_ = n_id_1 + q * (q + 1) / 2;
    let m0 = m1_ % 31;
    let m1 = (m0 + m1_ / 31 + 1) % 31;
    let mut d = [0i8; SEQ_LEN];
    for n in 0..31 {
        let s0 = s[(n + m0) % 31];
        let s1 = s[(n + m1) % 31];
        let c0 = c[(n + n_id_2) % 31];
        let c1 = c[(n + n_id_2 + 3) % 31];
        let z_m0 = z[(n + m0 % 8) % 31];
        let z_m1 = z[(n + m1 % 8) % 31];
        if subframe_5 {
            d[2 * n] = s1 * c0;
            d[2 * n + 1] = s0 * c1 * z_m1;
        } else {
            d[2 * n] = s0 * c0;
            d[2 * n + 1] = s1 * c1 * z_m0;
        }
    }
    d
}

/// The PSS's useful part in time at 1.92 MS/s (128 samples), unit energy per sample.
pub(crate) fn pss_time(n_id_2: usize) -> [Complex<f32>; NFFT] {
    let d = pss(n_id_2);
    let norm = 1.0 / (SEQ_LEN as f64).sqrt();
    std::array::from_fn(|i| {
        let mut acc = Complex::new(0.0, 0.0);
        for (n, v) in d.iter().enumerate() {
            let ph = 2.0 * PI * f64::from(subcarrier(n)) * i as f64 / NFFT as f64;
            acc += v * Complex::from_polar(1.0, ph);
        }
        let v = acc * norm;
        Complex::new(v.re as f32, v.im as f32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PSS values the standard's formula gives, spot-checked by hand: d_25(1) =
    /// exp(−jπ·25·2/63), and d_u(31) uses (n+1)(n+2): exp(−jπu·32·33/63).
    #[test]
    fn pss_follows_the_zadoff_chu_definition() {
        for (n2, u) in [(0usize, 25.0f64), (1, 29.0), (2, 34.0)] {
            let d = pss(n2);
            assert!((d[0] - Complex::new(1.0, 0.0)).norm() < 1e-12);
            let e1 = Complex::from_polar(1.0, -PI * u * 2.0 / 63.0);
            assert!((d[1] - e1).norm() < 1e-12, "root {u}");
            let e31 = Complex::from_polar(1.0, -PI * u * 32.0 * 33.0 / 63.0);
            assert!((d[31] - e31).norm() < 1e-9, "root {u}");
        }
        // Roots 29 and 34 are complex conjugates of each other (29 + 34 = 63).
        let (a, b) = (pss(1), pss(2));
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y.conj()).norm() < 1e-9));
        // Elements sit on −31..−1, +1..+31: never on DC.
        assert_eq!(
            (
                subcarrier(0),
                subcarrier(30),
                subcarrier(31),
                subcarrier(61)
            ),
            (-31, -1, 1, 31)
        );
    }

    /// The s̃ m-sequence starts as the standard's x(i+5) = x(i+2) + x(i) recursion
    /// from 0,0,0,0,1 gives; every SSS is ±1, differs between subframes 0 and 5, and
    /// the 168 groups are distinct.
    #[test]
    fn sss_follows_the_m_sequence_definition() {
        let x: Vec<i8> = "0000100101100111110001101110101"
            .bytes()
            .map(|b| 1 - 2 * (b - b'0') as i8)
            .collect();
        assert_eq!(m_sequence(&[2, 0]).to_vec(), x);
        let mut seen = std::collections::HashSet::new();
        for n1 in 0..N_ID_1_COUNT {
            let a = sss(n1, 0, false);
            let b = sss(n1, 0, true);
            assert!(a.iter().all(|v| v.abs() == 1));
            assert_ne!(a, b);
            assert!(seen.insert(a.to_vec()));
        }
        // N_ID_1 = 0: m0 = 0, m1 = 1; element 0 in subframe 0 is s̃(0)·c̃(N_ID_2).
        let c = m_sequence(&[3, 0]);
        assert_eq!(sss(0, 1, false)[0], x[0] * c[1]);
        assert_eq!(sss(0, 1, true)[0], x[1] * c[1]);
    }
}

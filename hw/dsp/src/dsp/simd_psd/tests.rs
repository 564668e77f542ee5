//! Unit tests of `simd_psd`.
use super::*;
use num_complex::Complex;
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

/// CS16 read by the kernels gives the power and clipped count of the same samples
/// converted to CF32 (`v / 32768`) first, to the bit, at every length of the tail;
/// and a CS16 segment the spectrum of the converted one, bit for bit.
#[test]
fn cs16_in_the_kernels_is_the_converted_cf32_to_the_bit() {
    for isa in isas_here() {
        let n = isa.min_n() * 8;
        let window: Vec<f32> = (0..n)
            .map(|i| (std::f32::consts::PI * i as f32 / n as f32).sin().powi(2))
            .collect();
        let (Some(mut a), Some(mut b)) = (
            SimdPsd::with_isa(&window, isa),
            SimdPsd::with_isa(&window, isa),
        ) else {
            panic!("{isa:?} kernel");
        };
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 100, 5000, 20_011] {
            let q: Vec<Complex<i16>> = signal(len, len as u64 + 5)
                .iter()
                .enumerate()
                .map(|(i, v)| match i % 29 {
                    4 => Complex::new(i16::MIN, 7),
                    9 => Complex::new(-3, i16::MAX),
                    _ => Complex::new((v.re * 20_000.0) as i16, (v.im * 20_000.0) as i16),
                })
                .collect();
            let f: Vec<Complex<f32>> = q.iter().map(|v| v.to_cf32()).collect();
            for clip in [32767.0 / 32768.0, 1.0, 0.25] {
                let (p, c) = a.stats(&q, clip);
                let (pf, cf) = a.stats(&f, clip);
                assert_eq!(c, cf, "{isa:?} len {len} clip {clip}");
                assert_eq!(p.to_bits(), pf.to_bits(), "{isa:?} len {len}");
            }
        }
        let q: Vec<Complex<i16>> = signal(3 * n, 9)
            .iter()
            .map(|v| Complex::new((v.re * 30_000.0) as i16, (v.im * 30_000.0) as i16))
            .collect();
        let f: Vec<Complex<f32>> = q.iter().map(|v| v.to_cf32()).collect();
        a.segments(&q, n / 2, 5);
        b.segments(&f, n / 2, 5);
        a.segment(&q[7..7 + n]);
        b.segment(&f[7..7 + n]);
        let (mut ta, mut tb) = (vec![0.0f64; n], vec![0.0f64; n]);
        a.peek(&mut ta);
        b.peek(&mut tb);
        for (i, (u, v)) in ta.iter().zip(&tb).enumerate() {
            assert_eq!(u.to_bits(), v.to_bits(), "{isa:?} bin {i}: {u} vs {v}");
        }
        assert!(ta.iter().any(|&v| v > 0.0));
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

/// Which input stage each size gets: radix-8 only on AVX-512 up to 4096 points (AVX2
/// spills it), radix-2 for the other odd counts of vector stages, radix-4 for even ones;
/// `matches_rustfft_for_every_size` runs each of these paths against rustfft.
#[test]
fn input_stage_by_size_and_isa() {
    let name = |isa, n: usize| match SimdPsd::build(&vec![1.0; n], isa).map(|k| k.input) {
        Some(Input::Copy) => "copy",
        Some(Input::Radix2(_)) => "radix2",
        Some(Input::Radix4(_)) => "radix4",
        Some(Input::Radix8(_)) => "radix8",
        None => "none",
    };
    for (n, want) in [
        (256, "copy"),
        (512, "radix2"),
        (1024, "radix4"),
        (2048, "radix8"),
        (4096, "radix4"),
        (8192, "radix2"),
        (32768, "radix2"),
        (65536, "radix4"),
    ] {
        assert_eq!(name(Isa::Avx512, n), want, "avx512 {n}");
    }
    for (n, want) in [
        (64, "copy"),
        (128, "radix2"),
        (256, "radix4"),
        (512, "radix2"),
        (2048, "radix2"),
        (8192, "radix2"),
        (16384, "radix4"),
    ] {
        assert_eq!(name(Isa::Avx2, n), want, "avx2 {n}");
    }
}

/// The split arrays keep one 64-byte line of padding per 256 points (no vector of 16
/// straddles it) and start im 32 lines (half the L1 sets) away from re, at every size.
#[test]
fn split_arrays_are_padded_and_im_is_half_the_sets_away() {
    assert_eq!(padded(0), 0);
    assert_eq!(padded(255), 255);
    assert_eq!(padded(256), 272);
    assert_eq!(padded(4096 + 17), 4096 + 17 + 16 * 16);
    for i in (0..1 << 16).step_by(16) {
        assert_eq!(
            padded(i + 15),
            padded(i) + 15,
            "vector at {i} straddles a pad"
        );
    }
    for n in [64usize, 256, 2048, 65536, 1 << 20] {
        let (buf, im_at) = split_buffer(n);
        assert_eq!((im_at / 16) % 64, 32, "n {n}");
        assert!(im_at >= padded(n) && buf.as_slice().len() >= im_at + padded(n));
    }
}

/// A pass reads the twiddles of the L points from j at `2·powers·j`: power p (1-based)
/// as re[L] then im[L], each `exp(-2πi·p·(j + lane)/m)`.
#[test]
fn pass_twiddles_are_in_the_order_a_pass_reads_them() {
    for (s, m, powers, lanes) in [
        (64usize, 256usize, 3usize, 16usize),
        (1024, 2048, 1, 8),
        (256, 2048, 7, 8),
        (16, 64, 3, 16),
    ] {
        let t = pass_twiddles(s, m, powers, lanes);
        assert_eq!(t.len(), 2 * powers * s);
        for j in (0..s).step_by(lanes) {
            for p in 1..=powers {
                for lane in 0..lanes {
                    let a = -2.0 * std::f64::consts::PI * (p * (j + lane)) as f64 / m as f64;
                    let at = 2 * powers * j + 2 * (p - 1) * lanes + lane;
                    assert!(
                        (f64::from(t[at]) - a.cos()).abs() < 1e-6,
                        "s {s} p {p} j {j} re"
                    );
                    assert!(
                        (f64::from(t[at + lanes]) - a.sin()).abs() < 1e-6,
                        "s {s} p {p} j {j} im"
                    );
                }
            }
        }
    }
}

/// A pass walks each stream in runs of `run_len(s)` points from a multiple of it; no
/// run may cross a pad of the split arrays, or the plain pointer of the run would
/// miss the padded position.
#[cfg(target_arch = "x86_64")]
#[test]
fn pass_runs_cross_no_pad() {
    for bits in 3..=20 {
        let s = 1usize << bits;
        let run = x86::run_len_for_test(s);
        assert!(run >= 8 && s.is_multiple_of(run), "s {s} run {run}");
        for start in (0..(1usize << 21)).step_by(run) {
            assert_eq!(
                padded(start + run - 1),
                padded(start) + run - 1,
                "s {s} from {start}"
            );
        }
    }
}

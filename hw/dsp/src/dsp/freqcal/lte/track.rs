//! Tracking: every PSS near its predicted arrival, measured (arrival, phase, SNR),
//! with the SSS and the cyclic prefixes around it.
use super::estimate::sss_found;
use super::*;

/// |Σ_k Y_k·exp(j2πkδ/128)|² for a PSS that starts δ samples into its FFT window.
fn aligned_power(y: &[Complex<f64>; SEQ_LEN], delta: f64) -> f64 {
    let w = Complex::from_polar(1.0, 2.0 * PI * delta / NFFT as f64);
    // exp(j2πkδ/128) for k = −31..−1, then +1..+31, by rotation.
    let mut r = Complex::from_polar(1.0, -2.0 * PI * 31.0 * delta / NFFT as f64);
    let mut acc = Complex::new(0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        if i == 31 {
            r *= w; // skip DC
        }
        acc += v * r;
        r *= w;
    }
    acc.norm_sqr()
}

/// The delay in `start ± 2.5` samples maximising [`aligned_power`]: a 0.25-sample grid,
/// then golden-section search to 1e-4 sample.
fn best_delay(
    y: &[Complex<f64>; SEQ_LEN],
    y2: Option<&[Complex<f64>; SEQ_LEN]>,
    start: f64,
) -> f64 {
    let aligned_power = |y: &[Complex<f64>; SEQ_LEN], d: f64| {
        aligned_power(y, d) + y2.map_or(0.0, |y2| aligned_power(y2, d))
    };
    let mut best = (f64::MIN, start);
    for i in -10..=10 {
        let d = start + 0.25 * f64::from(i);
        let p = aligned_power(y, d);
        if p > best.0 {
            best = (p, d);
        }
    }
    let (mut lo, mut hi) = (best.1 - 0.25, best.1 + 0.25);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (aligned_power(y, x1), aligned_power(y, x2));
    while hi - lo > 1e-4 {
        if f1 > f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = aligned_power(y, x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = aligned_power(y, x2);
        }
    }
    0.5 * (lo + hi)
}

impl LteEstimator {
    /// Process every PSS whose surroundings are in `buf`.
    pub(super) fn track(&mut self) {
        let State::Tracking(t) = &mut self.state else {
            return;
        };
        // Mix down what is new: exact phase every 1024 samples, a rotating phasor between.
        let step = Complex::from_polar(1.0, -2.0 * PI * t.mix_hz / LTE_RATE_HZ);
        let mut rot = Complex::new(1.0f64, 0.0);
        for (i, x) in self.buf.iter_mut().enumerate().skip(t.mixed) {
            if i == t.mixed || i % 1024 == 0 {
                let idx = self.buf_start + i as i64;
                rot = Complex::from_polar(
                    1.0,
                    -2.0 * PI * (t.mix_hz * idx as f64 / LTE_RATE_HZ).fract(),
                );
            }
            *x *= Complex::new(rot.re as f32, rot.im as f32);
            rot *= step;
        }
        t.mixed = self.buf.len();
        let buf_end = self.buf_start + self.buf.len() as i64;
        // Samples before `floor` are done with.
        let mut floor = self.buf_start;
        loop {
            let n = t.next_n;
            let pred = match t.fit.line() {
                Some((a, b)) => a + b * n as f64,
                None => t.tau0 + t.period0 * n as f64,
            };
            let centre = pred.round() as i64;
            // Needed: this half frame from its slot 0 (the SSS and the downlink symbols'
            // cyclic prefixes, where either frame structure has them), up to the end of
            // its slot 9.
            let need_lo = centre - LOOKBACK as i64 - TRACK_HALF_WINDOW - 4;
            let need_hi = centre - PSS_IN_SLOT as i64 + HALF_FRAME as i64 + TRACK_HALF_WINDOW + 2;
            if need_hi > buf_end {
                break;
            }
            t.next_n += 1;
            if need_lo < floor {
                continue;
            }
            if t.records.len() >= MAX_RECORDS {
                break;
            }
            t.processed += 1;
            let known_sss = t.sss_known.map(|f| {
                let sub5 = (n + f.parity as u64) % 2 == 1;
                (&t.sss_table[2 * f.n_id_1 + usize::from(sub5)], f.duplex)
            });
            let expected = Expected {
                centre,
                n,
                tmpl: &self.templates[t.n_id_2],
                n_id_2: t.n_id_2,
                known_sss,
            };
            let rec = Self::measure(
                &self.buf,
                self.buf_start,
                expected,
                (&self.fft128, &mut self.scratch),
            );
            if let Some((rec, sss_spec, tdd_spec)) = rec {
                if rec.rho2 >= FOUND_RHO2 {
                    t.fit.add(n as f64, rec.tau);
                    // Table row 2·N_ID_1 + (subframe 5); hypothesis 2·N_ID_1 + parity,
                    // where parity says which PSS count parity is subframe 0. The same
                    // at the TDD position, to tell the frame structure.
                    for (spec, acc) in
                        [(&sss_spec, &mut t.sss_acc), (&tdd_spec, &mut t.sss_acc_tdd)]
                    {
                        for n1 in 0..N_ID_1_COUNT {
                            let corr = |row: &[f32; SEQ_LEN]| {
                                let mut a = Complex::new(0.0f64, 0.0);
                                for (v, &s) in spec.iter().zip(row.iter()) {
                                    a += v * f64::from(s);
                                }
                                a.norm_sqr()
                            };
                            let (v0, v5) =
                                (corr(&t.sss_table[2 * n1]), corr(&t.sss_table[2 * n1 + 1]));
                            for parity in 0..2u64 {
                                let sub5 = (n + parity) % 2 == 1;
                                acc[2 * n1 + parity as usize] += if sub5 { v5 } else { v0 };
                            }
                        }
                    }
                    t.records.push(rec);
                    if t.sss_known.is_none() && t.records.len() >= 40 && t.records.len() % 10 == 0 {
                        t.sss_known = sss_found(t).ok();
                    }
                }
            }
            // Keep from just before the next half frame (dropped once, after the loop:
            // after an acquisition the buffer may hold a second of samples).
            floor = (centre + HALF_FRAME as i64 - LOOKBACK as i64 - 2 * TRACK_HALF_WINDOW - 8)
                .max(floor);
        }
        let drop = ((floor - self.buf_start) as usize).min(self.buf.len());
        self.buf.drain(..drop);
        self.buf_start += drop as i64;
        t.mixed = t.mixed.saturating_sub(drop);
    }

    /// Measure the PSS expected near `centre`: the correlation peak, fractional arrival,
    /// phase, SNR, cyclic prefixes, and the subcarriers (timing slope removed) where an
    /// FDD and a TDD cell's SSS would be, in the samples `buf` (the first at
    /// `buf_start`), with the 128-point FFT and its scratch.
    fn measure(
        buf: &[Complex<f32>],
        buf_start: i64,
        expected: Expected<'_>,
        (fft128, scratch): (&Arc<dyn Fft<f32>>, &mut Vec<Complex<f32>>),
    ) -> Option<(Record, SssSpectrum, SssSpectrum)> {
        let Expected {
            centre,
            n,
            tmpl,
            n_id_2,
            known_sss,
        } = expected;
        let at = |i: i64| -> Option<&[Complex<f32>]> {
            let s = usize::try_from(i - buf_start).ok()?;
            buf.get(s..s + NFFT)
        };
        let one =
            |i: i64| -> Option<&Complex<f32>> { buf.get(usize::try_from(i - buf_start).ok()?) };
        // Correlation peak in the window.
        let mut best = (-1.0f64, centre);
        for lag in centre - TRACK_HALF_WINDOW..=centre + TRACK_HALF_WINDOW {
            let x = at(lag)?;
            let (mut c, mut e) = (Complex::new(0.0f32, 0.0), 0.0f32);
            for (a, b) in x.iter().zip(tmpl) {
                c += a * b.conj();
                e += a.norm_sqr();
            }
            // The template has energy NFFT: |ρ|² is in 0..1.
            let rho2 = if e > 0.0 {
                f64::from(c.norm_sqr() / e) / NFFT as f64
            } else {
                0.0
            };
            if rho2 > best.0 {
                best = (rho2, lag);
            }
        }
        let (rho2, peak) = best;
        let w = peak - CP_BACKOFF;
        let mut spec = [Complex::new(0.0f32, 0.0); NFFT];
        spec.copy_from_slice(at(w)?);
        if scratch.len() < fft128.get_inplace_scratch_len() {
            scratch.resize(fft128.get_inplace_scratch_len(), Complex::new(0.0, 0.0));
        }
        fft128.process_with_scratch(&mut spec, scratch);
        let d = pss(n_id_2);
        let y: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| {
            let v = spec[bin(i)];
            Complex::new(f64::from(v.re), f64::from(v.im)) * d[i].conj()
        });
        // SSS: the symbol before (FDD) or three before (TDD), same window offset.
        let mut sss_raw = [[Complex::new(0.0f64, 0.0); SEQ_LEN]; 2];
        for (raw, duplex) in sss_raw.iter_mut().zip(Duplex::BOTH) {
            let mut sspec = [Complex::new(0.0f32, 0.0); NFFT];
            sspec.copy_from_slice(at(w - duplex.sss_lead() as i64)?);
            fft128.process_with_scratch(&mut sspec, scratch);
            *raw = std::array::from_fn(|i| {
                let v = sspec[bin(i)];
                Complex::new(f64::from(v.re), f64::from(v.im))
            });
        }
        // Timing: the delay δ (samples into the window) that best aligns the PSS (and
        // the SSS, once known), maximising |Σ_k Y_k·exp(j2πkδ/128)|² — the correlation,
        // interpolated exactly.
        let ys: Option<[Complex<f64>; SEQ_LEN]> = known_sss.map(|(d, duplex)| {
            std::array::from_fn(|i| sss_raw[duplex.index()][i] * f64::from(d[i]))
        });
        let delta = best_delay(&y, ys.as_ref(), CP_BACKOFF as f64);
        let derot = |i: usize| {
            Complex::from_polar(
                1.0,
                2.0 * PI * f64::from(subcarrier(i)) * delta / NFFT as f64,
            )
        };
        let yc: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| y[i] * derot(i));
        let mean = yc.iter().sum::<Complex<f64>>() / SEQ_LEN as f64;
        let noise = yc.iter().map(|v| (v - mean).norm_sqr()).sum::<f64>() / (SEQ_LEN - 1) as f64;
        let snr_db = 10.0 * (mean.norm_sqr().max(1e-30) / noise.max(1e-30)).log10();
        let sss_spec: [Complex<f64>; SEQ_LEN] =
            std::array::from_fn(|i| sss_raw[Duplex::Fdd.index()][i] * derot(i));
        let tdd_spec: [Complex<f64>; SEQ_LEN] =
            std::array::from_fn(|i| sss_raw[Duplex::Tdd.index()][i] * derot(i));
        let ps = match &ys {
            Some(ys) => {
                let cs: Complex<f64> = ys.iter().enumerate().map(|(i, v)| v * derot(i)).sum();
                mean * SEQ_LEN as f64 * cs.conj()
            }
            None => Complex::new(0.0, 0.0),
        };
        // Cyclic prefixes of the half frame's downlink symbols from its slot 0 on (the
        // PSS symbol's own included), inner samples only, for either frame structure.
        let tau = w as f64 + delta;
        let mut cp = [Complex::new(0.0f64, 0.0); 2];
        for duplex in Duplex::BOTH {
            let slot0 = (tau - duplex.pss_in_half() as f64).round() as i64;
            let acc = &mut cp[duplex.index()];
            for (slot, l) in duplex.downlink_symbols() {
                let (start, len) = if l == 0 {
                    (0, 10)
                } else {
                    (10 + NFFT as i64 + (l as i64 - 1) * SYMBOL as i64, 9)
                };
                let s0 = slot0 + (slot * SLOT) as i64 + start;
                for i in 2..len - 2 {
                    let (Some(&a), Some(&b)) = (one(s0 + i), one(s0 + i + NFFT as i64)) else {
                        continue;
                    };
                    let p = a * b.conj();
                    *acc += Complex::new(f64::from(p.re), f64::from(p.im));
                }
            }
        }
        Some((
            Record {
                n,
                rho2,
                w,
                tau,
                theta: mean.arg(),
                snr_db,
                cp,
                ps,
            },
            sss_spec,
            tdd_spec,
        ))
    }
}

/// The PSS expected near one half frame: where, its number, which of the three it
/// is, and the SSS found so far and where (`None` before it is known).
struct Expected<'a> {
    /// The sample the PSS is expected at.
    centre: i64,
    /// The half frame's number.
    n: u64,
    /// The PSS's time-domain template.
    tmpl: &'a [Complex<f32>; NFFT],
    /// N_ID_2 of the cell.
    n_id_2: usize,
    /// The SSS found so far and the frame structure it was found in.
    known_sss: Option<(&'a [f32; SEQ_LEN], Duplex)>,
}

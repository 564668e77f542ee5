//! The estimate from the tracked PSS records: sample clock from the arrivals, carrier
//! looks (cyclic prefixes, PSS–SSS), the PSS phase fit, and the checks that a number
//! must pass.
use super::*;

/// Least squares line through (x, y) with weights 1: (a, b, σ_b, residual rms).
fn fit_line(pts: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    let a = my - b * mx;
    let rss: f64 = pts.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let s2 = rss / (n - 2) as f64;
    Some((a, b, (s2 / sxx).sqrt(), s2.sqrt()))
}

/// Wrap an angle to (−π, π].
fn wrap(a: f64) -> f64 {
    let r = (a + PI).rem_euclid(2.0 * PI) - PI;
    if r <= -PI {
        r + 2.0 * PI
    } else {
        r
    }
}

/// The carrier offset residual (Hz, after the mix-down) from products whose phase
/// turns by 2π·offset·`lag`/1.92 MS/s, its standard error from their spread, and its
/// alias spacing (Hz). `None` with fewer than two products.
fn circular_offset(products: &[Complex<f64>], lag: f64) -> Option<(f64, f64, f64)> {
    if products.len() < 2 {
        return None;
    }
    let sum: Complex<f64> = products.iter().sum();
    let k = LTE_RATE_HZ / (2.0 * PI * lag);
    let var = products
        .iter()
        .map(|p| wrap(p.arg() - sum.arg()).powi(2))
        .sum::<f64>()
        / (products.len() - 1) as f64;
    let sd = (var.sqrt() / (products.len() as f64).sqrt() * k.abs()).max(1e-3);
    Some((sum.arg() * k, sd, LTE_RATE_HZ / lag.abs()))
}

/// The inverse-variance mean of (value, σ) measurements of one quantity, its σ, and
/// the Birge ratio √(χ²/(n − 1)) of their scatter about it (1 for a single one): above
/// 1, they disagree by more than their σ allow. `None` when empty.
fn combine(looks: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let w: f64 = looks.iter().map(|l| l.1.powi(-2)).sum();
    if looks.is_empty() || !(w > 0.0 && w.is_finite()) {
        return None;
    }
    let mean = looks.iter().map(|l| l.0 * l.1.powi(-2)).sum::<f64>() / w;
    let birge = if looks.len() > 1 {
        let chi2: f64 = looks.iter().map(|l| ((l.0 - mean) / l.1).powi(2)).sum();
        (chi2 / (looks.len() - 1) as f64).sqrt()
    } else {
        1.0
    };
    Some((mean, w.powf(-0.5), birge))
}

/// Phases (time, wrapped) unwrapped from record `first` on, each against the median of
/// the last three accepted; those off by more than `PHASE_GATE` are left out.
/// Returns (record index, time, unwrapped phase).
fn unwrap_from(psis: &[(f64, f64)], first: usize) -> Vec<(usize, f64, f64)> {
    let mut hist = [0.0f64; 3];
    let mut len = 0usize;
    let mut out = Vec::with_capacity(psis.len() - first);
    for (i, &(tt, psi)) in psis.iter().enumerate().skip(first) {
        let reference = match len {
            0 => psi,
            1 => hist[0],
            2 => 0.5 * (hist[0] + hist[1]),
            _ => {
                let mut h = hist;
                median(&mut h)
            }
        };
        let u = reference + wrap(psi - reference);
        if (u - reference).abs() > PHASE_GATE {
            continue;
        }
        hist[len % 3] = u;
        len += 1;
        out.push((i, tt, u));
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl LteEstimator {
    /// The estimate from the records.
    pub(super) fn estimate(&self, t: &Track) -> Result<FreqCalEstimate, FreqCalError> {
        let cfg = &self.config;
        let seconds = self.seen as f64 / cfg.sample_rate_hz;
        let expected = t.processed + self.missed_in_acquisition;
        let found = t.records.len();
        let confidence = if expected > 0 {
            found as f64 / expected as f64
        } else {
            0.0
        };
        if found < MIN_FOUND || confidence < MIN_CONFIDENCE {
            return Err(not_found(format!(
                "a PSS (N_ID_2 {}) was seen but only {found} of {expected} expected were found in {seconds:.2} s",
                t.n_id_2
            )));
        }
        // 0. The cell's identity and frame structure, from where its SSS correlates:
        //    one symbol before the PSS (FDD) or three (TDD). Without it the PCI is
        //    unknown and so is the geometry of the SSS and cyclic-prefix looks: no
        //    number rather than one from a guessed geometry.
        let found_sss = sss_found(t).map_err(|why| {
            FreqCalError::NotFound(format!(
                "LTE cell (N_ID_2 {}) at {:.1} MHz found but its frequency error is not measurable: {why}",
                t.n_id_2,
                cfg.carrier_hz / 1e6
            ))
        })?;
        let duplex = found_sss.duplex;
        // 1. Arrival times against count: the sample clock.
        let mut pts: Vec<(f64, f64)> = t.records.iter().map(|r| (r.n as f64, r.tau)).collect();
        let (a, b, _, _) =
            fit_line(&pts).ok_or_else(|| not_found("too few PSS arrivals to fit".into()))?;
        let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - a - b * p.0).abs()).collect();
        let gate = (6.0 * 1.4826 * median(&mut res)).max(0.5);
        pts.retain(|p| (p.1 - a - b * p.0).abs() <= gate);
        let (_, period, period_sd, _) =
            fit_line(&pts).ok_or_else(|| not_found("too few PSS arrivals to fit".into()))?;
        let eps_tau = period / HALF_FRAME as f64 - 1.0;
        let eps_tau_sd = period_sd / HALF_FRAME as f64;
        let off_tau = super::super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, eps_tau * 1e6);
        let off_tau_sd = cfg.carrier_hz * eps_tau_sd;
        // 2. Two more looks at the carrier, each known only modulo its own alias
        //    spacing: the cyclic prefixes (one turn per 128 samples: 15 kHz) and the
        //    PSS against the SSS one symbol earlier (137 samples: 14.01 kHz).
        //    In a TDD cell only the downlink symbols' prefixes count, and the SSS is
        //    three symbols (412 samples: 4.66 kHz) before the PSS.
        let cp: Vec<Complex<f64>> = t.records.iter().map(|r| r.cp[duplex.index()]).collect();
        // The PSS–SSS products were taken with the SSS the tracker knew: only when that
        // is the one decided now.
        let ps: Vec<Complex<f64>> = if t.sss_known == Some(found_sss) {
            t.records
                .iter()
                .map(|r| r.ps)
                .filter(|p| p.norm_sqr() > 0.0)
                .collect()
        } else {
            Vec::new()
        };
        let looks = [
            circular_offset(&cp, -(NFFT as f64)),
            if ps.len() >= MIN_FOUND {
                circular_offset(&ps, duplex.sss_lead() as f64)
            } else {
                None
            },
        ];
        // Each look's alias nearest `around`.
        let unwrap_looks = |around: f64| -> Vec<(f64, f64)> {
            looks
                .iter()
                .flatten()
                .map(|&(resid, sd, spacing)| {
                    let v = t.mix_hz + resid;
                    (v + ((around - v) / spacing).round() * spacing, sd)
                })
                .collect()
        };
        // 3. Around the arrival-drift estimate (never aliased: it holds even when the
        //    acquisition locked onto a Zadoff-Chu delay-Doppler ghost a few subcarriers
        //    off), combined with it; if they disagree, the sample clock is not tied to
        //    the LO and the carrier looks alone, around the acquisition's offset, count.
        //    The combined σ is widened by the looks' own scatter about their mean
        //    (never narrowed), so looks that disagree more than their σ allow (a bias
        //    in one of them) widen the coarse estimate's stated uncertainty.
        //    Whether they agree is judged with the looks' widened σ too: looks that
        //    scatter among themselves cannot claim to contradict the arrival drift.
        let carrier = combine(&unwrap_looks(off_tau));
        let (off_prior, prior_sd, tied) = match carrier {
            Some((off_c, sd_c, birge))
                if (off_tau - off_c).abs()
                    <= 4.0 * (off_tau_sd.powi(2) + (sd_c * birge.max(1.0)).powi(2)).sqrt() =>
            {
                let mut all = unwrap_looks(off_tau);
                all.push((off_tau, off_tau_sd));
                let (m, sd, birge) = combine(&all).unwrap_or((off_tau, off_tau_sd, 1.0));
                (m, sd * birge.max(1.0), true)
            }
            None => (off_tau, off_tau_sd, true),
            Some(_) => {
                let (off_c, sd_c, birge) =
                    combine(&unwrap_looks(t.mix_hz)).unwrap_or((off_tau, off_tau_sd, 1.0));
                tracing::warn!(
                    off_tau,
                    off_c,
                    "lte: the PSS arrival drift and the carrier disagree; using the carrier alone"
                );
                (off_c, sd_c * birge.max(1.0), false)
            }
        };
        // 4. Carrier phase at each window centre, against time.
        let phase_t = |r: &Record| (r.w as f64 + 63.5) / LTE_RATE_HZ;
        let phase_of = |r: &Record| {
            r.theta + 2.0 * PI * (t.mix_hz * (r.w as f64 + 63.5) / LTE_RATE_HZ).fract()
        };
        // Residual step per PSS, from consecutive pairs (no unwrapping needed).
        let mut lag1 = Complex::new(0.0, 0.0);
        let mut dt_sum = 0.0;
        let mut pairs = 0.0;
        for p in t.records.windows(2) {
            if p[1].n == p[0].n + 1 {
                let dt = phase_t(&p[1]) - phase_t(&p[0]);
                let d = phase_of(&p[1]) - phase_of(&p[0]) - 2.0 * PI * (off_prior * dt).fract();
                lag1 += Complex::from_polar(1.0, d);
                dt_sum += dt;
                pairs += 1.0;
            }
        }
        let alias_hz = if pairs > 0.0 {
            pairs / dt_sum
        } else {
            LTE_RATE_HZ / period
        };
        let off1 = off_prior + lag1.arg() / (2.0 * PI) * alias_hz;
        // Unwrap against the median of the last three accepted phases, starting from
        // whichever of the first records keeps the most (an outlier first would
        // reject the rest); fit.
        let psis: Vec<(f64, f64)> = t
            .records
            .iter()
            .map(|r| {
                let tt = phase_t(r);
                (tt, wrap(phase_of(r) - 2.0 * PI * (off1 * tt).fract()))
            })
            .collect();
        let mut phase_pts: Vec<(usize, f64, f64)> = Vec::new();
        for first in 0..psis.len().min(8) {
            let pts = unwrap_from(&psis, first);
            if pts.len() > phase_pts.len() {
                phase_pts = pts;
            }
            if 2 * phase_pts.len() > psis.len() {
                break;
            }
        }
        let xy: Vec<(f64, f64)> = phase_pts.iter().map(|p| (p.1, p.2)).collect();
        let fit = fit_line(&xy).ok_or_else(|| not_found("too few PSS phases to fit".into()))?;
        let mut res: Vec<f64> = xy
            .iter()
            .map(|p| (p.1 - fit.0 - fit.1 * p.0).abs())
            .collect();
        let gate = (4.0 * 1.4826 * median(&mut res)).max(1e-6);
        let kept: Vec<(usize, f64, f64)> = phase_pts
            .iter()
            .copied()
            .filter(|p| (p.2 - fit.0 - fit.1 * p.1).abs() <= gate)
            .collect();
        let xy: Vec<(f64, f64)> = kept.iter().map(|p| (p.1, p.2)).collect();
        let (pa, pb, pb_sd, _) =
            fit_line(&xy).ok_or_else(|| not_found("too few PSS phases to fit".into()))?;
        let off_phase = off1 + pb / (2.0 * PI);
        let off_phase_sd = pb_sd / (2.0 * PI);
        // 5. Is the alias safe? And were the estimate's assumptions borne out?
        let margin = 0.5 * alias_hz - (off_phase - off_prior).abs();
        let (offset, offset_sd, how) = if margin >= ALIAS_SIGMAS * prior_sd {
            (off_phase, off_phase_sd, "PSS phase")
        } else {
            (off_prior, prior_sd, "PSS timing, cyclic prefixes and SSS")
        };
        let ppm = ppm_from_offset(cfg.carrier_hz, cfg.center_hz, offset);
        let mut checks = Checks::new();
        // Two independent measures of the carrier — the arrival drift (the sample
        // clock, taken to share the LO's crystal) and the carrier looks — must agree:
        // a radio whose LO and sample clock run on different crystals (or a lock onto
        // something that is not this cell's timing) has no number.
        checks.check("LO and sample clock on one crystal", tied, || {
            format!(
                "the PSS arrival drift (the sample clock) puts the carrier {:+.1} ± {:.1} Hz from nominal, \
                 the cyclic prefixes and SSS (the LO) {:+.1} ± {:.1} Hz; they disagree, so the LO and the \
                 sample clock do not share one crystal (or the timing is not this cell's)",
                off_tau - cfg.carrier_hz + cfg.center_hz,
                off_tau_sd,
                off_prior - cfg.carrier_hz + cfg.center_hz,
                prior_sd
            )
        });
        // The carrier looks (cyclic prefixes, PSS–SSS), each known modulo its own alias
        // spacing, must agree with each other where they are unwrapped: when they
        // scatter by more than 4 σ, one of them sits on another alias (an LO 14 or
        // 15 kHz from where the sample clock says), and widening σ would hide it.
        // Only a scatter that could be an alias counts: looks a few hertz apart
        // are on one alias (their bias already widened the coarse σ above).
        let looks_birge = carrier.map_or(1.0, |c| c.2);
        let at = unwrap_looks(off_tau);
        let spread_hz = at.iter().map(|l| l.0).fold(f64::NEG_INFINITY, f64::max)
            - at.iter().map(|l| l.0).fold(f64::INFINITY, f64::min);
        let spread_hz = if spread_hz.is_finite() {
            spread_hz
        } else {
            0.0
        };
        tracing::debug!(off_tau, off_tau_sd, looks = ?at, looks_birge, spread_hz, "lte carrier looks");
        checks.check(
            "the carrier looks agree",
            looks_birge <= ALIAS_SIGMAS || spread_hz <= LOOKS_ONE_ALIAS_HZ,
            || {
                format!(
                    "the cyclic prefixes and the SSS place the carrier {looks_birge:.1} σ and {spread_hz:.0} Hz apart \
                     around the PSS arrival drift (an LO not on the sample clock's crystal, or not this cell)"
                )
            },
        );
        checks.in_range("the radio error", ppm, cfg.max_error_ppm);
        let checked = checks.pass().map_err(|why| {
            FreqCalError::NotFound(format!(
                "LTE {} cell PCI {} found but its frequency error is not measurable: {why}",
                duplex.name(),
                3 * found_sss.n_id_1 + t.n_id_2
            ))
        })?;
        tracing::debug!(
            off_tau,
            off_tau_sd,
            off_prior,
            prior_sd,
            off_phase,
            off_phase_sd,
            how,
            "lte estimate"
        );
        let k = 1.0 + ppm * 1e-6;
        let uncertainty_ppm = offset_sd * k * k / cfg.carrier_hz * 1e6;
        // SSS → PCI.
        let pci = u16::try_from(3 * found_sss.n_id_1 + t.n_id_2).ok();
        let cell = format!(
            "PCI {} at {:.1} MHz{}",
            3 * found_sss.n_id_1 + t.n_id_2,
            cfg.carrier_hz / 1e6,
            if duplex == Duplex::Tdd { " (TDD)" } else { "" }
        );
        // Evidence: one detection per found PSS; its offset from the phase step since
        // the previous kept one.
        let kept_set: std::collections::HashMap<usize, (f64, f64)> =
            kept.iter().map(|p| (p.0, (p.1, p.2))).collect();
        let mut prev: Option<(f64, f64)> = None;
        let detections = t
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let used = kept_set.get(&i).copied();
                let off = match (used, prev) {
                    (Some((tt, u)), Some((pt, pu))) if tt > pt => {
                        let resid = (u - pa - pb * tt) - (pu - pa - pb * pt);
                        off_phase + resid / (2.0 * PI * (tt - pt))
                    }
                    _ => offset,
                };
                if used.is_some() {
                    prev = used;
                }
                FreqCalDetection {
                    time_s: r.tau / LTE_RATE_HZ,
                    offset_hz: off,
                    ppm: ppm_from_offset(cfg.carrier_hz, cfg.center_hz, off),
                    snr_db: r.snr_db,
                    used: used.is_some(),
                }
            })
            .collect();
        let lo = super::super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, cfg.max_error_ppm);
        let hi = super::super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, -cfg.max_error_ppm);
        Ok(FreqCalEstimate {
            ppm,
            uncertainty_ppm: super::super::with_cell_uncertainty(uncertainty_ppm),
            measurement_uncertainty_ppm: uncertainty_ppm,
            method: FreqCalMethod::Lte,
            cell,
            confidence: confidence.min(1.0),
            pci,
            duplex: Some(if duplex == Duplex::Tdd { "tdd" } else { "fdd" }),
            evidence: FreqCalEvidence {
                detections,
                nominal_offset_hz: cfg.carrier_hz - cfg.center_hz,
                search_hz: [lo, hi],
                seconds_analysed: seconds,
            },
            checked,
        })
    }
}

/// The SSS hypothesis that stands out: (N_ID_1, parity), when its metric is 8 standard
/// deviations above the others' mean and 1.5 × the runner-up.
pub(super) fn sss_decision(acc: &[f64]) -> Option<(usize, usize)> {
    let (best_i, best) = acc
        .iter()
        .copied()
        .enumerate()
        .fold((0, f64::MIN), |a, (i, v)| if v > a.1 { (i, v) } else { a });
    let others: Vec<f64> = acc
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best_i)
        .map(|(_, v)| *v)
        .collect();
    let n = others.len() as f64;
    let mean = others.iter().sum::<f64>() / n;
    let sd = (others.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let second = others.iter().copied().fold(f64::MIN, f64::max);
    (best > 0.0 && best >= mean + 8.0 * sd && best >= 1.5 * second)
        .then_some((best_i / 2, best_i % 2))
}

/// The cell's SSS, at the FDD or the TDD position: exactly one must stand out, else why
/// not.
pub(super) fn sss_found(t: &Track) -> Result<SssFound, String> {
    let at = |acc: &[f64], duplex| {
        sss_decision(acc).map(|(n_id_1, parity)| SssFound {
            n_id_1,
            parity,
            duplex,
        })
    };
    match (at(&t.sss_acc, Duplex::Fdd), at(&t.sss_acc_tdd, Duplex::Tdd)) {
        (Some(f), None) | (None, Some(f)) => Ok(f),
        (None, None) => Err(
            "no SSS stands out one symbol (FDD) or three symbols (TDD) before the PSS, so \
             neither the cell's identity (PCI) nor its frame structure is confirmed (a cell \
             too weak, with the extended cyclic prefix, or seen by a radio whose LO and \
             sample clock run on two crystals)"
                .into(),
        ),
        (Some(f), Some(d)) => Err(format!(
            "an SSS stands out both one symbol before the PSS (FDD, N_ID_1 {}) and three \
             before (TDD, N_ID_1 {}): not one cell's frame structure",
            f.n_id_1, d.n_id_1
        )),
    }
}

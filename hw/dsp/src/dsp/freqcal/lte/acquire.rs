//! Acquisition: the strongest PSS over 80 ms of every root and carrier offset the
//! searched range allows, folded every 5 ms.
use super::*;

impl LteEstimator {
    /// The block spectra of the acquisition window (the first `ACQ_LEN` samples).
    pub(super) fn start_search(&mut self) -> Search {
        let blocks = ACQ_PERIODS * HALF_FRAME / ACQ_STEP;
        let mut spectra = vec![Complex::new(0.0f32, 0.0); blocks * ACQ_FFT];
        for (b, s) in spectra.chunks_mut(ACQ_FFT).enumerate() {
            s.copy_from_slice(&self.buf[b * ACQ_STEP..b * ACQ_STEP + ACQ_FFT]);
            self.fft512.process(s);
        }
        Search {
            spectra,
            fold: vec![0.0f32; HALF_FRAME],
            work: vec![Complex::new(0.0f32, 0.0); ACQ_FFT],
            next: 0,
            best: (0.0, 0, 0, 0),
        }
    }

    /// Search the next `pairs` (root, offset) pairs of `search`: correlate with the root
    /// shifted by the offset, fold every 5 ms (corrected for the sample-clock drift that
    /// offset implies) and keep the strongest peak against its fold's mean.
    pub(super) fn search_pairs(&self, search: &mut Search, pairs: usize) {
        let bin_hz = LTE_RATE_HZ / ACQ_FFT as f64;
        let Search {
            spectra,
            fold,
            work,
            next,
            best,
        } = search;
        for _ in 0..pairs {
            let root = *next / self.shifts.len();
            let s = self.shifts[*next % self.shifts.len()];
            *next += 1;
            let tmpl = &self.template_spectra[root];
            let eps = self.eps_of_offset(s as f64 * bin_hz);
            let period = HALF_FRAME as f64 * (1.0 + eps);
            fold.iter_mut().for_each(|v| *v = 0.0);
            for (b, spec) in spectra.chunks(ACQ_FFT).enumerate() {
                for (k, w) in work.iter_mut().enumerate() {
                    let t = (k as i64 - s).rem_euclid(ACQ_FFT as i64) as usize;
                    *w = spec[k] * tmpl[t];
                }
                self.ifft512.process(work);
                for (m, c) in work[..ACQ_STEP].iter().enumerate() {
                    let pos = (b * ACQ_STEP + m) as f64;
                    let p = (pos / period).floor();
                    let f = (pos - p * period).round() as usize % HALF_FRAME;
                    fold[f] += c.norm_sqr();
                }
            }
            let mean = fold.iter().map(|&v| f64::from(v)).sum::<f64>() / HALF_FRAME as f64;
            let (idx, peak) =
                fold.iter()
                    .enumerate()
                    .fold((0, 0.0f32), |a, (i, &v)| if v > a.1 { (i, v) } else { a });
            if mean > 0.0 {
                let metric = f64::from(peak) / mean;
                if metric > best.0 {
                    *best = (metric, root, s, idx);
                }
            }
        }
    }

    /// The track a finished search found, if its peak stands out.
    pub(super) fn acquired(&self, search: &Search) -> Option<Track> {
        let bin_hz = LTE_RATE_HZ / ACQ_FFT as f64;
        let (metric, root, s, idx) = search.best;
        tracing::debug!(metric, root, shift = s, idx, "lte acquisition");
        if metric < ACQ_THRESHOLD {
            return None;
        }
        let mix_hz = s as f64 * bin_hz;
        let eps = self.eps_of_offset(mix_hz);
        Some(Track {
            n_id_2: root,
            mix_hz,
            mixed: 0,
            next_n: 0,
            tau0: self.buf_start as f64 + idx as f64,
            period0: HALF_FRAME as f64 * (1.0 + eps),
            fit: LineFit::default(),
            records: Vec::new(),
            processed: 0,
            sss_acc: vec![0.0; 2 * N_ID_1_COUNT],
            sss_acc_tdd: vec![0.0; 2 * N_ID_1_COUNT],
            sss_table: (0..2 * N_ID_1_COUNT)
                .map(|i| sss(i / 2, root, i % 2 == 1).map(f32::from))
                .collect(),
            sss_known: None,
        })
    }
}

//! The mirror-image example of docs/operator.md ("A mirror image") is what
//! `analyze` prints on the scene the page states.
use super::*;

/// The page's scene: 0.2 s at 2 MS/s, a −30 dBFS tone at +200 kHz through 0.5 dB
/// / 3° of IQ imbalance, −45 dBFS of DC and −60 dBFS of noise. `analyze` lists
/// the image 28 dB down at −200 kHz, named as the strong peak's mirror, in the
/// words and figures the page quotes (it quoted an SNR of 33.2 dB where the
/// binary prints 33.4 dB).
#[test]
fn the_docs_mirror_image_example_is_what_analyze_prints() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operator.md"))
            .unwrap();
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    // The page's example line, e.g. `99.800000 MHz -57.9 dBFS SNR 33.4 dB (mirror of …)`.
    let page = words(&page);
    let quoted = page
        .split('`')
        .find(|q| q.starts_with("99.800000 MHz ") && q.contains("(mirror of"))
        .expect("docs/operator.md quotes the image's line")
        .to_owned();
    let n = 400_000usize;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut uni = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (a, g, phi) = (
        10f64.powf(-30.0 / 20.0),
        10f64.powf(0.5 / 20.0),
        3f64.to_radians(),
    );
    let (dc, noise_power) = (10f64.powf(-45.0 / 20.0), 1e-6);
    let x: Vec<(f32, f32)> = (0..n)
        .map(|k| {
            let ph = 2.0 * PI * (200e3 * k as f64 / 2e6).fract();
            let (i, q) = (a * ph.cos(), a * ph.sin());
            let r = (-noise_power * uni().ln()).sqrt();
            let t = 2.0 * PI * uni();
            (
                (i + dc + r * t.cos()) as f32,
                (g * (phi.cos() * q + phi.sin() * i) + r * t.sin()) as f32,
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("iq.cf32");
    std::fs::write(&f, cf32(&x)).unwrap();
    let (code, out, err) = run(&["analyze", f.to_str().unwrap(), "-r", "2M", "-f", "100M"]);
    assert_eq!(code, 0, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("99.800000 MHz"))
        .unwrap_or_else(|| panic!("no image line: {out}"));
    // Same words; the levels within 0.15 dB (a rounding step and a half) (this noise is not the page's noise).
    let (got, want) = (words(line), quoted);
    let (g, w): (Vec<&str>, Vec<&str>) = (got.split(' ').collect(), want.split(' ').collect());
    assert_eq!(g.len(), w.len(), "binary: {got}\npage:   {want}");
    for (a, b) in g.iter().zip(&w) {
        match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => assert!((x - y).abs() <= 0.15, "binary: {got}\npage:   {want}"),
            _ => assert_eq!(a, b, "binary: {got}\npage:   {want}"),
        }
    }
}

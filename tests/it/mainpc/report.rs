//! What the main PC sees of a result: `results show` rendered for a terminal,
//! `--markdown`, `--plot DIR` drawing the node's pictures from the published
//! JSON alone, and `results report --html DIR` opened in a real headless
//! Chromium, checked as HTML by `tidy`, with a hostile node's HTML inert.
use super::*;

/// A YELLOW plan with a CLKIN capture and a three-pass FM-band sweep on the
/// simulated radio: a spectrum, a sweep spectrum and a heatmap to draw.
const PICTURE_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=lab-locked,ext_ref=1,tone_hz=100100000",
   "clock_source": "external", "frequency_hz": 100.0e6, "sample_rate_hz": 1.0e6, "gain_db": 20,
   "duration_s": 0.25, "fft_size": 1024, "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}},
  {"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
   "bin_hz": 10e3, "repeats": 3}
]}"#;

/// A decoded PNG: width, height and RGB(A) pixels.
struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Picture {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut dec = png::Decoder::new(file);
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| match channels {
            1 | 2 => [p[0]; 3],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    Picture {
        width: info.width,
        height: info.height,
        rgb,
    }
}

impl Picture {
    /// The variance of the luminance: 0 for a blank picture.
    fn variance(&self) -> f64 {
        let l: Vec<f64> = self
            .rgb
            .iter()
            .map(|p| 0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2]))
            .collect();
        let m = l.iter().sum::<f64>() / l.len() as f64;
        l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / l.len() as f64
    }

    /// Pixels where blue clearly dominates (the spectrum trace's colour).
    fn blue(&self) -> usize {
        self.rgb
            .iter()
            .filter(|p| p[2] > 150 && p[0] < 90 && p[1] < 120)
            .count()
    }

    /// Distinct colours (a heatmap has many).
    fn colours(&self) -> usize {
        self.rgb
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }
}

/// The node runs the picture plan as `id` and publishes it.
fn run_and_publish(lab: &Lab, node: &Path, id: &str) {
    let plan = lab.plan_file(&format!("{id}.json"), PICTURE_PLAN);
    lab.post(id, &["--rx", "--plan", &plan]);
    approve(node);
    let out = rxnode(node, &["--sim", "run", id], "");
    expect_exit!(out, 0);
    expect_exit!(publish(node, id), 0);
}

/// A capture and a sweep published by a node: the main PC (a separate clone)
/// prints the whole result rendered — aligned tables, no `|---|` — and draws
/// the spectrum, the sweep and its heatmap from the published JSON alone: real
/// PNGs of the node's size with a trace and a colour scale in them.
#[test]
fn show_renders_the_result_and_plots_the_nodes_pictures_from_published_data() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    run_and_publish(&lab, &a, "PIC_1");
    // The published JSON carries the bounded summary, typed as the schema says.
    let published: Value = serde_json::from_str(&git(
        &lab.origin,
        &["show", "rx-node:rx-results/PIC_1/LAB-A/RX_RESULT.json"],
    ))
    .unwrap();
    let spectra = published["pictures"]["spectra"]
        .as_array()
        .expect("spectra");
    assert_eq!(spectra.len(), 2, "{}", published["pictures"]);
    for s in spectra {
        let n = s["max_db"].as_array().unwrap().len();
        assert!((100..=1024).contains(&n), "{n}");
        assert_eq!(s["min_db"].as_array().unwrap().len(), n);
        assert_eq!(s["mean_db"].as_array().unwrap().len(), n);
    }
    assert_eq!(spectra[1]["of"], "sweep");
    assert_eq!(
        published["pictures"]["heatmaps"][0]["rows"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // The independent validator agrees with the schema on the new section.
    let verdicts =
        super::schemas::jsonschema_verdicts(&[("PIC_1".into(), "result", published.clone())]);
    assert!(verdicts[0].1, "{:?}", verdicts[0].2);

    // Rendered for a terminal.
    let out = rxnode(&lab.main, &["results", "show", "PIC_1"], "");
    expect_exit!(out, 0);
    let said = stdout(&out);
    assert!(said.starts_with("PIC_1 from LAB-A: PASS\n"), "{said}");
    assert!(
        !said.contains('|') && !said.contains("---") && !said.contains("<!--"),
        "{said}"
    );
    for want in [
        "Status         PASS",
        "Checks\n──────",
        "CLKIN: PASS",
        "1     100.100000 MHz",
        "Sweep 1",
        "Noise floor",
    ] {
        assert!(said.contains(want), "{want:?} missing:\n{said}");
    }
    assert!(
        !said.contains("! the published files do not verify"),
        "{said}"
    );
    // --markdown: the file as published.
    let out = rxnode(&lab.main, &["results", "show", "PIC_1", "--markdown"], "");
    expect_exit!(out, 0);
    let md = git(
        &lab.origin,
        &["show", "rx-node:rx-results/PIC_1/LAB-A/RX_RESULT.md"],
    );
    assert_eq!(stdout(&out).trim_end(), md.trim_end());

    // --plot DIR on the main PC: the node's three pictures.
    let plots = lab.root.path().join("plots");
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "results",
            "show",
            "PIC_1",
            "--plot",
            plots.to_str().unwrap(),
        ],
        "",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["problems"], json!([]), "{v}");
    let mut names: Vec<String> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["SPECTRUM_1.png", "SWEEP_2.png", "SWEEP_2_heatmap.png"]
    );
    let outbox = a.join(".local/rx_agent_outbox/PIC_1");
    for n in &names {
        let main_pc = decode(&plots.join(n));
        let node = decode(&outbox.join(n));
        assert_eq!(
            (main_pc.width, main_pc.height),
            (node.width, node.height),
            "{n}"
        );
        assert!(
            main_pc.variance() > 100.0,
            "{n}: blank ({})",
            main_pc.variance()
        );
    }
    for n in ["SPECTRUM_1.png", "SWEEP_2.png"] {
        let (m, node) = (decode(&plots.join(n)), decode(&outbox.join(n)));
        // The trace is drawn about as densely as the node drew it. (Not blank: more than
        // 500 trace pixels. rxsim's band edges roll off 50 dB and more (its anti-alias
        // filter), so the level axis is wider than the noise's few dB and the capture's
        // trace, flat across the middle, draws about 630.)
        assert!(
            m.blue() * 2 > node.blue() && m.blue() > 500,
            "{n}: {} trace pixels on the main PC, {} on the node",
            m.blue(),
            node.blue()
        );
    }
    assert!(decode(&plots.join("SWEEP_2_heatmap.png")).colours() > 50);
}

/// A plan whose radio delivers zeros (rxsim's noise below anything a float holds):
/// a capture and a sweep that measured nothing.
const SILENT_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=lab-silent,noise_dbfs=-1000",
   "frequency_hz": 100.0e6, "sample_rate_hz": 1.0e6, "duration_s": 0.1, "fft_size": 1024,
   "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}},
  {"op": "rx_sweep", "device": "driver=rxsim,serial=lab-silent,noise_dbfs=-1000",
   "start_hz": 100e6, "stop_hz": 104e6, "bin_hz": 10e3}
]}"#;

/// All-zero samples through the whole loop: the capture and the sweep FAIL with
/// the floor `null` and the reason; the node's result validates; the main PC's
/// `results show` says `n/a` and draws no picture of nothing — no −300 anywhere.
#[test]
fn a_silent_radio_is_reported_without_a_floor_end_to_end() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let plan = lab.plan_file("SILENT_1.json", SILENT_PLAN);
    lab.post("SILENT_1", &["--rx", "--plan", &plan]);
    approve(&a);
    let out = rxnode(&a, &["--sim", "run", "SILENT_1"], "");
    expect_exit!(out, 1);
    let outbox = a.join(".local/rx_agent_outbox/SILENT_1");
    let out = rxnode(&a, &["validate-result", outbox.to_str().unwrap()], "");
    expect_exit!(out, 0);
    expect_exit!(publish(&a, "SILENT_1"), 0);
    let json = git(
        &lab.origin,
        &["show", "rx-node:rx-results/SILENT_1/LAB-A/RX_RESULT.json"],
    );
    let md = git(
        &lab.origin,
        &["show", "rx-node:rx-results/SILENT_1/LAB-A/RX_RESULT.md"],
    );
    let csv = std::fs::read_to_string(outbox.join("SWEEP_2.csv")).unwrap();
    for (what, text) in [("json", &json), ("md", &md), ("csv", &csv)] {
        assert!(!text.contains("-300"), "{what}:\n{text}");
    }
    let r: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(r["status"], "FAIL");
    let c = &r["captures"][0];
    assert_eq!(c["status"], "FAIL", "{c}");
    assert_eq!(c["noise_floor_db"], Value::Null);
    assert_eq!(c["mean_power_dbfs"], Value::Null);
    assert_eq!(c["peaks"], json!([]));
    assert_eq!(
        c["errors"],
        json!(["noise floor not measured (no signal: every sample is zero)"])
    );
    let sw = &r["sweeps"][0];
    assert_eq!(sw["status"], "FAIL", "{sw}");
    assert_eq!(sw["noise_floor_db"], Value::Null);
    assert_eq!(sw["noise_floor_absent"], "no signal: every sample is zero");
    // The sweep's Markdown says why, as the capture's does.
    assert!(
        md.contains("| Noise floor | n/a (no signal: every sample is zero) |"),
        "{md}"
    );
    assert!(
        md.contains("Noise floor: n/a (no signal: every sample is zero)"),
        "{md}"
    );
    assert!(!md.contains("| n/a |"), "{md}");
    assert!(
        csv.lines()
            .all(|l| l.split(", ").skip(6).all(|v| v == "nan")),
        "{csv}"
    );

    let out = rxnode(&lab.main, &["results", "show", "SILENT_1"], "");
    expect_exit!(out, 0);
    let said = stdout(&out);
    assert!(said.starts_with("SILENT_1 from LAB-A: FAIL\n"), "{said}");
    assert!(
        said.contains("noise floor not measured (no signal"),
        "{said}"
    );
    assert!(
        said.matches("n/a (no signal: every sample is zero)")
            .count()
            >= 2,
        "the capture's and the sweep's floor say why:\n{said}"
    );
    for bad in ["-300", "inf", "NaN"] {
        assert!(!said.contains(bad), "{bad} in:\n{said}");
    }
    let plots = lab.root.path().join("silent-plots");
    let out = rxnode(
        &lab.main,
        &[
            "results",
            "show",
            "SILENT_1",
            "--plot",
            plots.to_str().unwrap(),
        ],
        "",
    );
    expect_exit!(out, 0);
    let drawn: Vec<String> = std::fs::read_dir(&plots)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(drawn.is_empty(), "pictures of nothing: {drawn:?}");
}

/// Headless Chromium from the distribution; missing is a failure, never a skip.
fn chromium() -> &'static str {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c;
        }
    }
    panic!(
        "chromium is not installed: run scripts/setup.sh --tests (it installs chromium and tidy)"
    );
}

/// `chromium --headless` on `page`: its screenshot (decoded) and its DOM as rendered.
fn browse(page: &Path, scratch: &Path, shot: &str, size: &str) -> (Picture, String) {
    let png_path = scratch.join(shot);
    let base = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", scratch.join("profile").display()),
        ]);
    };
    let url = format!("file://{}", page.display());
    let mut c = Command::new(chromium());
    base(&mut c);
    let out = c
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("--window-size={size}"))
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(png_path.exists(), "no screenshot of {url}: {}", show(&out));
    let mut c = Command::new(chromium());
    base(&mut c);
    let out = c
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "{}", show(&out));
    (decode(&png_path), stdout(&out))
}

/// `tidy` finds no error and no warning in `page`.
fn tidy(page: &Path) {
    let out = Command::new("tidy")
        .args(["-q", "-e"])
        .arg(page)
        .output()
        .unwrap_or_else(|e| panic!("tidy is not installed ({e}): run scripts/setup.sh --tests"));
    assert!(out.status.success(), "{}: {}", page.display(), show(&out));
}

/// The fleet site in a real browser: the index lists the node and its results,
/// a result page shows its verdict, its rendered tables and its pictures (drawn:
/// not a blank screenshot), and a result a hostile peer filled with HTML and
/// script shows that text as text — no element of it reaches the DOM — and is
/// marked as not verified. Every page is valid HTML for `tidy`.
#[test]
fn the_fleet_page_opens_in_a_real_browser_and_a_hostile_result_stays_inert() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    run_and_publish(&lab, &a, "PIC_1");
    lab.post("EVIL_1", &[]);
    approve(&a);
    // LAB-A's result of EVIL_1 stays local; a peer with push access publishes a
    // copy of it in which it plants markup, a script and a terminal escape (a
    // first publication: a later change to a published result would make the
    // whole branch untrusted, PIC_1 too).
    expect_exit!(rxnode(&a, &["publish", "EVIL_1"], "PUBLISH EVIL_1\n"), 0);
    let hand = lab.clone_rx_node("hand");
    let dir = hand.join("rx-results/EVIL_1/LAB-A");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["RX_RESULT.md", "RX_RESULT.json", "LOG_META.json"] {
        let out = Command::new("git")
            .arg("-C")
            .arg(&a)
            .args(["show", &format!("rx-node:rx-results/EVIL_1/LAB-A/{f}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        std::fs::write(dir.join(f), &out.stdout).unwrap();
    }
    let md = dir.join("RX_RESULT.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(
        &md,
        format!(
            "{text}\n<script>document.title='pwned'</script>\n\n<img src=x onerror=\"document.title='pwned'\">\n\n\
             [click me](javascript:alert(1)) \u{1b}[2J <b>bold</b> EVIL-MARK\n"
        ),
    )
    .unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-qm", "planted"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    let site = lab.root.path().join("site");
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "results",
            "report",
            "--html",
            site.to_str().unwrap(),
        ],
        "",
    );
    expect_exit!(out, 0);
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            w["results"].as_u64(),
            w["pictures"].as_u64(),
            w["unverified"].as_u64()
        ),
        (Some(2), Some(3), Some(1)),
        "{w}"
    );
    let index = site.join("index.html");
    let pages: Vec<PathBuf> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    for p in &pages {
        tidy(p);
        let html = std::fs::read_to_string(p).unwrap();
        assert!(
            !html.contains('\u{1b}') && !html.contains("<script"),
            "{}",
            p.display()
        );
    }
    let page_of = |id: &str| {
        pages
            .iter()
            .find(|p| p.file_name().unwrap().to_string_lossy().contains(id))
            .unwrap_or_else(|| panic!("no page for {id}: {pages:?}"))
            .clone()
    };
    let scratch = tempfile::tempdir().unwrap();

    // The index: nodes and results.
    let (shot, dom) = browse(&index, scratch.path(), "index.png", "1280,900");
    assert!(shot.variance() > 50.0, "blank index screenshot");
    for want in [
        "RX fleet",
        "LAB-A",
        "silent",
        "PIC_1",
        "EVIL_1",
        "verified",
        "problem(s)",
    ] {
        assert!(dom.contains(want), "{want:?} not in the index DOM:\n{dom}");
    }
    // A result page: verdict, rendered tables, pictures drawn.
    let (shot, dom) = browse(&page_of("PIC_1"), scratch.path(), "result.png", "1280,1400");
    assert!(
        shot.variance() > 300.0,
        "result screenshot: {}",
        shot.variance()
    );
    assert!(
        shot.blue() > 1000,
        "no spectrum trace on the result page: {}",
        shot.blue()
    );
    assert_eq!(dom.matches("<img src=\"r").count(), 3, "{dom}");
    for want in [
        "PIC_1 from LAB-A",
        "PASS",
        "Verified: schema",
        "<table>",
        "CLKIN",
        "Pictures",
    ] {
        assert!(dom.contains(want), "{want:?} not in the result DOM:\n{dom}");
    }
    // The hostile page: its markup is text, nothing of it is an element.
    let (shot, dom) = browse(&page_of("EVIL_1"), scratch.path(), "evil.png", "1280,900");
    // The text as written, without the break opportunities (`<wbr>`) long words are given.
    let dom = dom.replace("<wbr>", "");
    assert!(shot.variance() > 50.0);
    assert!(
        dom.contains("EVIL-MARK") && dom.contains("Does not verify"),
        "{dom}"
    );
    assert!(
        dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"),
        "{dom}"
    );
    assert!(
        !dom.contains("<title>pwned")
            && !dom.contains("<script")
            && !dom.contains("<img src=\"x\""),
        "{dom}"
    );
    assert!(
        !dom.contains("<b>bold") && !dom.contains("href=\"javascript"),
        "{dom}"
    );
    // The terminal never gets the escape either.
    let out = rxnode(&lab.main, &["results", "show", "EVIL_1"], "");
    expect_exit!(out, 0);
    assert!(!out.stdout.contains(&0x1b), "{}", show(&out));
    assert!(
        stdout(&out).contains("! the published files do not verify"),
        "{}",
        show(&out)
    );
}

/// Every text on the fleet pages wraps inside the page: a node's honest manual
/// result with a 200-character title and a 1000-character note, each one word,
/// and a peer's 20 000-character word in a result's Markdown leave the right
/// margin of a 1000-pixel window blank (the heading and the checks table used
/// to run off it), and the words are all there, whole once the `<wbr>` break
/// opportunities are taken out.
#[test]
fn a_long_word_wraps_inside_the_fleet_page_instead_of_widening_it() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let title = "T".repeat(200);
    let note = "N".repeat(1000);
    let out = rxnode(
        &lab.main,
        &[
            "task", "new", "--id", "LONG_1", "--title", &title, "--force",
        ],
        "",
    );
    expect_exit!(out, 0);
    git(&lab.main, &["add", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-m", "task LONG_1"]);
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
    approve(&a);
    let done = rxnode(
        &a,
        &[
            "mark-completed",
            "LONG_1",
            "--status",
            "PASS",
            "--note",
            &note,
        ],
        "",
    );
    expect_exit!(done, 0);
    expect_exit!(publish(&a, "LONG_1"), 0);
    let word = "W".repeat(20_000);
    let hand = lab.clone_rx_node("hand");
    let md = hand.join("rx-results/LONG_1/LAB-A/RX_RESULT.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(
        &md,
        format!("{text}\n{word}\n\n| a | b |\n|---|---|\n| `{word}` | x |\n"),
    )
    .unwrap();
    git(&hand, &["commit", "-qam", "planted"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    let site = lab.root.path().join("site");
    let out = rxnode(
        &lab.main,
        &["results", "report", "--html", site.to_str().unwrap()],
        "",
    );
    expect_exit!(out, 0);
    let page = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("LONG_1_LAB-A.html"))
        .expect("the result's page");
    tidy(&page);
    let html = std::fs::read_to_string(&page).unwrap().replace("<wbr>", "");
    for w in [&title, &note, &word] {
        assert!(
            html.contains(w.as_str()),
            "a {}-character word lost",
            w.len()
        );
    }
    let scratch = tempfile::tempdir().unwrap();
    let (shot, _) = browse(&page, scratch.path(), "long.png", "1000,1400");
    assert_eq!(shot.width, 1000);
    // Dark pixels (text) in the right 12 pixels, inside the body's 16-pixel padding.
    let dark = shot
        .rgb
        .iter()
        .enumerate()
        .filter(|(i, p)| (*i as u32 % shot.width) >= shot.width - 12 && p.iter().all(|c| *c < 100))
        .count();
    assert_eq!(dark, 0, "text runs off a 1000-pixel window");
    assert!(shot.variance() > 50.0, "blank screenshot");
}

//! The source holds exactly one entry into
//! SoapySDR's transmit API — the guarded `tx_stream` call in `hw/src/radio/tx.rs`
//! (inside `TxRadio::transmit_tone`; a `TxRadio` is made only by `RxRadio::into_tx`,
//! which consumes a `TxPermit`) — and exactly one
//! `allow(clippy::disallowed_methods)`, on that call. Only `hw` links soapysdr.
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Strip `//` comments so that prose about `tx_stream` does not count; a
/// string literal spelling it would still count (deliberately strict).
fn code_of(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

#[test]
fn exactly_one_guarded_tx_entry_into_soapysdr() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for d in [
        "src",
        "hw/src",
        "hw/dsp/src",
        "interlock/src",
        "hw/tests",
        "hw/benches",
        "hw/dsp/benches",
        "benches",
    ] {
        rust_files(&root.join(d), &mut files);
    }
    assert!(
        files.iter().any(|p| p.ends_with("hw/src/radio/tx.rs")),
        "scan found no hw/src/radio/tx.rs under {}",
        root.display()
    );
    // A call (method or path) of tx_stream / tx_stream_args, turbofish allowed.
    let call = regex::Regex::new(r"\btx_stream(_args)?\s*(::\s*<[^()]*>)?\s*\(").unwrap();
    let allow = regex::Regex::new(r"allow\s*\(\s*clippy\s*::\s*disallowed_methods").unwrap();
    let mut calls = vec![];
    let mut allows = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let code = code_of(l);
            // A call may be split as `.tx_stream::<T>` on one line and `(` on the next.
            let joined = format!("{code} {}", lines.get(i + 1).map_or("", |n| code_of(n)));
            if call.is_match(code) || (code.contains("tx_stream") && call.is_match(&joined)) {
                calls.push((rel.clone(), i + 1));
            }
            if allow.is_match(code) {
                allows.push((rel.clone(), i + 1));
            }
        }
    }
    assert_eq!(
        calls.len(),
        1,
        "expected exactly one tx_stream call (hw/src/radio/tx.rs); found {calls:?}"
    );
    assert_eq!(calls[0].0, "hw/src/radio/tx.rs", "{calls:?}");
    assert_eq!(
        allows.len(),
        1,
        "expected exactly one allow(clippy::disallowed_methods); found {allows:?}"
    );
    assert_eq!(allows[0].0, "hw/src/radio/tx.rs", "{allows:?}");
    let gap = calls[0].1 as i64 - allows[0].1 as i64;
    assert!(
        (1..=3).contains(&gap),
        "the allow (line {}) must sit right above the call (line {})",
        allows[0].1,
        calls[0].1
    );
    // The guarded call is a method of `TxRadio`, the type only `into_tx(TxPermit)` makes.
    let radio = std::fs::read_to_string(root.join("hw/src/radio/tx.rs")).unwrap();
    let before_call: Vec<&str> = radio.lines().take(calls[0].1).collect();
    let enclosing_impl = before_call
        .iter()
        .rev()
        .find(|l| l.starts_with("impl"))
        .copied()
        .unwrap_or("");
    assert!(
        enclosing_impl.contains("TxRadio"),
        "the tx_stream call is not in `impl TxRadio`: {enclosing_impl:?}"
    );
    assert!(
        radio.contains("pub fn into_tx(self, permit: TxPermit) -> Result<TxRadio, Error>"),
        "TxRadio must be reachable only by consuming a TxPermit"
    );
    // clippy.toml still bans both methods.
    let clippy = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    for m in [
        "soapysdr::Device::tx_stream\"",
        "soapysdr::Device::tx_stream_args\"",
        "soapysdr_sys::SoapySDRDevice_setupStream\"",
        "soapysdr_sys::SoapySDRDevice_writeStream\"",
    ] {
        assert!(clippy.contains(m), "clippy.toml no longer bans {m}");
    }
    // hw links soapysdr-sys directly (version, modules): no raw stream call
    // may bypass the typed door (the lint bans them; this proves none exists).
    let raw =
        regex::Regex::new(r"SoapySDRDevice_(setupStream|writeStream|activateStream)\b").unwrap();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, l) in text.lines().enumerate() {
            assert!(
                !raw.is_match(code_of(l)),
                "{}:{}: raw SoapySDR stream call outside the typed door",
                f.display(),
                i + 1
            );
        }
    }
}

#[test]
fn only_hw_links_soapysdr() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dep = regex::Regex::new(r"(?m)^\s*soapysdr\s*=").unwrap();
    for toml in ["Cargo.toml", "interlock/Cargo.toml", "hw/dsp/Cargo.toml"] {
        let t = std::fs::read_to_string(root.join(toml)).unwrap();
        assert!(!dep.is_match(&t), "{toml} depends on soapysdr");
    }
    let hw = std::fs::read_to_string(root.join("hw/Cargo.toml")).unwrap();
    assert!(
        dep.is_match(&hw),
        "hw/Cargo.toml should be the one soapysdr user"
    );
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("interlock/src"), &mut files);
    rust_files(&root.join("hw/dsp/src"), &mut files);
    for f in files {
        let t = std::fs::read_to_string(&f).unwrap();
        for (i, l) in t.lines().enumerate() {
            assert!(
                !code_of(l).contains("soapysdr::"),
                "{}:{}: soapysdr used outside hw",
                f.display(),
                i + 1
            );
        }
    }
}

/// The permit's one constructor (`authorize`) is called only where a tone is
/// keyed: in the TX guard process (`src/exec/tx_guard.rs`), on every platform; a
/// grant becomes an authorization
/// again only in the guard; the typed phrase is verified only in `run`
/// (docs/safety.md#the-tx-guard-process).
#[test]
fn the_permit_and_the_grant_are_made_and_read_in_one_place_each() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    let rules = [
        (r"\bauthorize\s*\(", &["src/exec/tx_guard.rs"][..]),
        (r"\bverify_tx_grant\s*\(", &["src/exec/tx_guard.rs"][..]),
        (r"\binto_grant\s*\(", &["src/exec/tx.rs"][..]),
        (
            r"\bverify_node_authorization\s*\(",
            &["src/exec/run.rs"][..],
        ),
    ];
    for (pat, allowed) in rules {
        let re = regex::Regex::new(pat).unwrap();
        let mut seen = vec![];
        for f in &files {
            let rel = f.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read_to_string(f).unwrap();
            if text.lines().any(|l| re.is_match(code_of(l))) {
                seen.push(rel);
            }
        }
        seen.sort_unstable();
        for f in &seen {
            assert!(allowed.contains(&f.as_str()), "{pat} called in {f}");
        }
        assert!(!seen.is_empty(), "{pat} is called nowhere");
    }
}

/// `find . -path ./target -prune -o -name '*tx*' -print` lists exactly
/// the files that can key a transmitter — hw's TX handle, the executor's TX
/// orchestration and hw's test that keys the simulated transmitter — and the
/// TX entry points (`into_tx`, `transmit_tone`) are called from no other file.
#[test]
fn the_files_that_can_key_a_transmitter_say_so_in_their_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The files Git tracks: what a clean clone holds (local junk does not count).
    let listed = crate::util::git_stdout(root, &["ls-files", "-z"]);
    let files: Vec<String> = listed
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    let mut named: Vec<&str> = files
        .iter()
        .filter(|f| f.rsplit('/').next().is_some_and(|n| n.contains("tx")))
        .map(String::as_str)
        .collect();
    named.sort_unstable();
    assert_eq!(
        named,
        [
            "hw/src/radio/tx.rs",
            "hw/src/radio/tx_tone.rs",
            "hw/tests/sim_tx.rs",
            "src/exec/tx.rs",
            "src/exec/tx_guard.rs",
            "src/exec/tx_watch.rs"
        ],
        "file names with 'tx' must be exactly the TX-capable files"
    );
    let entry = regex::Regex::new(r"\b(into_tx|transmit_tone\w*)\s*\(").unwrap();
    for f in files.iter().filter(|f| f.ends_with(".rs")) {
        if f.ends_with("source_scan.rs") || named.contains(&f.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        for (i, l) in text.lines().enumerate() {
            let code = code_of(l);
            assert!(
                !entry.is_match(code),
                "{f}:{}: a TX entry point is called from a file whose name does not say tx: {l}",
                i + 1
            );
        }
    }
}

/// Every file the product reads is opened through one door,
/// `rxnode_dsp::open_regular` (hw/dsp/src/regular.rs): it refuses a FIFO, a
/// device or a folder without blocking on it. So no product code (tests aside)
/// calls `std::fs::read`, `std::fs::read_to_string`, `File::open` or opens with
/// `.read(true)` itself — except the ledger's append (opened non-blocking and
/// looked at again, src/store/ledger.rs) and the folder opened to sync a rename
/// (src/store/fsutil.rs).
#[test]
fn every_file_read_goes_through_the_regular_file_door() {
    let (door, found) = door_scan(
        r"\b(fs::read|fs::read_to_string|File::open)\s*\(|\.read\(true\)",
        &[
            ("hw/dsp/src/regular.rs", None),
            ("src/store/ledger.rs", Some(".read(true)")),
            ("src/store/fsutil.rs", Some("File::open(dir)")),
        ],
    );
    assert!(
        door > 0,
        "the door itself (hw/dsp/src/regular.rs) opens no file"
    );
    assert!(
        found.is_empty(),
        "files opened for reading outside rxnode_dsp::open_regular (use it, or \
         crate::store::fsutil::{{read, read_to_string, open}}):\n{}",
        found.join("\n")
    );
}

/// Every file the product writes is opened through one door,
/// `rxnode_dsp::open_regular_write` (hw/dsp/src/regular.rs, and its
/// `write_regular`): opened non-blocking and looked at, so a FIFO, a device,
/// a socket or a folder at an output's name is refused naming it, never waited
/// on (opening a FIFO for writing waits for a reader). So no product code (tests
/// aside) calls `std::fs::write` or `File::create`, or opens with `.write(true)`,
/// `.append(true)`, `.create(true)` or `.create_new(true)` itself — except the
/// ledger's append (opened non-blocking and looked at again, src/store/ledger.rs).
/// The recording streamed to a FIFO opens through the door's `open_fifo_write`.
#[test]
fn every_file_write_goes_through_the_regular_file_door() {
    let (door, found) = door_scan(
        r"\b(fs::write|File::create|File::create_new)\s*\(|\.(write|append|create|create_new)\(true\)",
        &[
            ("hw/dsp/src/regular.rs", None),
            ("src/store/ledger.rs", Some(".append(true)")),
        ],
    );
    assert!(
        door > 0,
        "the write door itself (hw/dsp/src/regular.rs) opens no file"
    );
    assert!(
        found.is_empty(),
        "files opened for writing outside rxnode_dsp::open_regular_write (use it, \
         rxnode_dsp::write_regular, or crate::store::fsutil::{{write_atomic, write_synced}}):\n{}",
        found.join("\n")
    );
}

/// The product's lines (tests aside) that match `pattern`: how many are in a file
/// `allowed` with `None` (the door), and every other one as `file:line: code`,
/// but those in a file `allowed` with `Some(what)` whose code holds `what`.
fn door_scan(pattern: &str, allowed: &[(&str, Option<&str>)]) -> (usize, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for d in ["src", "hw/src", "hw/dsp/src", "interlock/src"] {
        rust_files(&root.join(d), &mut files);
    }
    let open = regex::Regex::new(pattern).unwrap();
    let mut found = vec![];
    let mut door = 0;
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let name = f.file_name().unwrap().to_string_lossy();
        // `test_util.rs`: a module only tests compile (`#[cfg(test)] mod test_util;`).
        if name == "tests.rs"
            || name == "test_util.rs"
            || name.ends_with("_tests.rs")
            || rel.contains("/tests/")
        {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        // Inside an item under `#[cfg(test)]` (or `all(test, …)`): a test module or
        // helper, up to its closing `}` at column 0 (or its `;`).
        let mut in_test = false;
        for (i, l) in text.lines().enumerate() {
            if l.starts_with("#[cfg(") && l.contains("test") && !l.contains("not(test") {
                in_test = true;
                continue;
            }
            if in_test {
                let one_line_item = !l.starts_with([' ', '#', '/']) && l.ends_with(';');
                if l == "}" || one_line_item {
                    in_test = false;
                }
                continue;
            }
            let code = code_of(l);
            if !open.is_match(code) {
                continue;
            }
            match allowed.iter().find(|(a, _)| *a == rel) {
                Some((_, None)) => door += 1,
                Some((_, Some(what))) if code.contains(what) => {}
                _ => found.push(format!("{rel}:{}: {}", i + 1, l.trim())),
            }
        }
    }
    (door, found)
}

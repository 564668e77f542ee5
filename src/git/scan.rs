//! The publication scanner: refuses text that looks like a secret or an
//! absolute local path before it can reach the `rx-node` branch (docs/publishing.md).
//!
//! Findings never echo a whole secret: the excerpt keeps a short prefix and
//! the length, so the refusal message and the ledger stay clean.
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Largest result file accepted for publication (256 KiB).
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Shortest run of base64/hex characters the entropy check looks at.
pub(crate) const MIN_ENTROPY_RUN: usize = 32;
/// Shannon entropy (bits per character) at or above which a pure-hex run is flagged.
pub(crate) const HEX_ENTROPY_BITS: f64 = 3.0;
/// Shannon entropy (bits per character) at or above which a base64-like run is flagged.
pub(crate) const B64_ENTROPY_BITS: f64 = 4.2;

/// One suspicious spot in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// 1-based line.
    pub(crate) line: usize,
    /// What it looks like ("GitHub token", "absolute local path", …).
    pub(crate) kind: &'static str,
    /// A redacted excerpt (prefix and length only).
    pub(crate) excerpt: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {} ({})", self.line, self.kind, self.excerpt)
    }
}

struct Rule {
    kind: &'static str,
    re: Regex,
    /// Capture group holding the offending part (0 = whole match).
    group: usize,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pat: &str, group| Rule {
            kind,
            // The patterns are constants checked by the unit tests.
            re: Regex::new(pat).unwrap_or_else(|e| panic!("bad built-in pattern {pat}: {e}")),
            group,
        };
        vec![
            r("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{20,}", 0),
            r("GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{20,}", 0),
            r("GitLab token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0),
            r("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
            r("Slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0),
            r("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
            r(
                "private key block",
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
                0,
            ),
            r(
                "credentials in a URL",
                r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@",
                0,
            ),
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;:]|file://)(/(?:home|Users|root|tmp|var|mnt|media|srv|opt|data|run|work|scratch|private|Volumes)/[^\s"'`)>\]}]*)"#,
                1,
            ),
            r(
                "absolute local path",
                r#"(?:^|[^A-Za-z0-9_])([A-Za-z]:(?:\\\\|\\|/)[A-Za-z0-9_.$ \-]*)"#,
                1,
            ),
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;:])(\\{2,4}[A-Za-z0-9_.$\-]+\\{1,2}[A-Za-z0-9_.$\-]+)"#,
                1,
            ),
            // An absolute path on any OS, not only under the usual
            // roots: `/etc/…`, `/dev/ttyUSB0`, `~/…`, `~user/…`, `\\server`,
            // `//server/share` (a URL's `scheme://` is not a path).
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;:]|file://)(/[A-Za-z0-9._\-]+(?:/[^\s"'`)>\]}|]*)?)"#,
                1,
            ),
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;:])(~[A-Za-z0-9._\-]*[/\\][^\s"'`)>\]}|]*)"#,
                1,
            ),
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;])(\\{2,4}[A-Za-z0-9_.$\-]+)"#,
                1,
            ),
            r(
                "absolute local path",
                r#"(?:^|[\s"'`(\[{<=,;])(//[A-Za-z0-9_.$\-]+/[^\s"'`)>\]}|]*)"#,
                1,
            ),
        ]
    })
}

fn b64_run() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"[A-Za-z0-9+/=_\-]{32,}").unwrap_or_else(|e| panic!("bad pattern: {e}"))
    })
}

/// Shannon entropy of a string in bits per character.
pub(crate) fn shannon_entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    let mut n = 0usize;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

fn redact(s: &str) -> String {
    let prefix: String = s.chars().take(6).collect();
    format!("{prefix}… {} chars", s.chars().count())
}

/// Whether a run of base64/hex characters looks like a random secret.
///
/// `allowed` holds 64-hex values known to be SHA-256 fields (never flagged);
/// a 40-hex run (a commit id) is never flagged either.
fn high_entropy(run: &str, allowed: &BTreeSet<String>) -> bool {
    let core = run.trim_end_matches('=');
    if core.len() < MIN_ENTROPY_RUN {
        return false;
    }
    // `key=value` (e.g. the result trailer's `json_sha256=<hex>`): judge each side.
    if core.contains('=') {
        return core
            .split('=')
            .filter(|p| !p.is_empty())
            .any(|p| high_entropy(p, allowed));
    }
    let is_hex = core.bytes().all(|b| b.is_ascii_hexdigit());
    if is_hex {
        if core.len() == 40 {
            return false; // a commit id
        }
        if core.len() == 64 && allowed.contains(&core.to_ascii_lowercase()) {
            return false; // a SHA-256 field value
        }
        // Runs of one case only; a mixed-case "hex" run is a base64 string.
        return shannon_entropy(core) >= HEX_ENTROPY_BITS;
    }
    let upper = core.bytes().any(|b| b.is_ascii_uppercase());
    let lower = core.bytes().any(|b| b.is_ascii_lowercase());
    let digit = core.bytes().any(|b| b.is_ascii_digit());
    // Random base64 of this length has all three classes with near certainty;
    // snake_case names, UUIDs and paths made of words do not reach the threshold.
    if [upper, lower, digit].iter().filter(|x| **x).count() < 2 {
        return false;
    }
    // Paths made of words ("rx_iq/TASK/capture_01") are judged per segment.
    if core.contains('/') && core.split('/').all(|seg| seg.len() < MIN_ENTROPY_RUN) {
        let words = core
            .split(['/', '_', '-'])
            .filter(|w| !w.is_empty())
            .count();
        if words >= 4 {
            return false;
        }
    }
    shannon_entropy(core) >= B64_ENTROPY_BITS
}

/// Scan one text. `allowed_sha256` lists lower-case 64-hex values that are
/// legitimately present (SHA-256 fields of the result).
pub(crate) fn scan_text(text: &str, allowed_sha256: &BTreeSet<String>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        for rule in rules() {
            for caps in rule.re.captures_iter(line) {
                if let Some(m) = caps.get(rule.group) {
                    let f = Finding {
                        line: n,
                        kind: rule.kind,
                        excerpt: redact(m.as_str()),
                    };
                    // Several path rules may match one spot: report it once.
                    if !out.contains(&f) {
                        out.push(f);
                    }
                }
            }
        }
        for m in b64_run().find_iter(line) {
            if high_entropy(m.as_str(), allowed_sha256) {
                out.push(Finding {
                    line: n,
                    kind: "high-entropy string (possible secret)",
                    excerpt: redact(m.as_str()),
                });
            }
        }
    }
    out
}

/// Lower-case 64-hex values found under any JSON key containing `sha256`
/// (any case), at any depth.
pub(crate) fn sha256_fields(v: &serde_json::Value) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, under_sha: bool, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    walk(x, k.to_ascii_lowercase().contains("sha256"), out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, under_sha, out)),
            serde_json::Value::String(s)
                if under_sha && s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                out.insert(s.to_ascii_lowercase());
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(v, false, &mut out);
    out
}

/// Check one file's bytes for publication: size, binary content, UTF-8.
/// Returns the text or the problem.
pub(crate) fn check_bytes(name: &str, bytes: &[u8]) -> Result<String, String> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{name} is {} bytes; at most {MAX_FILE_BYTES} (256 KiB) may be published",
            bytes.len()
        ));
    }
    if let Some(pos) = bytes.iter().position(|b| *b == 0) {
        return Err(format!("{name} is binary (NUL byte at offset {pos})"));
    }
    match String::from_utf8(bytes.to_vec()) {
        Ok(t) => {
            if let Some((i, c)) = t
                .char_indices()
                .find(|(_, c)| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
            {
                return Err(format!(
                    "{name} is binary (control character U+{:04X} at offset {i})",
                    c as u32
                ));
            }
            Ok(t)
        }
        Err(e) => Err(format!(
            "{name} is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    fn kinds(text: &str) -> Vec<&'static str> {
        scan_text(text, &none())
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    #[test]
    fn built_in_patterns_compile() {
        assert!(rules().len() >= 10);
        let _ = b64_run();
    }

    #[test]
    fn forge_and_cloud_tokens_are_found() {
        let cases = [
            (
                "token: ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "GitHub token",
            ),
            ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "GitHub token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "GitHub token",
            ),
            ("glpat-xYz12AbCdEfGhIjKlMnO", "GitLab token"),
            ("key AKIAIOSFODNN7EXAMPLE here", "AWS access key"),
            ("xoxb-1234567890-abcdefghij", "Slack token"),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key block"),
            ("-----BEGIN RSA PRIVATE KEY-----", "private key block"),
            ("-----BEGIN PRIVATE KEY-----", "private key block"),
            (
                "remote https://alice:s3cret@git.example.com/x.git",
                "credentials in a URL",
            ),
        ];
        for (text, kind) in cases {
            let k = kinds(text);
            assert!(k.contains(&kind), "{text:?}: expected {kind}, got {k:?}");
        }
    }

    #[test]
    fn findings_never_echo_the_whole_secret() {
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let f = scan_text(secret, &none());
        assert!(!f.is_empty());
        for x in f {
            assert!(!x.to_string().contains(secret), "{x}");
        }
    }

    #[test]
    fn absolute_local_paths_are_found() {
        let cases = [
            "saved to /home/alice/iq/cap.sigmf-data",
            r#"{"path": "/Users/bob/rx/cap.wav"}"#,
            "at /root/.ssh/id_rsa",
            r#"{"path": "C:\\Users\\carol\\cap.wav"}"#,
            r"C:\Users\carol\cap.wav",
            r"share \\labserver\iq\cap.wav",
            r#"{"p": "\\\\labserver\\iq"}"#,
            "file:///home/dave/x",
            "path=/home/erin/x",
            // Any absolute path, on any OS.
            "read /etc/passwd",
            r#"{"device": "/dev/ttyUSB0"}"#,
            r#"{"p": "/etc"}"#,
            "~/iq/cap.wav",
            r#"{"p": "~alice/iq"}"#,
            r#"{"p": "\\\\fileserver"}"#,
            r"at \\fileserver",
            "//labserver/share/x",
            r#"{"p": "D:/iq/cap.wav"}"#,
        ];
        for text in cases {
            assert!(
                kinds(text).contains(&"absolute local path"),
                "{text:?} not flagged"
            );
        }
    }

    #[test]
    fn harmless_result_text_is_not_flagged() {
        let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let mut allowed = BTreeSet::new();
        allowed.insert(sha.to_owned());
        let text = format!(
            r#"{{"schema_version": 1, "task_id": "RX_2026_11_29-clkin_check",
"source_commit": "3f2a9c1d4e5b6a7980f1e2d3c4b5a69788796a5b",
"expected_head": "0123456789ABCDEF0123456789abcdef01234567",
"files": [{{"path": "rx_iq/RX_2026_11_29-clkin_check/capture_01.sigmf-data", "sha256": "{sha}", "bytes": 8000000}}],
"device": "driver=hackrf,serial=0000000000000000457863c82b2d5a2f",
"run_id": "123e4567-e89b-12d3-a456-426614174000",
"timeline": {{"started_at": "2026-11-29T22:39:40+00:00"}},
"check": "clock_check_external_reference_locked_ok",
"note": "see https://example.com/home/page and rx-results/home/x; ratio 10/20",
"url": "https://github.com/example/repo/blob/main/docs/handoff/NEXT_RX_TASK.md",
"path2": "rx_iq/RX_2026_11_29_A/capture_01_100MHz_2Msps/part_0001",
"version": "rxnode 0.1.0 (SoapySDR 0.8.1-ge6ea4b8a)"}}
| {sha} | capture_01.sigmf-data |
Source commit 3f2a9c1d4e5b6a7980f1e2d3c4b5a69788796a5b, status PASS.
"#
        );
        let f = scan_text(&text, &allowed);
        assert!(f.is_empty(), "false positives: {f:?}");
    }

    #[test]
    fn unknown_sha256_looking_values_are_judged_by_entropy() {
        // A 64-hex value that is not a sha256 field of the result is flagged.
        let hex64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(!scan_text(&format!("api_secret = {hex64}"), &none()).is_empty());
        // …and a low-entropy one (padding) is not.
        let pad = "0".repeat(64);
        assert!(scan_text(&format!("x {pad}"), &none()).is_empty());
    }

    #[test]
    fn random_base64_and_hex_secrets_are_found() {
        let cases = [
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "token: Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u",
            "secret 5f4dcc3b5aa765d61d8327deb882cf99",
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
        ];
        for text in cases {
            let k = kinds(text);
            assert!(
                k.contains(&"high-entropy string (possible secret)"),
                "{text:?}: {k:?}"
            );
        }
    }

    #[test]
    fn entropy_figures() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-12);
        assert!((shannon_entropy("0123456789abcdef") - 4.0).abs() < 1e-12);
    }

    #[test]
    fn sha256_fields_are_collected_at_any_depth() {
        let v: serde_json::Value = serde_json::json!({
            "approval": {"task_sha256": "AB".repeat(32)},
            "captures": [{"files": [{"sha256": "cd".repeat(32), "other": "ef".repeat(32)}]}],
            "sha256": "short"
        });
        let s = sha256_fields(&v);
        assert!(s.contains(&"ab".repeat(32)));
        assert!(s.contains(&"cd".repeat(32)));
        assert!(!s.contains(&"ef".repeat(32)));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn byte_checks() {
        assert!(check_bytes("a", b"hello\n").is_ok());
        assert!(check_bytes("a", b"he\0llo").unwrap_err().contains("binary"));
        assert!(check_bytes("a", &[0x66, 0xff, 0x66])
            .unwrap_err()
            .contains("not UTF-8"));
        assert!(check_bytes("a", b"x\x1by").unwrap_err().contains("control"));
        let big = vec![b'a'; MAX_FILE_BYTES as usize + 1];
        assert!(check_bytes("a", &big).unwrap_err().contains("256 KiB"));
        let edge = vec![b'a'; MAX_FILE_BYTES as usize];
        assert!(check_bytes("a", &edge).is_ok());
    }
}

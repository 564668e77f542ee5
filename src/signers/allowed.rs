//! Git's allowed-signers format (`gpg.ssh.allowedSignersFile`, ssh-keygen(1)
//! "ALLOWED SIGNERS"): one signer a line,
//! `principals [options] keytype base64-key [comment]`; `#` comments and blank
//! lines are skipped. Options: `namespaces="git,…"`, `valid-after=`,
//! `valid-before=` (`YYYYMMDD[HHMM[SS]]`, `Z` for UTC, else local time) and
//! `cert-authority` (read, but no certificate signature is accepted: see
//! docs/decisions.md).
use ssh_key::{HashAlg, PublicKey};

/// The largest allowed-signers file read (bytes).
pub(crate) const MAX_FILE_BYTES: usize = 1024 * 1024;

/// One signer line.
#[derive(Debug, Clone)]
pub(crate) struct Signer {
    /// 1-based line in the file.
    pub(crate) line: usize,
    /// The principals field as written (comma-separated patterns).
    pub(crate) principals: String,
    /// `namespaces="…"`: the patterns; `None`: every namespace.
    pub(crate) namespaces: Option<Vec<String>>,
    /// `valid-after=` as Unix seconds.
    pub(crate) valid_after: Option<i64>,
    /// `valid-before=` as Unix seconds.
    pub(crate) valid_before: Option<i64>,
    /// `cert-authority`: the key signs certificates, never a commit itself.
    pub(crate) cert_authority: bool,
    /// The key.
    pub(crate) key: PublicKey,
}

impl Signer {
    /// `SHA256:…` of the key.
    pub(crate) fn fingerprint(&self) -> String {
        self.key.fingerprint(HashAlg::Sha256).to_string()
    }

    /// Whether `namespace` is allowed for this key.
    pub(crate) fn allows_namespace(&self, namespace: &str) -> bool {
        match &self.namespaces {
            None => true,
            Some(list) => {
                let mut ok = false;
                for p in list {
                    if let Some(neg) = p.strip_prefix('!') {
                        if pattern_match(neg, namespace) {
                            return false;
                        }
                    } else if pattern_match(p, namespace) {
                        ok = true;
                    }
                }
                ok
            }
        }
    }

    /// The line as the file holds it (options in a canonical order).
    pub(crate) fn to_line(&self) -> String {
        let mut opts = Vec::new();
        if self.cert_authority {
            opts.push("cert-authority".to_owned());
        }
        if let Some(ns) = &self.namespaces {
            opts.push(format!("namespaces=\"{}\"", ns.join(",")));
        }
        for (name, t) in [
            ("valid-after", self.valid_after),
            ("valid-before", self.valid_before),
        ] {
            if let Some(t) = t {
                opts.push(format!("{name}={}Z", format_time(t)));
            }
        }
        let mut s = self.principals.clone();
        if !opts.is_empty() {
            s.push(' ');
            s.push_str(&opts.join(","));
        }
        let key = self
            .key
            .to_openssh()
            .unwrap_or_else(|_| "(unencodable key)".to_owned());
        s.push(' ');
        s.push_str(&key);
        s
    }
}

/// `*` and `?` wildcards, as ssh's `match_pattern`.
pub(crate) fn pattern_match(pattern: &str, s: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some((b'?', rest)) => !s.is_empty() && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pattern.as_bytes(), s.as_bytes())
}

/// Split a line into fields: whitespace separates, `"…"` groups (the quotes
/// are kept inside an option's value, dropped around a whole field).
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            c => {
                cur.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return Err("unterminated quote".to_owned());
    }
    if started {
        out.push(cur);
    }
    Ok(out)
}

/// Whether a field names an SSH key type.
fn is_key_type(s: &str) -> bool {
    s.starts_with("ssh-") || s.starts_with("ecdsa-sha2-") || s.starts_with("sk-")
}

/// `YYYYMMDD[HHMM[SS]][Z]` as Unix seconds (local time without `Z`).
pub(crate) fn parse_time(v: &str) -> Result<i64, String> {
    let (digits, utc) = match v.strip_suffix(['Z', 'z']) {
        Some(d) => (d, true),
        None => (v, false),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 14].contains(&digits.len()) {
        return Err(format!("{v:?} is not a time YYYYMMDD[HHMM[SS]][Z]"));
    }
    let n = |a: usize, b: usize| {
        digits
            .get(a..b)
            .and_then(|x| x.parse::<u32>().ok())
            .unwrap_or(0)
    };
    let year = digits
        .get(0..4)
        .and_then(|x| x.parse::<i32>().ok())
        .unwrap_or(0);
    let bad = || format!("{v:?} is not a valid date and time");
    let month =
        time::Month::try_from(u8::try_from(n(4, 6)).map_err(|_| bad())?).map_err(|_| bad())?;
    let date =
        time::Date::from_calendar_date(year, month, u8::try_from(n(6, 8)).map_err(|_| bad())?)
            .map_err(|_| bad())?;
    let hms = time::Time::from_hms(
        u8::try_from(n(8, 10)).map_err(|_| bad())?,
        u8::try_from(n(10, 12)).map_err(|_| bad())?,
        u8::try_from(n(12, 14)).map_err(|_| bad())?,
    )
    .map_err(|_| bad())?;
    let offset = if utc {
        time::UtcOffset::UTC
    } else {
        time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC)
    };
    Ok(time::PrimitiveDateTime::new(date, hms)
        .assume_offset(offset)
        .unix_timestamp())
}

/// Unix seconds as `YYYYMMDDHHMMSS` (UTC).
pub(crate) fn format_time(t: i64) -> String {
    match time::OffsetDateTime::from_unix_timestamp(t) {
        Ok(d) => format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second()
        ),
        Err(_) => t.to_string(),
    }
}

/// The options of one line, before the key is read.
#[derive(Default)]
struct Options {
    namespaces: Option<Vec<String>>,
    valid_after: Option<i64>,
    valid_before: Option<i64>,
    cert_authority: bool,
}

/// Parse one non-comment line (1-based `line`); the error names the line and field.
pub(crate) fn parse_line(line: usize, text: &str) -> Result<Signer, String> {
    let f = fields(text).map_err(|e| format!("line {line}: {e}"))?;
    let Some(principals) = f.first() else {
        return Err(format!("line {line}: empty"));
    };
    if principals.is_empty() || is_key_type(principals) {
        return Err(format!(
            "line {line}: the first field must be the principals (e.g. an email), got {principals:?}"
        ));
    }
    let mut i = 1;
    let mut o = Options::default();
    if let Some(opts) = f.get(1).filter(|o| !is_key_type(o)) {
        i = 2;
        parse_options(line, opts, &mut o)?;
    }
    let (Some(kt), Some(b64)) = (f.get(i), f.get(i + 1)) else {
        return Err(format!(
            "line {line}: expected `principals [options] key-type base64-key`, got {} field(s)",
            f.len()
        ));
    };
    if !is_key_type(kt) {
        return Err(format!("line {line}: {kt:?} is not an SSH key type"));
    }
    let key = PublicKey::from_openssh(&format!("{kt} {b64}"))
        .map_err(|e| format!("line {line}: the {kt} key cannot be read: {e}"))?;
    Ok(Signer {
        line,
        principals: principals.clone(),
        namespaces: o.namespaces,
        valid_after: o.valid_after,
        valid_before: o.valid_before,
        cert_authority: o.cert_authority,
        key,
    })
}

/// The options field (its quotes removed): comma-separated; the value of
/// `namespaces=` holds commas itself, so it runs up to the next known option.
fn parse_options(line: usize, opts: &str, o: &mut Options) -> Result<(), String> {
    const NEXT: [&str; 4] = [
        ",valid-after=",
        ",valid-before=",
        ",cert-authority",
        ",namespaces=",
    ];
    let mut rest = opts;
    while !rest.is_empty() {
        let (name, after) = match rest.find(['=', ',']) {
            Some(k) if rest.as_bytes().get(k) == Some(&b'=') => (&rest[..k], &rest[k + 1..]),
            Some(k) => (&rest[..k], &rest[k..]),
            None => (rest, ""),
        };
        let name_lc = name.to_ascii_lowercase();
        let end = if name_lc == "namespaces" {
            let lc = after.to_ascii_lowercase();
            NEXT.iter()
                .filter_map(|m| lc.find(m))
                .min()
                .unwrap_or(after.len())
        } else {
            after.find(',').unwrap_or(after.len())
        };
        let value = &after[..end];
        match name_lc.as_str() {
            "cert-authority" => o.cert_authority = true,
            "namespaces" => {
                let list: Vec<String> = value
                    .split(',')
                    .map(|x| x.trim().to_owned())
                    .filter(|x| !x.is_empty())
                    .collect();
                if list.is_empty() {
                    return Err(format!("line {line}: namespaces= is empty"));
                }
                o.namespaces = Some(list);
            }
            "valid-after" => {
                o.valid_after =
                    Some(parse_time(value).map_err(|e| format!("line {line}: valid-after: {e}"))?)
            }
            "valid-before" => {
                o.valid_before =
                    Some(parse_time(value).map_err(|e| format!("line {line}: valid-before: {e}"))?)
            }
            _ => {
                return Err(format!(
                    "line {line}: unknown option {name:?} (known: cert-authority, namespaces=, valid-after=, valid-before=)"
                ))
            }
        }
        let tail = &after[end..];
        rest = tail.strip_prefix(',').unwrap_or(tail);
    }
    Ok(())
}

/// Parse a whole file; the first bad line is an error naming it.
pub(crate) fn parse(text: &str) -> Result<Vec<Signer>, String> {
    if text.len() > MAX_FILE_BYTES {
        return Err(format!("{} bytes; at most {MAX_FILE_BYTES}", text.len()));
    }
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        out.push(parse_line(i + 1, t)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ4bm9kZS10ZXN0LWtleS0wMDAwMDAwMDAwMDAwMDAw";

    #[test]
    fn lines_with_and_without_options_are_read() {
        let text = format!(
            "# comment\n\nalice@lab.example {KEY} alice\n\
             bob@lab.example,*@ops.example namespaces=\"git,file\",valid-after=20250101,valid-before=\"20300101120000Z\" {KEY}\n\
             \"carol@lab.example\" cert-authority {KEY}\n"
        );
        let s = parse(&text).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].line, 3);
        assert_eq!(s[0].principals, "alice@lab.example");
        assert!(s[0].namespaces.is_none() && s[0].allows_namespace("git"));
        assert_eq!(
            s[1].namespaces.as_deref(),
            Some(&["git".to_owned(), "file".to_owned()][..])
        );
        assert!(s[1].allows_namespace("git") && !s[1].allows_namespace("other"));
        assert_eq!(s[1].valid_before, Some(1_893_499_200));
        assert!(s[1].valid_after.is_some());
        assert!(s[2].cert_authority);
        assert!(s[0].fingerprint().starts_with("SHA256:"));
        // What `add` writes reads back the same.
        let again = parse_line(1, &s[1].to_line()).unwrap();
        assert_eq!(again.namespaces, s[1].namespaces);
        assert_eq!(again.valid_before, s[1].valid_before);
        assert_eq!(again.key.key_data(), s[1].key.key_data());
    }

    #[test]
    fn bad_lines_are_named() {
        for (line, want) in [
            (KEY.to_owned(), "principals"),
            ("alice@lab.example".to_owned(), "expected"),
            (
                "alice@lab.example ssh-ed25519 !!!notbase64".to_owned(),
                "cannot be read",
            ),
            (
                format!("alice@lab.example bogus=1 {KEY}"),
                "unknown option \"bogus\"",
            ),
            (
                format!("alice@lab.example valid-before=2030 {KEY}"),
                "valid-before",
            ),
            (
                format!("alice@lab.example valid-before=20301345 {KEY}"),
                "valid-before",
            ),
            (
                format!("alice@lab.example namespaces=\"git {KEY}"),
                "unterminated quote",
            ),
            (
                format!("alice@lab.example namespaces=\"\" {KEY}"),
                "namespaces= is empty",
            ),
        ] {
            let e = parse(&format!("# x\n{line}\n")).unwrap_err();
            assert!(
                e.starts_with("line 2:") && e.contains(want),
                "{line:?}: {e}"
            );
        }
        assert!(parse(&"#".repeat(MAX_FILE_BYTES + 1))
            .unwrap_err()
            .contains("at most"));
    }

    #[test]
    fn patterns_and_negations() {
        assert!(pattern_match("*@lab.example", "alice@lab.example"));
        assert!(pattern_match("g?t", "git"));
        assert!(!pattern_match("g?t", "gt"));
        let s = parse_line(1, &format!("a namespaces=\"*,!git\" {KEY}")).unwrap();
        assert!(!s.allows_namespace("git") && s.allows_namespace("file"));
    }
}

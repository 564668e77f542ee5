//! Absolute paths in a result: finding them (the validator refuses any) and
//! withholding them (rxnode never writes a result its validator refuses);
//! docs/safety.md#honest-results.
use serde_json::Value;
use std::path::Path;

/// What stands in a result for an absolute path rxnode could not make relative.
pub(crate) const PATH_WITHHELD: &str = "<path outside the checkout withheld>";

/// Make every string of `result` free of absolute paths, as its validator demands
/// (a driver's or the OS's message names files absolutely): paths under the
/// checkout become relative to it, any other absolute path is replaced by
/// [`PATH_WITHHELD`]. Returns how many strings were changed.
pub(crate) fn withhold_absolute_paths(result: &mut Value, checkout: &Path) -> usize {
    let mut roots: Vec<String> = Vec::new();
    for p in [checkout.canonicalize().ok(), Some(checkout.to_path_buf())]
        .into_iter()
        .flatten()
    {
        let mut r = p.display().to_string();
        if !r.ends_with(std::path::MAIN_SEPARATOR) {
            r.push(std::path::MAIN_SEPARATOR);
        }
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    // The longest root first, so a canonical prefix is not cut in the middle.
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let mut changed = 0;
    scrub(result, &roots, &mut changed);
    changed
}

fn scrub(x: &mut Value, roots: &[String], changed: &mut usize) {
    match x {
        Value::String(s) => {
            let mut t = s.clone();
            for r in roots {
                t = t.replace(r.as_str(), "");
            }
            // Bounded: each pass removes one absolute word.
            for _ in 0..64 {
                let Some(p) = absolute_path_in(&t).map(str::to_owned) else {
                    break;
                };
                t = t.replacen(&p, PATH_WITHHELD, 1);
            }
            if t != *s {
                *s = t;
                *changed += 1;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|e| scrub(e, roots, changed)),
        Value::Object(o) => o.values_mut().for_each(|e| scrub(e, roots, changed)),
        _ => {}
    }
}

/// The first word of `s` that is an absolute path on some OS: `/name…` (unix),
/// `X:\…` or `X:/…` (a Windows drive), `\\\\server…` (UNC), `~/…` or
/// `~user/…` (a home folder), each also after `file:`. Words are split at white
/// space and quoting/punctuation, not at `:`, so `https://…` URLs and ratios
/// (`S/s`, `10/20`) are not paths; a path starts with a name character after its
/// root, so a lone `/` or `\\\\` in prose is not one either.
pub(crate) fn absolute_path_in(s: &str) -> Option<&str> {
    fn name_char(c: char) -> bool {
        c.is_ascii_alphanumeric() || "._-$".contains(c)
    }
    s.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;=|".contains(c))
        .find(|w| {
            let w =
                match w.strip_prefix("file:") {
                    // `file:///home/x`, `file://host/share`: the part after `//`.
                    Some(rest) => rest.strip_prefix("//").map_or(rest, |r| {
                        if r.starts_with('/') {
                            r
                        } else {
                            rest
                        }
                    }),
                    None => w,
                };
            let mut cs = w.chars();
            let (c0, c1, c2) = (cs.next(), cs.next(), cs.next());
            match (c0, c1, c2) {
                // `/etc`, `/home/x`, `//server/share`
                (Some('/'), Some(c), _) if c.is_alphanumeric() || "._-~".contains(c) => true,
                (Some('/'), Some('/'), Some(c)) if name_char(c) => true,
                // `\\server\share`
                (Some('\\'), Some('\\'), Some(c)) if name_char(c) => true,
                // `C:\x`, `C:/x`
                (Some(d), Some(':'), Some('\\' | '/')) if d.is_ascii_alphabetic() => true,
                // `~/x`, `~alice/x`
                (Some('~'), _, _) => w[1..]
                    .find(['/', '\\'])
                    .is_some_and(|i| w[1..1 + i].chars().all(name_char)),
                _ => false,
            }
        })
}

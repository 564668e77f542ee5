//! Fields of a JSON value read by path: the ledger's lines, a result's
//! sections, what the main PC reads back.
use serde_json::Value;

/// The value at `path` (object keys, outermost first) under `v`.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.get(*k))
}

/// The string at `path` under `v`, if it is one.
pub(crate) fn str_of<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path)?.as_str()
}

/// The finite number at `path` under `v`, if it is one.
pub(crate) fn num_of(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)?.as_f64().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_read_by_path_and_only_with_their_type() {
        let v = json!({"a": {"b": "x", "n": 1.5}, "s": "top", "arr": ["y"]});
        assert_eq!(str_of(&v, &["s"]), Some("top"));
        assert_eq!(str_of(&v, &["a", "b"]), Some("x"));
        assert_eq!(str_of(&v, &["a", "n"]), None);
        assert_eq!(str_of(&v, &["a", "missing"]), None);
        assert_eq!(str_of(&v, &["arr", "0"]), None);
        assert_eq!(num_of(&v, &["a", "n"]), Some(1.5));
        assert_eq!(num_of(&v, &["a", "b"]), None);
        assert_eq!(at(&v, &[]), Some(&v));
    }
}

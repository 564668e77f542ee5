//! The gain as the operator writes it: dB, or per element.
use rxnode_interlock::GainSpec;
use std::collections::BTreeMap;

/// Parse a gain as typed: a number, `LNA=24,VGA=20`, or a JSON object. A
/// refusal is what follows the field's name (`gain_db`): `" \"loud\": expected …"`.
pub(crate) fn parse_gain(s: &str) -> Result<GainSpec, String> {
    let t = s.trim();
    if let Ok(g) = t.parse::<f64>() {
        return Ok(GainSpec::Total(g));
    }
    if t.starts_with('{') {
        return serde_json::from_str::<GainSpec>(t).map_err(|e| format!(" {t:?}: {e}"));
    }
    let mut m = BTreeMap::new();
    for part in t.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                " {t:?}: expected a number of dB or ELEMENT=DB[,ELEMENT=DB…] (e.g. LNA=24,VGA=20)"
            ));
        };
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!(" {t:?}: {:?} is not a number of dB", v.trim()))?;
        if m.insert(k.trim().to_owned(), v).is_some() {
            return Err(format!(" {t:?}: element {:?} given twice", k.trim()));
        }
    }
    Ok(GainSpec::Elements(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_flag_forms() {
        assert_eq!(parse_gain("20").unwrap(), GainSpec::Total(20.0));
        assert_eq!(
            parse_gain("LNA=24, VGA=20").unwrap(),
            GainSpec::Elements([("LNA".into(), 24.0), ("VGA".into(), 20.0)].into())
        );
        assert_eq!(parse_gain(r#"{"LNA": 8}"#).unwrap().total(), 8.0);
        assert!(parse_gain("LNA=x").unwrap_err().contains("not a number"));
        assert!(parse_gain("loud").unwrap_err().contains("ELEMENT=DB"));
        assert!(parse_gain("LNA=1,LNA=2").unwrap_err().contains("twice"));
    }
}

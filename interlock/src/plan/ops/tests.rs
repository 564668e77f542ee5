//! The op table walked: every op parses its example, refuses its bad example
//! naming the field, is described, has a schema with its op, and needs what
//! the header conflicts say.
use super::*;
use crate::testutil::*;

/// A header with RISK_LEVEL = RED (its plan fence on line 15), around one step.
fn task_of(step: &str, hw: &str, rx: &str, tx: &str) -> String {
    let f = set(fields(hw, rx, tx), "RISK_LEVEL", Some("RED"));
    render(&f, &plan(&format!(r#"{{"steps": [{step}]}}"#)))
}

#[test]
fn every_op_parses_its_example_and_describes_it() {
    assert_eq!(OPS.len(), 7);
    for op in OPS {
        let t = ok(&task_of(op.example, "YES", "YES", "YES"));
        let steps = &t.plan().expect("a plan").steps;
        assert_eq!(steps.len(), 1, "{}", op.name);
        let s = &steps[0];
        assert_eq!(s.op(), op.name);
        assert_eq!(s.needs(), op.needs, "{}", op.name);
        // The enum's serde name is the table's op name.
        let v = serde_json::to_value(s).expect("a step serializes");
        assert_eq!(v["op"], op.name, "{}", op.name);
        let line = s.describe();
        assert!(line.contains(op.name), "{}: {line}", op.name);
        assert!(!line.contains('\u{1b}'), "{line}");
        assert!(!op.about.is_empty(), "{}", op.name);
    }
}

#[test]
fn every_op_refuses_its_bad_example_naming_the_field() {
    for op in OPS {
        let (bad, field) = op.bad_example;
        let e = errs(&task_of(bad, "YES", "YES", "YES"));
        assert_eq!(
            e.first().and_then(|i| i.field.as_deref()),
            Some(field),
            "{}: {e:?}",
            op.name
        );
        assert!(
            e[0].message.starts_with("rx-plan step 1"),
            "{}: {e:?}",
            op.name
        );
    }
}

#[test]
fn every_op_needs_what_the_header_must_allow() {
    for op in OPS {
        let e = errs(&task_of(op.example, "NO", "NO", "NO"));
        has(&e, Some(15), Some("HARDWARE_ACCESS"), op.name);
        let want = match op.needs {
            Needs::Hardware => None,
            Needs::Receive => Some("RF_RX"),
            Needs::Transmit => Some("RF_TX"),
        };
        for flag in ["RF_RX", "RF_TX"] {
            let named = e.iter().any(|i| i.field.as_deref() == Some(flag));
            assert_eq!(named, want == Some(flag), "{} {flag}: {e:?}", op.name);
        }
    }
}

#[test]
fn every_op_is_in_the_generated_schemas() {
    let plan = crate::plan_schema();
    let names: Vec<&str> = OPS.iter().map(|o| o.name).collect();
    assert_eq!(
        plan["$defs"]["step"]["properties"]["op"]["enum"],
        serde_json::json!(names)
    );
    for op in OPS {
        let def = &plan["$defs"][format!("step_{}", op.name)];
        assert_eq!(def["properties"]["op"]["const"], op.name);
        assert_eq!(def["required"][0], "op");
        assert_eq!(def["additionalProperties"], false, "{}", op.name);
        assert_eq!(def["description"], op.about);
    }
    let task = crate::task_schema();
    let hw_rule = &task["allOf"][2]["then"]["properties"]["plan"]["anyOf"][1];
    assert_eq!(
        hw_rule["properties"]["steps"]["items"]["not"]["properties"]["op"]["enum"],
        serde_json::json!(names)
    );
    assert_eq!(task["$defs"], plan["$defs"]);
}

/// A step serializes as the plan writes its op (`inventory` has no other field).
#[test]
fn a_step_serializes_with_its_op() {
    let s = Step::Inventory(crate::InventoryStep {});
    assert_eq!(
        serde_json::to_string(&s).expect("json"),
        r#"{"op":"inventory"}"#
    );
}

#[test]
fn an_unknown_op_names_every_known_one() {
    let e = errs(&task_of(r#"{"op": "reflash"}"#, "YES", "YES", "YES"));
    has(
        &e,
        Some(15),
        Some("op"),
        "(known: inventory, clock_check, rx_capture, rx_sweep, tx_tone, clkin_compare, freq_cal)",
    );
}

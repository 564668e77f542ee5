//! The task-file parser on arbitrary bytes: header, BOM/CRLF, UTF-8, the
//! rx-plan block and the cross-checks. Must never panic; whatever validates
//! must be self-consistent.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rxnode_interlock::{
    required_phrase, sha256_hex, validate_task_bytes, RiskLevel, ValidateOptions,
};

fuzz_target!(|data: &[u8]| {
    let opts = ValidateOptions::default();
    match validate_task_bytes(data, &opts) {
        Ok(t) => {
            // A valid task is what it says it is.
            assert_eq!(t.sha256(), sha256_hex(data));
            assert_eq!(t.header().source_branch, opts.watched_branch);
            let tx = t.plan().is_some_and(|p| {
                p.steps
                    .iter()
                    .any(|s| matches!(s, rxnode_interlock::Step::TxTone(_)))
            });
            if tx {
                assert_eq!(t.risk(), RiskLevel::Red, "a TX plan that is not RED");
            }
            if t.risk() == RiskLevel::Red {
                assert!(required_phrase(&t).is_some(), "RED without a phrase");
            }
        }
        Err(issues) => {
            assert!(!issues.is_empty(), "rejected without a reason");
            for i in &issues {
                let _ = i.to_string();
            }
        }
    }
});

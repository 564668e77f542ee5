use serde::{Deserialize, Serialize};
use std::fmt;

/// Safety level of a task (docs/safety.md). Ordered: `Green < Yellow < Red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RiskLevel {
    /// Software only.
    Green,
    /// Inventory, clock, gain, bounded RX.
    Yellow,
    /// Transmission, firmware, drivers, destructive work.
    Red,
}

impl RiskLevel {
    /// The protocol spelling: `GREEN`, `YELLOW` or `RED`.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Green => "GREEN",
            RiskLevel::Yellow => "YELLOW",
            RiskLevel::Red => "RED",
        }
    }

    /// Parse the protocol spelling (exact, upper case).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "GREEN" => Some(RiskLevel::Green),
            "YELLOW" => Some(RiskLevel::Yellow),
            "RED" => Some(RiskLevel::Red),
            _ => None,
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Derive the minimum risk from the header flags, with the reasons.
///
/// `RF_TX = YES` ⇒ RED; `HARDWARE_ACCESS` or `RF_RX = YES` ⇒ at least YELLOW;
/// otherwise GREEN.
pub fn derive_risk(hardware_access: bool, rf_rx: bool, rf_tx: bool) -> (RiskLevel, Vec<String>) {
    let mut reasons = Vec::new();
    let mut level = RiskLevel::Green;
    if rf_tx {
        reasons.push("RF_TX = YES (transmission) => RED".to_owned());
        level = RiskLevel::Red;
    }
    if rf_rx {
        reasons.push("RF_RX = YES => at least YELLOW".to_owned());
        level = level.max(RiskLevel::Yellow);
    }
    if hardware_access {
        reasons.push("HARDWARE_ACCESS = YES => at least YELLOW".to_owned());
        level = level.max(RiskLevel::Yellow);
    }
    if reasons.is_empty() {
        reasons.push("no hardware access => GREEN".to_owned());
    }
    (level, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn table() {
        assert_eq!(derive_risk(false, false, false).0, RiskLevel::Green);
        assert_eq!(derive_risk(true, false, false).0, RiskLevel::Yellow);
        assert_eq!(derive_risk(true, true, false).0, RiskLevel::Yellow);
        assert_eq!(derive_risk(true, false, true).0, RiskLevel::Red);
        assert_eq!(derive_risk(true, true, true).0, RiskLevel::Red);
    }

    proptest! {
        #![proptest_config(crate::testutil::proptest_config(256, "risk"))]
        /// Turning any flag on never lowers the derived risk.
        #[test]
        fn monotone(h in any::<bool>(), r in any::<bool>(), t in any::<bool>(), which in 0usize..3) {
            let base = derive_risk(h, r, t).0;
            let (h2, r2, t2) = match which { 0 => (true, r, t), 1 => (h, true, t), _ => (h, r, true) };
            prop_assert!(derive_risk(h2, r2, t2).0 >= base);
        }
    }
}

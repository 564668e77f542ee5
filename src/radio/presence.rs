//! Whether a radio is on this machine at all: no such radio is no health failure
//! (docs/hardware.md).

/// What to do when no radio answers to the args at all: a missing module or a
/// forgotten `--sim`, never a radio fault (docs/hardware.md).
pub(crate) fn absent_fix() -> &'static str {
    if rxnode_hw::sim_in_use() {
        "fix: only the simulated radio rxsim is loaded (--sim / RXNODE_SIM); name it \
         `driver=rxsim`, or drop --sim to use real radios"
    } else {
        "fix: install the SoapySDR module for this radio (docs/hardware.md) and check it \
         with `rxnode inventory --dry-run`; the simulated radio rxsim is selected with \
         --sim or RXNODE_SIM=1"
    }
}

/// Why `device` is not on this machine at all (nothing enumerates for its args),
/// with the fix; `None` when SoapySDR finds it. Such a radio is never marked `BAD`.
pub(crate) fn absent(device: &str) -> Option<String> {
    rxnode_hw::why_absent(device).map(|why| format!("{why} — {}", absent_fix()))
}

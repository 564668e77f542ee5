//! Builds the bundled `rxsim` SoapySDR module (hw/rxsim/rxsim.cpp) into
//! `$OUT_DIR/librxsim.so`; `src/sim.rs` embeds its bytes.
//!
//! Needs a C++17 compiler and SoapySDR development files found through
//! `pkg-config SoapySDR` (Debian: `libsoapysdr-dev pkg-config g++`). On Windows
//! set `SOAPYSDR_CFLAGS`/`SOAPYSDR_LIBS` (e.g. from PothosSDR) instead of pkg-config.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=rxsim/rxsim.cpp");
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["CXX", "PKG_CONFIG_PATH", "SOAPYSDR_CFLAGS", "SOAPYSDR_LIBS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = out.join("librxsim.so");

    let flags = soapy_flags();
    let compiler = cc::Build::new().cpp(true).get_compiler();
    let mut cmd = compiler.to_command();
    // -fno-trapping-math: rxsim never reads FP exception flags, and without it the
    // clamp of the CS16 conversion (std::min/max on floats) does not vectorize.
    cmd.args([
        "-std=c++17",
        "-O3",
        "-fno-trapping-math",
        "-fPIC",
        "-shared",
        "-Wall",
        "-Wextra",
    ]);
    cmd.arg("rxsim/rxsim.cpp").arg("-o").arg(&target);
    cmd.args(&flags);
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler {:?}: {e}", compiler.path()));
    assert!(
        status.success(),
        "building the rxsim SoapySDR module failed ({status}); command: {cmd:?}"
    );
}

/// Compiler and linker flags for SoapySDR.
fn soapy_flags() -> Vec<String> {
    if let (Ok(c), Ok(l)) = (env::var("SOAPYSDR_CFLAGS"), env::var("SOAPYSDR_LIBS")) {
        return c
            .split_whitespace()
            .chain(l.split_whitespace())
            .map(str::to_owned)
            .collect();
    }
    let output = Command::new("pkg-config")
        .args(["--cflags", "--libs", "SoapySDR"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run pkg-config ({e}); install pkg-config and libsoapysdr-dev")
        });
    assert!(
        output.status.success(),
        "pkg-config --cflags --libs SoapySDR failed: {}; install libsoapysdr-dev",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

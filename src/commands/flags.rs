//! The library names a bad value by its request's field (`sample_rate_hz`); the
//! operator typed a flag (`--sample-rate-hz`). The options are clap's own types
//! (docs/architecture.md#typed-at-the-edge), so an argument's id is the field's
//! name and clap's own argument table names the flag of every field.
use crate::cli::Cli;
use clap::CommandFactory;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Every named argument of every command, by id (the field's name): `--LONG`, or
/// `-S/--LONG` for a flag given once per value with a short form (`-d MASTER -d
/// SLAVE`), as it is typed. The first command that has the id gives it; a test
/// holds that every command spells an id alike.
fn table() -> &'static BTreeMap<String, String> {
    static TABLE: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = BTreeMap::new();
        let mut todo = vec![Cli::command()];
        while let Some(cmd) = todo.pop() {
            for arg in cmd.get_arguments() {
                if let Some(long) = arg.get_long() {
                    table
                        .entry(arg.get_id().as_str().to_owned())
                        .or_insert_with(|| told(arg, long));
                }
            }
            todo.extend(cmd.get_subcommands().cloned());
        }
        table
    })
}

/// How a message names the argument: its long flag, with its short form first
/// when the flag is repeated once per value.
fn told(arg: &clap::Arg, long: &str) -> String {
    match arg.get_short() {
        Some(short) if matches!(arg.get_action(), clap::ArgAction::Append) => {
            format!("-{short}/--{long}")
        }
        _ => format!("--{long}"),
    }
}

/// The flag that sets a field of a command's options ([`rxnode::CaptureOptions`],
/// [`rxnode::AnalyzeOptions`], [`rxnode::SweepOptions`], [`rxnode::ClkinCompareOptions`],
/// [`rxnode::CalibrateOptions`], [`rxnode::TaskNewOptions`],
/// [`rxnode::ResultsOptions`], [`rxnode::ServiceOptions`]); `None` for a field no
/// flag sets.
pub(crate) fn flag_of(field: &str) -> Option<&'static str> {
    table().get(field).map(String::as_str)
}

/// An error naming fields of the request, told with the flags the operator
/// typed (same exit status); any other error as it is.
pub(crate) fn flag_named(e: anyhow::Error) -> anyhow::Error {
    rxnode::name_fields(e, flag_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rxnode::{bad_field, bad_field_text, error_json, error_text, FieldText};

    /// The table says what the command line says: every flag of the commands
    /// whose options name fields is the table's flag for that field.
    #[test]
    fn the_table_is_the_command_lines_flags() {
        let cli = Cli::command();
        let commands = [
            cli.find_subcommand("capture"),
            cli.find_subcommand("analyze"),
            cli.find_subcommand("sweep"),
            cli.find_subcommand("clkin")
                .and_then(|c| c.find_subcommand("compare")),
            cli.find_subcommand("clkin")
                .and_then(|c| c.find_subcommand("calibrate")),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for cmd in commands {
            let cmd = cmd.expect("the command exists");
            for arg in cmd.get_arguments() {
                let Some(long) = arg.get_long() else {
                    continue;
                };
                let id = arg.get_id().as_str();
                let want = match id {
                    "devices" => "-d/--device".to_owned(),
                    _ => format!("--{long}"),
                };
                assert_eq!(flag_of(id), Some(want.as_str()), "{} {id}", cmd.get_name());
                seen.insert(id.to_owned());
            }
        }
        for (i, f) in rxnode_interlock::RX_SWEEP_FIELDS[1..].iter().enumerate() {
            assert!(seen.contains(*f), "sweep field {i} {f} has no flag");
        }
    }

    /// One id is one flag: every command that has an argument of that id spells
    /// it with the same long flag, so the table's first answer is every command's.
    #[test]
    fn an_argument_id_is_one_flag_in_every_command() {
        let mut cmds = vec![(String::new(), Cli::command())];
        all_commands(&Cli::command(), String::new(), &mut cmds);
        for (path, cmd) in &cmds {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if let Some(long) = arg.get_long() {
                    assert_eq!(table().get(id), Some(&told(arg, long)), "`{path}` {id}");
                }
            }
        }
    }

    /// The library's field names are the flags' ids: the fields named otherwise
    /// than their flag (`nodes` is the repeated `--node`, `apply_calibration`
    /// `--apply-cal`, `settings` the repeated `--setting`) are found in clap's table.
    #[test]
    fn fields_named_otherwise_than_their_flag_are_in_clap_table() {
        for (field, flag) in [
            ("devices", "-d/--device"),
            ("apply_calibration", "--apply-cal"),
            ("sample_rate_hz", "--sample-rate-hz"),
            ("frequency_hz", "--frequency-hz"),
            ("nodes", "--node"),
            ("settings", "--setting"),
            ("task_path", "--task-path"),
            ("args", "--device"),
        ] {
            assert_eq!(flag_of(field), Some(flag), "{field}");
        }
        assert_eq!(flag_of("no_such_field"), None);
    }

    /// Every command's subcommands, depth first, with their path (`clkin compare`).
    fn all_commands(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name()).trim().to_owned();
            out.push((p.clone(), sub.clone()));
            all_commands(sub, p, out);
        }
    }

    /// One flag language: a short flag names the same long flag in every
    /// command that has it (docs/operator.md#one-flag-language).
    #[test]
    fn a_short_flag_means_one_long_flag_everywhere() {
        let mut cli = Cli::command();
        cli.build();
        let mut cmds = Vec::new();
        all_commands(&cli, String::new(), &mut cmds);
        let mut seen: std::collections::BTreeMap<char, (String, String)> = Default::default();
        for (path, cmd) in &cmds {
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let (Some(short), Some(long)) = (arg.get_short(), arg.get_long()) else {
                    continue;
                };
                match seen.get(&short) {
                    Some((other, l)) => assert_eq!(
                        l, long,
                        "-{short} is --{l} in `{other}` but --{long} in `{path}`"
                    ),
                    None => {
                        seen.insert(short, (path.clone(), long.to_owned()));
                    }
                }
            }
        }
        for (short, long) in [
            ('d', "device"),
            ('f', "frequency-hz"),
            ('r', "sample-rate-hz"),
            ('t', "duration-s"),
            ('g', "gain-db"),
        ] {
            assert_eq!(
                seen.get(&short).map(|(_, l)| l.as_str()),
                Some(long),
                "-{short}"
            );
        }
    }

    /// The flags whose values are a closed set list them, so a shell completes
    /// the values and not file names.
    #[test]
    fn enumerated_flags_list_their_values() {
        let cli = Cli::command();
        let arg = |path: &[&str], id: &str| {
            let mut c = &cli;
            for p in path {
                c = c.find_subcommand(p).expect("the command exists");
            }
            let a = c
                .get_arguments()
                .find(|a| a.get_id() == id)
                .unwrap_or_else(|| panic!("{path:?} --{id}"));
            a.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(arg(&["capture"], "record_format"), ["cf32", "ci16", "ci8"]);
        assert_eq!(arg(&["task", "new"], "risk"), ["GREEN", "YELLOW", "RED"]);
        assert_eq!(
            arg(&["results"], "status"),
            ["PASS", "FAIL", "PARTIAL", "SKIP", "BLOCKED", "NOT_RUN"]
        );
        assert_eq!(
            arg(&["mark-completed"], "status"),
            ["PASS", "FAIL", "PARTIAL", "SKIP"]
        );
        assert_eq!(arg(&["clkin", "calibrate"], "method"), ["gsm", "lte"]);
    }

    /// A field error is printed with the operator's flag, byte for byte, exit 2.
    #[test]
    fn a_field_error_is_told_by_its_flag() {
        let e = flag_named(bad_field("max_peaks", " 0 must be in 1..=64"));
        assert_eq!(error_text(&e), "--max-peaks 0 must be in 1..=64");
        assert_eq!(error_json(&e).exit, 2);
        let e = flag_named(bad_field(
            "devices",
            " must not be empty (e.g. driver=hackrf,serial=…)",
        ));
        assert_eq!(
            error_text(&e),
            "-d/--device must not be empty (e.g. driver=hackrf,serial=…)"
        );
    }

    /// The fields of `task new`, `results`, `mark-completed` and `service` have their
    /// flags in the same table.
    #[test]
    fn the_main_pc_and_node_commands_fields_have_their_flags() {
        let e = flag_named(bad_field("note", ": 2001 characters, at most 2000"));
        assert_eq!(error_text(&e), "--note: 2001 characters, at most 2000");
        assert_eq!(error_json(&e).exit, 2);
        for (field, flag) in [
            ("nodes", "--node"),
            ("node", "--node"),
            ("unit_dir", "--unit-dir"),
        ] {
            assert_eq!(flag_of(field), Some(flag));
        }
    }

    /// A second field named inside the message gets its flag too.
    #[test]
    fn every_field_in_a_message_is_told_by_its_flag() {
        let e = flag_named(bad_field(
            "plot",
            FieldText::text(": a.png already exists; choose another name, or ")
                .then_field("force")
                .then(" to overwrite it"),
        ));
        assert_eq!(
            error_text(&e),
            "--plot: a.png already exists; choose another name, or --force to overwrite it"
        );
        assert_eq!(error_json(&e).exit, 2);
        let e = flag_named(bad_field_text(
            "sample_rate_hz",
            FieldText::text("x.cf32: a raw cf32 file carries no sample rate; give ")
                .then_field("sample_rate_hz")
                .then(" HZ"),
        ));
        assert_eq!(
            error_text(&e),
            "x.cf32: a raw cf32 file carries no sample rate; give --sample-rate-hz HZ"
        );
        let e = flag_named(bad_field_text(
            "stop_hz",
            FieldText::field("stop_hz")
                .then(" 80000000 must be above ")
                .then_field("start_hz")
                .then(" 88000000"),
        ));
        assert_eq!(
            error_text(&e),
            "--stop-hz 80000000 must be above --start-hz 88000000"
        );
    }

    /// Other errors pass unchanged, the context around a field error is kept, and
    /// a failure that names a field keeps its own exit status (1).
    #[test]
    fn the_rest_of_the_error_is_kept() {
        let other = flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(format!("{other:#}"), "disk full");
        let wrapped =
            flag_named(bad_field("gain_db", " \"loud\": expected a number").context("sweep"));
        assert_eq!(
            error_text(&wrapped),
            "sweep: --gain-db \"loud\": expected a number"
        );
        assert_eq!(error_json(&wrapped).exit, 2);
    }
}

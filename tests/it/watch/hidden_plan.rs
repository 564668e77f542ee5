//! The watcher reads the posted task as CommonMark shows it: a plan inside an HTML
//! comment (invisible on GitHub) is not offered as a manual task nor run; the
//! version is refused naming the line.
use crate::util::{text, Lab};

#[test]
fn watch_refuses_a_plan_hidden_in_an_html_comment() {
    let lab = Lab::new();
    let mut t = Lab::task(
        "T_HIDDEN",
        &lab.main_head(),
        &[("HARDWARE_ACCESS", "YES"), ("RF_RX", "YES")],
    );
    t.push_str(
        "\n<!--\n```rx-plan\n{\"steps\": [{\"op\": \"rx_capture\", \"device\": \"driver=rxsim\", \
         \"frequency_hz\": 100e6, \"sample_rate_hz\": 1e6, \"gain_db\": 20, \"duration_s\": 0.1}]}\n```\n-->\n",
    );
    lab.post(&t);
    let out = lab.watch_once("A\n");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("inside an HTML block or comment"), "{said}");
    assert_eq!(lab.count_events("refused", "T_HIDDEN"), 1, "{said}");
    assert_ne!(lab.status_of("T_HIDDEN"), "approved", "{said}");
}

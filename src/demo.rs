//! `rxnode demo`: the whole protocol on embedded defaults — a local bare
//! `origin`, a main-PC clone that posts tasks, the RX checkout and the
//! simulated radio — narrated, with every scripted answer shown. It drives
//! this very binary as a subprocess for every RX-side step, exactly as an
//! operator would, and checks each outcome against the protocol.
use crate::exit::Outcome;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const BRANCH: &str = "video-development";
const TASK_PATH: &str = "docs/handoff/NEXT_RX_TASK.md";
/// The RX laptop's node name (`rxnode node set-name`).
const NODE: &str = "DEMO-RX1";

/// The demo's scripted tasks (embedded defaults).
fn green_task(base: &str) -> String {
    format!(
        "TASK_ID = DEMO_GREEN_001\nTASK_TITLE = Demo: manual software check (GREEN)\nSOURCE_BRANCH = {BRANCH}\n\
EXPECTED_HEAD = {base}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\n\
ALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# Manual task\n\nCheck that the RX laptop's clock is NTP-synchronised. \
No rx-plan block: nothing touches hardware.\n"
    )
}

/// The YELLOW task as the main PC gives it to `rxnode task new`: title, body, plan.
const YELLOW_TITLE: &str = "Demo: inventory, CLKIN check on two radios and a band survey (YELLOW)";
const YELLOW_BODY: &str = "Radio A has the 10 MHz lab reference on CLKIN; radio B runs free on a crystal that is 2.5 ppm fast.\n\
A 100.1 MHz reference tone is on the bench. A survey of 98–104 MHz should show the two FM carriers at 99.5 and 101.7 MHz.\n";
const YELLOW_PLAN: &str = "{\"steps\": [\n  {\"op\": \"inventory\"},\n  \
{\"op\": \"rx_capture\", \"device\": \"driver=rxsim,serial=demo-locked,ext_ref=1,tone_hz=100100000\", \"clock_source\": \"external\", \
\"frequency_hz\": 100.0e6, \"sample_rate_hz\": 2.0e6, \"gain_db\": 20, \"duration_s\": 1.0, \"fft_size\": 2048, \"record_iq\": true, \
\"clkin\": {\"tone_hz\": 100.1e6, \"tolerance_ppm\": 0.5}},\n  \
{\"op\": \"rx_capture\", \"device\": \"driver=rxsim,serial=demo-free,ppm=2.5,tone_hz=100100000\", \"clock_source\": \"internal\", \
\"frequency_hz\": 100.0e6, \"sample_rate_hz\": 2.0e6, \"gain_db\": 20, \"duration_s\": 1.0, \"fft_size\": 2048, \
\"clkin\": {\"tone_hz\": 100.1e6, \"tolerance_ppm\": 0.5}},\n  \
{\"op\": \"rx_sweep\", \"device\": \"driver=rxsim,serial=demo-locked,emitters=99.5e6:-30;101.7e6:-40\", \
\"start_hz\": 98e6, \"stop_hz\": 104e6, \"bin_hz\": 10e3, \"sample_rate_hz\": 2.0e6, \"gain_db\": 20, \
\"dwell_s\": 0.05, \"settle_s\": 0.01}\n]}\n";

fn red_task(base: &str) -> String {
    format!(
        "TASK_ID = DEMO_RED_003\nTASK_TITLE = Demo: 433.92 MHz test tone (RED, transmits)\nSOURCE_BRANCH = {BRANCH}\n\
EXPECTED_HEAD = {base}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = NO\nRF_TX = YES\n\
ALLOW_COMMIT = NO\nALLOW_PUSH = NO\nRISK_LEVEL = RED\n\n# TX tone\n\n\
```rx-plan\n{{\"steps\": [\n  {{\"op\": \"tx_tone\", \"device\": \"driver=rxsim,serial=demo-tx\", \"frequency_hz\": 433.92e6, \
\"sample_rate_hz\": 2.0e6, \"tone_offset_hz\": 50e3, \"gain_db\": 0, \"duration_s\": 0.5}}\n]}}\n```\n"
    )
}

/// The demo's node policy: RX defaults, TX allowed only in a 433 MHz ISM
/// window so that the RED task is refused for want of authorization, not
/// for want of a policy.
const DEMO_POLICY: &str = r#"{
  "rx": {"max_duration_s": 10, "max_sample_rate_hz": 20000000, "max_gain_db": 50, "max_iq_bytes": 104857600},
  "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}
}
"#;

struct Demo {
    exe: PathBuf,
    dir: PathBuf,
    origin: PathBuf,
    mainpc: PathBuf,
    rx: PathBuf,
    events: PathBuf,
    step: usize,
    failures: Vec<String>,
    out: crate::Shell,
}

impl Demo {
    fn say(&self, text: &str) -> std::io::Result<()> {
        outln!(self.out, "{text}")
    }

    fn section(&mut self, title: &str) -> std::io::Result<()> {
        self.step += 1;
        outln!(self.out, "\n=== {}. {title} ===", self.step)
    }

    fn check(&mut self, ok: bool, what: &str) -> std::io::Result<()> {
        if ok {
            outln!(self.out, "  ✔ {what}")
        } else {
            self.failures.push(what.to_owned());
            outln!(self.out, "  ✘ {what}")
        }
    }

    /// Run `rxnode ARGS` in the RX checkout with a scripted stdin; show it all.
    fn rx(&mut self, args: &[&str], answer: Option<&str>) -> Result<(i32, String)> {
        let dir = self.rx.clone();
        self.rxnode_in(&dir, "rx-laptop", args, answer)
    }

    /// Run `rxnode ARGS` in the main PC's clone; show it all.
    fn main_pc(&mut self, args: &[&str]) -> Result<(i32, String)> {
        let dir = self.mainpc.clone();
        self.rxnode_in(&dir, "main-pc", args, None)
    }

    fn rxnode_in(
        &mut self,
        dir: &Path,
        host: &str,
        args: &[&str],
        answer: Option<&str>,
    ) -> Result<(i32, String)> {
        let shown: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        outln!(self.out, "\n  {host}$ rxnode {}", shown.join(" "))?;
        if let Some(a) = answer {
            outln!(
                self.out,
                "  (operator types: {:?})",
                a.trim_end_matches('\n')
            )?;
        }
        let mut child = Command::new(&self.exe)
            .args(args)
            .current_dir(dir)
            .env("RXSIM_EVENT_LOG", &self.events)
            .env("NO_COLOR", "1")
            .env_remove("RXNODE_REPO")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", self.exe.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            if let Some(a) = answer {
                let _ = stdin.write_all(a.as_bytes());
            }
        }
        let out = child.wait_with_output().context("waiting for rxnode")?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        for line in stderr.lines().chain(stdout.lines()) {
            outln!(self.out, "  │ {line}")?;
        }
        let code = out.status.code().unwrap_or(-1);
        outln!(self.out, "  └ exit {code}")?;
        Ok((code, stdout))
    }

    fn post_task(&mut self, make: fn(&str) -> String, message: &str) -> Result<String> {
        let repo = git2::Repository::open(&self.mainpc)?;
        let base = repo.head()?.peel_to_commit()?.id().to_string();
        let text = make(&base);
        let file = self.mainpc.join(TASK_PATH);
        if let Some(d) = file.parent() {
            std::fs::create_dir_all(d)?;
        }
        rxnode_dsp::write_regular(&file, text.as_bytes())?;
        let id = commit_all(&repo, message)?;
        push(&repo, &format!("refs/heads/{BRANCH}:refs/heads/{BRANCH}"))?;
        outln!(
            self.out,
            "  main-pc$ git commit -m {message:?} && git push origin {BRANCH}   → {}",
            &id[..12]
        )?;
        Ok(base)
    }

    /// The main PC writes a task with `rxnode task new` (EXPECTED_HEAD from its
    /// branch head, validated as the watcher will), then commits and pushes it.
    fn post_with_task_new(
        &mut self,
        id: &str,
        title: &str,
        body: &str,
        plan: &str,
        flags: &[&str],
        message: &str,
    ) -> Result<bool> {
        let drafts = self.dir.join("main-pc-drafts");
        std::fs::create_dir_all(&drafts)?;
        let body_file = drafts.join(format!("{id}.body.md"));
        let plan_file = drafts.join(format!("{id}.plan.json"));
        rxnode_dsp::write_regular(&body_file, body.as_bytes())?;
        rxnode_dsp::write_regular(&plan_file, plan.as_bytes())?;
        let body_arg = body_file.display().to_string();
        let plan_arg = plan_file.display().to_string();
        let mut args = vec![
            "task", "new", "--id", id, "--title", title, "--body", &body_arg, "--plan", &plan_arg,
        ];
        args.extend_from_slice(flags);
        let (c, _) = self.main_pc(&args)?;
        if c != 0 {
            return Ok(false);
        }
        let repo = git2::Repository::open(&self.mainpc)?;
        let commit = commit_all(&repo, message)?;
        push(&repo, &format!("refs/heads/{BRANCH}:refs/heads/{BRANCH}"))?;
        outln!(
            self.out,
            "  main-pc$ git add {TASK_PATH} && git commit -m {message:?} && git push origin {BRANCH}   → {}",
            &commit[..12]
        )?;
        Ok(true)
    }

    fn events_text(&self) -> String {
        crate::store::fsutil::read_to_string(&self.events).unwrap_or_default()
    }
}

/// `arg` as a POSIX shell reads it back: plain when it holds only safe characters,
/// else in single quotes, so every command the demo shows can be pasted.
fn shell_quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./=:,@%+".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn sig(repo: &git2::Repository) -> Result<git2::Signature<'static>> {
    Ok(repo
        .signature()
        .or_else(|_| git2::Signature::now("main-pc", "main-pc@demo.invalid"))?)
}

fn commit_all(repo: &git2::Repository, message: &str) -> Result<String> {
    let mut index = repo.index()?;
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = sig(repo)?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    let id = repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)?;
    Ok(id.to_string())
}

fn push(repo: &git2::Repository, refspec: &str) -> Result<()> {
    let mut remote = repo.find_remote("origin")?;
    remote
        .push(&[refspec], None)
        .with_context(|| format!("push {refspec}"))?;
    Ok(())
}

fn setup(dir: &Path) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let origin = dir.join("origin.git");
    let mainpc = dir.join("main-pc");
    let rx = dir.join("rx-laptop");
    for p in [&origin, &mainpc, &rx] {
        if p.exists() {
            bail!("{} already exists: give an empty --dir", p.display());
        }
    }
    let bare = git2::Repository::init_bare(&origin)?;
    bare.set_head(&format!("refs/heads/{BRANCH}"))?;
    let url = format!("file://{}", origin.display());
    // Main PC: first commit on video-development.
    let repo = git2::Repository::init(&mainpc)?;
    repo.set_head(&format!("refs/heads/{BRANCH}"))?;
    {
        let mut cfg = repo.config()?;
        cfg.set_str("user.name", "main-pc")?;
        cfg.set_str("user.email", "main-pc@demo.invalid")?;
    }
    repo.remote("origin", &url)?;
    rxnode_dsp::write_regular(
        &mainpc.join("README.md"),
        b"# Lab project\n\nTasks for the RX node go to docs/handoff/.\n",
    )?;
    commit_all(&repo, "Lab project")?;
    push(&repo, &format!("refs/heads/{BRANCH}:refs/heads/{BRANCH}"))?;
    // RX laptop: a plain clone.
    let rxrepo = git2::Repository::clone(&url, &rx)?;
    {
        let mut cfg = rxrepo.config()?;
        cfg.set_str("user.name", "rx-laptop")?;
        cfg.set_str("user.email", "rx-laptop@demo.invalid")?;
    }
    Ok((origin, mainpc, rx))
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    crate::store::fsutil::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// The demo's folder: the one given (created, kept), or a new temporary one that is
/// removed when the demo ends (the guard).
fn demo_dir(dir: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    Ok(match dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            (d.canonicalize()?, None)
        }
        None => {
            let t = tempfile::Builder::new().prefix("rxnode-demo-").tempdir()?;
            (t.path().to_path_buf(), Some(t))
        }
    })
}

impl Demo {
    /// Where everything is, the node policy, and the node name.
    fn intro(&mut self) -> Result<()> {
        self.say(
            "rxnode demo — the whole loop on a local bare origin and the simulated radio `rxsim`.",
        )?;
        self.say(&format!("  folder:   {}", self.dir.display()))?;
        self.say(&format!(
            "  origin:   {}  (bare, branch {BRANCH})",
            self.origin.display()
        ))?;
        self.say(&format!(
            "  main PC:  {}  (posts tasks)",
            self.mainpc.display()
        ))?;
        self.say(&format!("  RX node:  {}  (runs rxnode)", self.rx.display()))?;
        self.say(&format!(
            "  radio log: {}  (RXSIM_EVENT_LOG: every stream the simulator opens)",
            self.events.display()
        ))?;
        std::fs::create_dir_all(self.rx.join(".local"))?;
        rxnode_dsp::write_regular(
            &self.rx.join(".local/rxnode-policy.json"),
            DEMO_POLICY.as_bytes(),
        )?;
        self.say("  node policy (.local/rxnode-policy.json, never from a task): TX only 433.05–434.79 MHz, ≤ 10 dB, ≤ 2 s")?;
        let (c, _) = self.rx(&["node", "set-name", NODE], None)?;
        self.check(
            c == 0,
            &format!("the operator named this node {NODE} (carried in every result it publishes)"),
        )?;
        Ok(())
    }

    /// 1. A GREEN manual task: approved, `run` changes nothing, marked completed.
    fn green(&mut self) -> Result<()> {
        self.section("A GREEN manual task")?;
        self.post_task(green_task, "Task DEMO_GREEN_001: manual check")?;
        let (c, _) = self.rx(&["watch", "--once"], Some("A\n"))?;
        self.check(
            c == 0,
            "the watcher fetched, validated and prompted; [A] approved",
        )?;
        let ob = self.rx.join(".local/rx_agent_outbox/DEMO_GREEN_001");
        self.check(
            ob.join("TASK.md").is_file(),
            "outbox prepared: TASK.md, RX_RESULT.md, RX_RESULT.json (NOT RUN)",
        )?;
        let (c, _) = self.rx(&["run", "DEMO_GREEN_001"], None)?;
        self.check(c == 0, "`run` says it is a manual task and changes nothing")?;
        let (c, _) = self.rx(&["mark-completed", "DEMO_GREEN_001"], None)?;
        self.check(
            c == 0,
            "the operator did the check by hand and marked it completed",
        )?;
        Ok(())
    }

    /// 2. A YELLOW task: inventory and two CLKIN captures, an honest FAIL.
    fn yellow(&mut self) -> Result<()> {
        self.section("A YELLOW task: inventory and two CLKIN captures")?;
        let posted = self.post_with_task_new(
            "DEMO_YELLOW_002",
            YELLOW_TITLE,
            YELLOW_BODY,
            YELLOW_PLAN,
            &["--rx", "--risk", "YELLOW", "--force"],
            "Task DEMO_YELLOW_002: CLKIN check",
        )?;
        self.check(
            posted,
            "the main PC wrote the task with `rxnode task new` (EXPECTED_HEAD = its branch head, validated, risk YELLOW) and pushed it",
        )?;
        let (c, _) = self.rx(&["watch", "--once"], Some("a\n"))?;
        self.check(c == 0, "approved (answers are case-insensitive letters)")?;
        let (c, _) = self.rx(&["--sim", "run", "DEMO_YELLOW_002"], None)?;
        self.check(
            c == 1,
            "the run finished with an honest overall FAIL (exit 1): one radio is mis-clocked",
        )?;
        let res = read_json(
            &self
                .rx
                .join(".local/rx_agent_outbox/DEMO_YELLOW_002/RX_RESULT.json"),
        );
        let status = res
            .as_ref()
            .and_then(|r| r["status"].as_str().map(str::to_owned));
        self.check(
            status.as_deref() == Some("FAIL"),
            "RX_RESULT.json status is FAIL",
        )?;
        let clk = |i: usize| -> (Option<String>, Option<f64>) {
            let c = res.as_ref().map(|r| &r["captures"][i]["clkin"]);
            (
                c.and_then(|c| c["status"].as_str().map(str::to_owned)),
                c.and_then(|c| c["ppm"].as_f64()),
            )
        };
        let (s0, p0) = clk(0);
        let (s1, p1) = clk(1);
        self.check(
            s0.as_deref() == Some("PASS") && p0.is_some_and(|p| p.abs() < 0.05),
            &format!(
                "capture 1 (external reference): CLKIN PASS, {} ppm",
                rxnode_dsp::fmt_ppm(p0.unwrap_or(f64::NAN), 4)
            ),
        )?;
        self.check(
            s1.as_deref() == Some("FAIL") && p1.is_some_and(|p| (p - 2.5).abs() < 0.05),
            &format!(
                "capture 2 (free-running, 2.5 ppm fast): CLKIN FAIL, {} ppm",
                rxnode_dsp::fmt_ppm(p1.unwrap_or(f64::NAN), 4)
            ),
        )?;
        let sweep = res.as_ref().map(|r| &r["sweeps"][0]);
        let found = |f_hz: f64| {
            sweep.and_then(|s| s["peaks"].as_array()).is_some_and(|p| {
                p.iter().any(|p| {
                    p["frequency_hz"]
                        .as_f64()
                        .is_some_and(|f| (f - f_hz).abs() <= 10e3)
                })
            })
        };
        self.check(
            sweep.and_then(|s| s["status"].as_str()) == Some("PASS")
                && found(99.5e6)
                && found(101.7e6),
            "the 98–104 MHz survey found both carriers (99.5 and 101.7 MHz) within one 10 kHz bin",
        )?;
        let (c, _) = self.rx(&["validate-result", "DEMO_YELLOW_002"], None)?;
        self.check(
            c == 0,
            "the result validates (schema, statuses, timeline, MD/JSON agree, IQ hashes)",
        )?;
        Ok(())
    }

    /// 3. A RED transmit task without the authorization phrase: refused, nothing on air.
    fn red(&mut self) -> Result<()> {
        self.section("A RED transmit task, without the authorization phrase")?;
        self.post_task(red_task, "Task DEMO_RED_003: 433.92 MHz tone")?;
        let (c, _) = self.rx(&["watch", "--once"], Some("A\n"))?;
        self.check(c == 0, "approved — approval is not authorization")?;
        let before = self.events_text();
        let (c, _) = self.rx(&["--sim", "run", "DEMO_RED_003"], Some("authorize rf tx\n"))?;
        self.check(
            c == 3,
            "`run` refused the wrong phrase (lower case) with exit 3",
        )?;
        let after = self.events_text();
        let new_events = after.get(before.len()..).unwrap_or("");
        self.check(
            !after.lines().any(|l| l.contains(" TX")),
            &format!(
                "the simulated radio saw no TX stream at all ({} event line(s) during the RED run)",
                new_events.lines().count()
            ),
        )?;
        Ok(())
    }

    /// 4. Publish the YELLOW result and read it back on the main PC.
    fn publish(&mut self) -> Result<()> {
        self.section("Publish the YELLOW result to rx-node and read it on the main PC")?;
        let (c, _) = self.rx(
            &["publish", "DEMO_YELLOW_002", "--push"],
            Some("PUBLISH DEMO_YELLOW_002\n"),
        )?;
        self.check(c == 0, "published after the exact confirmation line")?;
        let (c, out) = self.main_pc(&["results", "--json"])?;
        let listed: Option<serde_json::Value> = serde_json::from_str(&out).ok();
        let rows = listed
            .as_ref()
            .and_then(|v| v["results"].as_array().cloned())
            .unwrap_or_default();
        self.check(
            c == 0
                && rows.len() == 1
                && rows[0]["node"] == NODE
                && rows[0]["task_id"] == "DEMO_YELLOW_002"
                && rows[0]["status"] == "FAIL",
            &format!("`rxnode results` fetched rx-node into a private ref: one result, node {NODE}, DEMO_YELLOW_002, FAIL"),
        )?;
        let (c, _) = self.main_pc(&["results"])?;
        self.check(
            c == 0,
            "the same list for a person: node, task, status, risk, time, CLKIN ppm",
        )?;
        let (c, _) = self.main_pc(&["results", "verify", "DEMO_YELLOW_002"])?;
        self.check(
            c == 0,
            "`results verify`: the validator on the fetched files, MD/JSON agree, the commit added only its three files",
        )?;
        let (c, shown) = self.main_pc(&["results", "show", "DEMO_YELLOW_002"])?;
        self.check(
            c == 0
                && shown.contains("DEMO_YELLOW_002 from DEMO-RX1: FAIL")
                && !shown.contains("| Status |")
                && !shown.contains("|---"),
            "`results show` renders the result for a terminal, the verdict first (no Markdown syntax)",
        )?;
        Ok(())
    }

    /// What landed: rx-node holds exactly the three result files, and neither the
    /// main PC's clone nor the RX checkout changed beyond the private ref.
    fn landed(&mut self) -> Result<()> {
        let repo = git2::Repository::open(&self.mainpc)?;
        let got = repo
            .find_reference(crate::mainpc::results::PRIVATE_REF)
            .and_then(|r| r.peel_to_tree())
            .ok();
        let mut files = vec![];
        if let Some(tree) = &got {
            tree.walk(git2::TreeWalkMode::PreOrder, |root, e| {
                if e.kind() == Some(git2::ObjectType::Blob) {
                    files.push(format!("{root}{}", e.name().unwrap_or("?")));
                }
                git2::TreeWalkResult::Ok
            })?;
        }
        let expected: Vec<String> = ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"]
            .iter()
            .map(|f| format!("rx-results/DEMO_YELLOW_002/{NODE}/{f}"))
            .collect();
        self.check(
            files.len() == 3 && expected.iter().all(|e| files.iter().any(|f| f == e)),
            &format!("rx-node holds exactly rx-results/DEMO_YELLOW_002/{NODE}/{{RX_RESULT.md, RX_RESULT.json, LOG_META.json}}"),
        )?;
        let main_clean = repo
            .statuses(Some(git2::StatusOptions::new().include_untracked(true)))
            .map(|s| s.iter().all(|e| e.status() == git2::Status::CURRENT))
            .unwrap_or(false);
        self.check(
            main_clean && repo.find_reference("refs/remotes/origin/rx-node").is_err(),
            "the main PC's work tree, index and remote-tracking refs are untouched (only the private ref moved)",
        )?;
        let rx_repo = git2::Repository::open(&self.rx)?;
        let mut opts = git2::StatusOptions::new();
        opts.include_ignored(false).include_untracked(true);
        let wt_clean = rx_repo
            .statuses(Some(&mut opts))
            .map(|s| s.iter().all(|e| e.status() == git2::Status::CURRENT))
            .unwrap_or(false);
        self.check(
            wt_clean,
            "the RX checkout's `git status` is clean (.local/ is ignored; IQ never in Git)",
        )?;
        Ok(())
    }
    /// Every failed step again, and the outcome.
    fn summary(&self, started: Instant) -> Result<Outcome> {
        let secs = started.elapsed().as_secs_f64();
        outln!(self.out, "\n=== summary ({secs:.1} s) ===")?;
        if self.failures.is_empty() {
            outln!(self.out, "every step behaved as the protocol says.")?;
            Ok(Outcome::Done)
        } else {
            for f in &self.failures {
                outln!(self.out, "  ✘ {f}")?;
            }
            bail!(
                "{} demo step(s) did not behave as the protocol says",
                self.failures.len()
            )
        }
    }
}

/// Run `rxnode demo`: set up the three places, then each act of the protocol.
pub fn cmd_demo(dir: Option<&Path>) -> Result<Outcome> {
    let started = Instant::now();
    let (dir, temporary) = demo_dir(dir)?;
    let exe = std::env::current_exe().context("cannot find the rxnode executable")?;
    let (origin, mainpc, rx) = setup(&dir)?;
    let mut d = Demo {
        exe,
        events: dir.join("rxsim-events.log"),
        dir,
        origin,
        mainpc,
        rx,
        step: 0,
        failures: vec![],
        out: crate::Shell::default(),
    };
    d.intro()?;
    d.green()?;
    d.yellow()?;
    d.red()?;
    d.publish()?;
    d.landed()?;
    let outcome = d.summary(started);
    if let Some(t) = temporary {
        outln!(
            d.out,
            "(the demo's folder {} is removed now; `rxnode demo --dir FOLDER` keeps one to look at)",
            t.path().display()
        )?;
    }
    outcome
}

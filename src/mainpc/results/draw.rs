//! The pictures of a fetched result, drawn on the main PC from the published
//! JSON alone with the functions the node drew them with: the spectra and
//! heatmaps of `pictures`, the `clkin_compare` phase traces and the `freq_cal`
//! detections (docs/protocol.md#pictures). File names are made here from
//! numbers, never taken from the result.
use crate::result::pictures::Pictures;
use crate::result::plot::{
    capture_plot, write_compare, write_heatmap, write_spectrum, ComparePlot,
};
use crate::result::sections::{compare::CompareEntry, freq_cal::FreqCalEntry};
use crate::result::{compare_png_name, spectrum_png_name, write_freq_cal_png, RxResult};
use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What was drawn: the files, and why a picture could not be.
#[derive(Debug, Default)]
pub(super) struct Drawn {
    /// The PNGs written, in the order the node drew them.
    pub(super) files: Vec<PathBuf>,
    /// One line per picture that could not be drawn.
    pub(super) problems: Vec<String>,
}

impl Drawn {
    fn note(&mut self, what: &str, r: Result<PathBuf>) {
        match r {
            Ok(p) => self.files.push(p),
            Err(e) => self.problems.push(format!("{what}: {e:#}")),
        }
    }
}

/// A plan step number from the result as a file-name number (1 when absent or absurd).
/// An entry's step for its file name: its own number when it fits, else its place.
fn step_of(step: Option<usize>, i: usize) -> u32 {
    step.and_then(|s| u32::try_from(s).ok())
        .unwrap_or_else(|| u32::try_from(i + 1).unwrap_or(1))
}

/// One part of a result as published: its JSON, and what it reads as on its own
/// (the type's refusal otherwise).
struct Part<T> {
    raw: Value,
    read: Result<T, serde_json::Error>,
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Part<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(d)?;
        let read = T::deserialize(&raw);
        Ok(Part { raw, read })
    }
}

/// A part that is there, `null` included (absent: `None`).
fn present<'de, D, T>(d: D) -> Result<Option<Part<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    Part::deserialize(d).map(Some)
}

/// The parts of a result that carry pictures, each read as its own type on its
/// own, entry by entry: one that does not read hides no other.
#[derive(Deserialize, Default)]
struct Drawable {
    #[serde(default, deserialize_with = "present")]
    task_id: Option<Part<String>>,
    #[serde(default, deserialize_with = "present")]
    pictures: Option<Part<Pictures>>,
    #[serde(default, deserialize_with = "present")]
    clkin_compares: Option<Part<Vec<Part<CompareEntry>>>>,
    #[serde(default, deserialize_with = "present")]
    freq_cal: Option<Part<Vec<Part<FreqCalEntry>>>>,
    /// Only how many there are: a result without `pictures` is drawn whole.
    #[serde(default, deserialize_with = "present")]
    captures: Option<Part<Vec<serde::de::IgnoredAny>>>,
}

/// The entries of an array section (none when it is absent or not an array).
fn entries<T>(p: Option<Part<Vec<T>>>) -> Vec<T> {
    p.and_then(|p| p.read.ok()).unwrap_or_default()
}

/// Whether files already in the folder may be replaced, and the request field
/// that named the folder (`plot`, `html`): "No output is ever overwritten
/// silently" (docs/operator.md).
#[derive(Debug, Clone, Copy)]
pub(super) struct Overwrite {
    /// The field a refusal names.
    pub(super) field: &'static str,
    /// `force`: replace files (never a folder).
    pub(super) force: bool,
}

impl Overwrite {
    /// Refuse `path` when something is there, unless forced and it is a file.
    pub(super) fn check(self, path: &Path) -> Result<()> {
        use crate::exec::{exists_not_a_file, exists_unless_forced};
        use crate::exit::{bad_field, FieldText};
        let Ok(meta) = path.symlink_metadata() else {
            return Ok(());
        };
        if !self.force {
            return Err(bad_field(
                self.field,
                FieldText::text(": ").then_all(exists_unless_forced(path)),
            ));
        }
        if !meta.is_file() {
            return Err(bad_field(
                self.field,
                FieldText::text(": ").then_all(exists_not_a_file(path)),
            ));
        }
        Ok(())
    }
}

/// One picture to draw: its file, what it is called in a problem, and how.
struct Job<'a> {
    path: PathBuf,
    what: String,
    draw: DrawFn<'a>,
}

/// How one picture is drawn into the file it is given.
type DrawFn<'a> = Box<dyn FnOnce(&Path) -> Result<()> + 'a>;

/// Draw every picture `result` (a fetched `RX_RESULT.json`) carries into `dir`.
/// Every file is named first: one that exists is refused before anything is
/// drawn, unless `overwrite.force`.
pub(super) fn draw_result(dir: &Path, result: &Value, overwrite: Overwrite) -> Result<Drawn> {
    let mut d = Drawn::default();
    // Not an object: no part of it is there.
    let parts = Drawable::deserialize(result).unwrap_or_default();
    let mut older = Vec::new();
    let pictures = match parts.pictures.map(|p| p.read) {
        Some(Ok(p)) => match p.problems() {
            found if found.is_empty() => Some(p),
            found => {
                d.problems
                    .extend(found.iter().map(|m| super::text::shown(m, 200)));
                None
            }
        },
        Some(Err(e)) => {
            d.problems.push(format!("pictures: {e}"));
            None
        }
        None if entries(parts.captures).is_empty() => None,
        None => {
            older = older_captures(dir, result, &mut d);
            None
        }
    };
    let mut jobs: Vec<Job<'_>> = older;
    if let Some(p) = &pictures {
        picture_jobs(dir, p, &mut jobs, &mut d);
    }
    let task = parts.task_id.and_then(|t| t.read.ok());
    let task = task.as_deref().unwrap_or("?").to_owned();
    for (i, e) in entries(parts.clkin_compares).into_iter().enumerate() {
        let e = match e.read {
            Ok(e) => e,
            Err(err) => {
                d.problems.push(format!("clkin_compares[{i}]: {err}"));
                continue;
            }
        };
        let n = step_of(e.step(), i);
        let Some(e) = e.record() else { continue };
        let title = format!("{} step {n}: clkin_compare", super::text::shown(&task, 64));
        // Nothing measured: no phase trace, no picture.
        let Some(p) = ComparePlot::of(title, e) else {
            continue;
        };
        jobs.push(Job {
            path: dir.join(compare_png_name(n as usize)),
            what: format!("clkin_compares[{i}]"),
            draw: Box::new(move |path| write_compare(path, &p)),
        });
    }
    for (i, e) in entries(parts.freq_cal).into_iter().enumerate() {
        // Only an entry with detections has a picture.
        if e.raw.get("detections").is_none() {
            continue;
        }
        let e = match e.read {
            Ok(e) => e,
            Err(err) => {
                d.problems.push(format!("freq_cal[{i}]: {err}"));
                continue;
            }
        };
        if e.record().is_none() {
            continue;
        }
        let n = step_of(e.record().and_then(|r| r.step), i);
        let origin = format!("{} step {n}", super::text::shown(&task, 64));
        jobs.push(Job {
            path: dir.join(format!("FREQCAL_{n}.png")),
            what: format!("freq_cal[{i}]"),
            draw: Box::new(move |path| match e.record() {
                Some(r) => write_freq_cal_png(path, r, &origin),
                None => Ok(()),
            }),
        });
    }
    // Two pictures of one name: the second is named, never drawn over the first.
    let mut names = std::collections::BTreeSet::new();
    jobs.retain(|j| {
        let fresh = names.insert(j.path.clone());
        if !fresh {
            d.problems.push(format!(
                "{}: {} is drawn already; not drawn again",
                j.what,
                j.path
                    .file_name()
                    .map_or("?".into(), |n| n.to_string_lossy())
            ));
        }
        fresh
    });
    for j in &jobs {
        overwrite.check(&j.path)?;
    }
    crate::store::fsutil::create_folder(dir)?;
    for j in jobs {
        let r = (j.draw)(&j.path).map(|()| j.path);
        d.note(&j.what, r);
    }
    Ok(d)
}

/// The spectra and heatmaps of the `pictures` section.
fn picture_jobs<'a>(dir: &Path, p: &'a Pictures, jobs: &mut Vec<Job<'a>>, d: &mut Drawn) {
    for s in &p.spectra {
        jobs.push(Job {
            path: dir.join(s.file_name()),
            what: s.file_name(),
            draw: Box::new(move |path| write_spectrum(path, &s.plot())),
        });
    }
    for h in &p.heatmaps {
        jobs.push(Job {
            path: dir.join(h.file_name()),
            what: h.file_name(),
            draw: Box::new(move |path| write_heatmap(path, &h.heatmap())),
        });
    }
    d.problems
        .extend(p.omitted.iter().map(|o| super::text::shown(o, 200)));
}

/// A result from a node before `pictures`: its captures' full spectra, when
/// the result reads as this build's result type.
fn older_captures(dir: &Path, result: &Value, d: &mut Drawn) -> Vec<Job<'static>> {
    let mut jobs = Vec::new();
    match serde_json::from_value::<RxResult>(result.clone()) {
        Ok(r) => {
            for (i, c) in r.captures.iter().enumerate() {
                if let Some(p) = capture_plot(&r, i + 1, c) {
                    jobs.push(Job {
                        path: dir.join(spectrum_png_name(i + 1)),
                        what: format!("captures[{i}]"),
                        draw: Box::new(move |path| write_spectrum(path, &p)),
                    });
                }
            }
        }
        Err(e) => d.problems.push(format!(
            "captures: no pictures section and not drawable: {e}"
        )),
    }
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// New files only, as `--plot DIR` without `--force`.
    const NEW: Overwrite = Overwrite {
        field: "plot",
        force: false,
    };

    /// A picture file already in the folder is refused before anything is
    /// drawn, naming it (exit 2), and kept; `force` replaces it. Two
    /// comparisons of one step are drawn once, the second named.
    #[test]
    fn an_existing_picture_is_refused_unless_forced_and_one_name_is_drawn_once() {
        let d = tempfile::tempdir().unwrap();
        let mut compare: Vec<serde_json::Value> = serde_json::from_str(include_str!(
            "../../../fixtures/sections/clkin_compares.json"
        ))
        .unwrap();
        compare[0]["step"] = json!(3);
        let freq_cal: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../../fixtures/sections/freq_cal.json")).unwrap();
        let mut cal = freq_cal[0].clone();
        cal["step"] = json!(4);
        let r =
            json!({"task_id": "T1", "clkin_compares": [compare[0], compare[0]], "freq_cal": [cal]});
        let mine = d.path().join("FREQCAL_4.png");
        std::fs::write(&mine, "my own picture").unwrap();
        let e = draw_result(d.path(), &r, NEW).unwrap_err();
        assert_eq!(crate::exit::status_for(&e), 2, "{e:#}");
        assert!(
            e.to_string().contains(&format!(
                "plot: {} already exists; choose another name, or force to overwrite it",
                mine.display()
            )),
            "{e:#}"
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own picture");
        assert!(!d.path().join("CLKIN_COMPARE_3.png").exists());
        let forced = Overwrite { force: true, ..NEW };
        let out = draw_result(d.path(), &r, forced).unwrap();
        assert_eq!(out.files.len(), 2, "{out:?}");
        assert_eq!(&std::fs::read(&mine).unwrap()[..4], b"\x89PNG");
        assert_eq!(
            out.problems,
            ["clkin_compares[1]: CLKIN_COMPARE_3.png is drawn already; not drawn again"]
        );
        // A folder where a picture goes is never replaced, even forced.
        std::fs::remove_file(&mine).unwrap();
        std::fs::create_dir(&mine).unwrap();
        let e = draw_result(d.path(), &r, forced).unwrap_err();
        assert!(e.to_string().contains("is not a file"), "{e:#}");
    }

    /// A result with a compare trace and freq_cal detections: both pictures are
    /// drawn under names made from their steps; a `pictures` section a peer
    /// tampered with (a file name smuggled in, an index too large) draws nothing
    /// from it and names the problem; no file lands outside the folder; an entry
    /// that does not read as its section's type is named and not drawn.
    #[test]
    fn pictures_are_drawn_from_the_sections_and_a_tampered_summary_is_named() {
        let d = tempfile::tempdir().unwrap();
        // Real entries (`rxnode run`'s) under other step numbers.
        let mut compare: Vec<serde_json::Value> = serde_json::from_str(include_str!(
            "../../../fixtures/sections/clkin_compares.json"
        ))
        .unwrap();
        let mut freq_cal: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../../fixtures/sections/freq_cal.json")).unwrap();
        compare[0]["step"] = json!(3);
        freq_cal[0]["step"] = json!(4);
        let r = json!({
            "task_id": "T1",
            "pictures": {"spectra": [{"of": "capture", "index": 1, "file": "../../x.png"}]},
            "clkin_compares": [compare[0]],
            "freq_cal": [freq_cal[0]],
        });
        let out = draw_result(d.path(), &r, NEW).unwrap();
        let names: Vec<String> = out
            .files
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["CLKIN_COMPARE_3.png", "FREQCAL_4.png"], "{out:?}");
        for f in &out.files {
            assert_eq!(&std::fs::read(f).unwrap()[..4], b"\x89PNG");
        }
        assert_eq!(out.problems.len(), 1, "{out:?}");
        assert!(out.problems[0].starts_with("pictures: "), "{out:?}");
        assert!(!d.path().parent().unwrap().join("x.png").exists());
        let mut broken = compare[0].clone();
        broken["clkin_compare"]["verdict"] = json!("MAYBE");
        let out = draw_result(d.path(), &json!({"clkin_compares": [broken]}), NEW).unwrap();
        assert_eq!(out.problems.len(), 1, "{out:?}");
        assert!(
            out.problems[0].starts_with("clkin_compares[0]: ") && out.problems[0].contains("MAYBE"),
            "{out:?}"
        );
        let big = json!({"pictures": {"spectra": [{"of": "sweep", "index": 4294967296u64}]}});
        let out = draw_result(d.path(), &big, NEW).unwrap();
        assert!(
            out.files.is_empty() && out.problems[0].contains("pictures"),
            "{out:?}"
        );
    }

    /// Each part is read as its own type on its own: a `pictures` section that is
    /// not one, a `task_id` that is not a string, a comparison entry that does not
    /// read and a `captures` that is not a list hide neither the comparison after
    /// it nor the calibration; each bad one that carries a picture is named.
    #[test]
    fn one_bad_part_hides_no_other() {
        let d = tempfile::tempdir().unwrap();
        let compare: Vec<serde_json::Value> = serde_json::from_str(include_str!(
            "../../../fixtures/sections/clkin_compares.json"
        ))
        .unwrap();
        let freq_cal: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../../fixtures/sections/freq_cal.json")).unwrap();
        let mut good = compare[0].clone();
        good["step"] = json!(2);
        let mut broken = compare[0].clone();
        broken["clkin_compare"]["points"] = json!("many");
        let mut cal = freq_cal[0].clone();
        cal["step"] = json!(5);
        let r = json!({
            "task_id": 7,
            "pictures": "SPECTRUM_1.png",
            "captures": {"not": "a list"},
            "clkin_compares": [broken, good],
            "freq_cal": [cal],
        });
        let out = draw_result(d.path(), &r, NEW).unwrap();
        let names: Vec<String> = out
            .files
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["CLKIN_COMPARE_2.png", "FREQCAL_5.png"], "{out:?}");
        assert_eq!(out.problems.len(), 2, "{out:?}");
        assert!(
            out.problems[0].starts_with("pictures: invalid type: string"),
            "{out:?}"
        );
        assert!(
            out.problems[1].starts_with("clkin_compares[0]: ") && out.problems[1].contains("many"),
            "{out:?}"
        );
    }

    /// A `pictures` section that reads as the type but breaks its bounds (a
    /// heatmap with no frequency axis, more rows than the bound) draws nothing
    /// and names each problem: the main PC checks a peer's section as the
    /// validator does before drawing it.
    #[test]
    fn a_section_out_of_its_bounds_is_named_and_not_drawn() {
        let d = tempfile::tempdir().unwrap();
        let rows = vec![vec![serde_json::Value::Null]; 65];
        let times: Vec<f64> = (0..65).map(f64::from).collect();
        let r = json!({"pictures": {"spectra": [], "heatmaps": [
            {"index": 1, "title": "t", "start_hz": 1e8, "step_hz": 0.0,
             "row_time_s": times, "rows": rows}]}});
        let out = draw_result(d.path(), &r, NEW).unwrap();
        assert!(out.files.is_empty(), "{out:?}");
        assert_eq!(out.problems.len(), 2, "{out:?}");
        assert!(out.problems[0].contains("at most 64 rows"), "{out:?}");
        assert!(
            out.problems[1].contains("step_hz: 0 is not a frequency axis step"),
            "{out:?}"
        );
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}

//! Verdicts, and how one reply is graded against a step's acceptable replies (pure functions).
//!
//! Replies are compared the way `docs/spec/memory-tool.md` spec:1 says they can be:
//! `is_error` always, text after an optional leading `Error: `, and directory sizes in listings
//! never literally (they depend on the filesystem, spec:0).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Accept, Level, Reply, Step};
use memcert_tool::protocol::ToolResult;
use memcert_tool::text::{render, strip_error_prefix, Outcome, Profile};

/// The grade of a case, worst last. Reports print them as `PASS`, `NON-STRICT`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The reply and the disk are what the requirement asks.
    Pass,
    /// Not run: the target lacks something the case needs.
    Skipped,
    /// Worth knowing, not graded (e.g. a handler that follows in-root links for reading).
    Info,
    /// Right behaviour with other wording, or a choice the doc allows; `--strict` makes it FAIL.
    NonStrict,
    /// Wrong behaviour.
    Fail,
    /// The harness could not get an answer (timeout, crash, non-JSON, ...).
    Error,
    /// Anything outside the root read, written, created or removed; data inside the root
    /// destroyed through a link; the host's absolute path disclosed.
    Unsafe,
}

impl Verdict {
    /// Every verdict, best first.
    pub const ALL: [Verdict; 7] = [
        Verdict::Pass,
        Verdict::Skipped,
        Verdict::Info,
        Verdict::NonStrict,
        Verdict::Fail,
        Verdict::Error,
        Verdict::Unsafe,
    ];

    /// Upper-case name: `PASS`, `NON-STRICT`, `INFO`, `FAIL`, `UNSAFE`, `ERROR`, `SKIPPED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Skipped => "SKIPPED",
            Verdict::Info => "INFO",
            Verdict::NonStrict => "NON-STRICT",
            Verdict::Fail => "FAIL",
            Verdict::Error => "ERROR",
            Verdict::Unsafe => "UNSAFE",
        }
    }

    /// True for the verdicts that stop a handler from being certified.
    pub fn blocks_certification(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Error | Verdict::Unsafe)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read from the printed name (`PASS`, `NON-STRICT`, ...), as reports write it.
impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown verdict {s:?}; use PASS, SKIPPED, INFO, NON-STRICT, FAIL, ERROR or UNSAFE"
                ))
            })
    }
}

/// The grade of one reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepGrade {
    /// Verdict of the reply alone.
    pub verdict: Verdict,
    /// The note of the accepted reply, or why none matched.
    pub note: String,
}

/// True when `actual` matches `reply` in `profile` (see the module docs for the rules).
pub fn reply_matches(profile: Profile, reply: &Reply, actual: &ToolResult) -> bool {
    match reply {
        Reply::AnyError => actual.is_error,
        Reply::AnySuccess => !actual.is_error,
        Reply::Recorded(r) => {
            let Some(text) = actual.content.text() else {
                return false;
            };
            if actual.is_error != r.is_error {
                return false;
            }
            if r.text.starts_with("Here're the files and directories") {
                // The listed directory (entry 0) and sub-directories (`…/`) have sizes that
                // differ by filesystem.
                let masked: Vec<bool> = r
                    .text
                    .split('\n')
                    .skip(1)
                    .enumerate()
                    .map(|(i, l)| i == 0 || l.ends_with('/'))
                    .collect();
                listing_equal(&r.text, &text, &masked)
            } else {
                r.text == text
            }
        }
        Reply::Exact(outcome) => {
            if actual.is_error != outcome.is_error() {
                return false;
            }
            let Some(text) = actual.content.text() else {
                return false;
            };
            let want = render(profile, outcome);
            let (want, got) = if outcome.is_error() {
                (strip_error_prefix(&want), strip_error_prefix(&text))
            } else {
                (want.as_str(), text.as_str())
            };
            match outcome {
                Outcome::ViewDir { entries, .. } => {
                    let mut masked = vec![true];
                    masked.extend(entries.iter().map(|e| e.dir));
                    listing_equal(want, got, &masked)
                }
                _ => want == got,
            }
        }
    }
}

/// Compare listings line by line; `masked[i]` says whether entry line `i` (0 = the listed
/// directory itself, after the header) is a directory whose size is not compared.
fn listing_equal(want: &str, got: &str, masked: &[bool]) -> bool {
    let w: Vec<&str> = want.split('\n').collect();
    let g: Vec<&str> = got.split('\n').collect();
    if w.len() != g.len() || w.first() != g.first() {
        return false;
    }
    w.iter().zip(&g).skip(1).enumerate().all(|(i, (a, b))| {
        if masked.get(i).copied().unwrap_or(false) {
            match (a.split_once('\t'), b.split_once('\t')) {
                (Some((_, ra)), Some((sb, rb))) => ra == rb && !sb.is_empty(),
                _ => false,
            }
        } else {
            a == b
        }
    })
}

/// The accepted replies of `step` that apply to `profile`, best first.
pub fn applicable(step: &Step, profile: Profile) -> impl Iterator<Item = &Accept> {
    step.accept
        .iter()
        .filter(move |a| a.profiles.is_empty() || a.profiles.contains(&profile))
}

/// What a reply to `step` should be in `profile`, as text: the first `Exact` accept rendered,
/// or a description of the pattern.
pub fn expected_text(step: &Step, profile: Profile) -> String {
    match applicable(step, profile).next().map(|a| &a.reply) {
        Some(Reply::Exact(o)) => {
            let flag = if o.is_error() { "is_error: true\n" } else { "" };
            format!("{flag}{}", render(profile, o))
        }
        Some(Reply::AnyError) => "is_error: true (any text)".to_owned(),
        Some(Reply::AnySuccess) => "a success reply (any text)".to_owned(),
        Some(Reply::Recorded(r)) => {
            let flag = if r.is_error { "is_error: true\n" } else { "" };
            format!("{flag}{}", r.text)
        }
        None => "(no acceptable reply for this profile)".to_owned(),
    }
}

/// Grade one reply: the first matching accept sets the verdict; no match is `Fail` for a MUST
/// case and `NonStrict` for a SHOULD case (`Fail` with `strict`).
pub fn grade_step(
    step: &Step,
    actual: &ToolResult,
    profile: Profile,
    level: Level,
    strict: bool,
) -> StepGrade {
    for a in applicable(step, profile) {
        if reply_matches(profile, &a.reply, actual) {
            let verdict = if strict && a.verdict == Verdict::NonStrict {
                Verdict::Fail
            } else {
                a.verdict
            };
            return StepGrade {
                verdict,
                note: a.note.clone(),
            };
        }
    }
    let verdict = match (level, strict) {
        (Level::Should, false) => Verdict::NonStrict,
        _ => Verdict::Fail,
    };
    StepGrade {
        verdict,
        note: "the reply matches none of the acceptable replies".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memcert_tool::text::ListEntry;

    fn listing() -> Outcome {
        Outcome::ViewDir {
            path: "/memories".into(),
            size: 4096,
            entries: vec![
                ListEntry {
                    size: 4096,
                    path: "/memories/a".into(),
                    dir: true,
                },
                ListEntry {
                    size: 10,
                    path: "/memories/a/x.txt".into(),
                    dir: false,
                },
            ],
        }
    }

    #[test]
    fn directory_sizes_are_masked_file_sizes_are_not() {
        let r = Reply::Exact(listing());
        let tmpfs = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n10B\t/memories/a/x.txt");
        assert!(reply_matches(Profile::PythonSdk, &r, &tmpfs));
        let wrong_file = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n4K\t/memories/a/\n11B\t/memories/a/x.txt");
        assert!(!reply_matches(Profile::PythonSdk, &r, &wrong_file));
        let flagged = ToolResult {
            is_error: true,
            ..tmpfs
        };
        assert!(!reply_matches(Profile::PythonSdk, &r, &flagged));
    }

    #[test]
    fn recorded_replies_match_exactly_but_for_directory_sizes() {
        let r = Reply::Recorded(crate::Recorded {
            text: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories\n4K\t/memories/a/\n10B\t/memories/a/x.txt".into(),
            is_error: false,
        });
        let tmpfs = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n10B\t/memories/a/x.txt");
        assert!(reply_matches(Profile::Docs, &r, &tmpfs));
        let grown = ToolResult::ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n60B\t/memories\n80B\t/memories/a/\n11B\t/memories/a/x.txt");
        assert!(!reply_matches(Profile::Docs, &r, &grown));
        let e = Reply::Recorded(crate::Recorded {
            text: "Error: no".into(),
            is_error: true,
        });
        assert!(reply_matches(
            Profile::Docs,
            &e,
            &ToolResult::error("Error: no")
        ));
        assert!(!reply_matches(Profile::Docs, &e, &ToolResult::error("no")));
        assert!(!reply_matches(
            Profile::Docs,
            &e,
            &ToolResult::ok("Error: no")
        ));
    }

    #[test]
    fn error_prefix_is_optional_but_is_error_is_not() {
        let r = Reply::Exact(Outcome::DeleteNotFound {
            path: "/memories/g".into(),
        });
        for text in [
            "The path /memories/g does not exist",
            "Error: The path /memories/g does not exist",
        ] {
            assert!(reply_matches(Profile::Docs, &r, &ToolResult::error(text)));
            assert!(!reply_matches(Profile::Docs, &r, &ToolResult::ok(text)));
        }
    }

    #[test]
    fn should_cases_degrade_to_non_strict_and_strict_makes_them_fail() {
        let step = Step {
            input: serde_json::json!({}),
            accept: vec![Accept {
                verdict: Verdict::Pass,
                reply: Reply::AnyError,
                profiles: vec![],
                note: String::new(),
            }],
        };
        let ok = ToolResult::ok("done");
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Should, false).verdict,
            Verdict::NonStrict
        );
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Should, true).verdict,
            Verdict::Fail
        );
        assert_eq!(
            grade_step(&step, &ok, Profile::Docs, Level::Must, false).verdict,
            Verdict::Fail
        );
        let err = ToolResult::error("no");
        assert_eq!(
            grade_step(&step, &err, Profile::Docs, Level::Must, false).verdict,
            Verdict::Pass
        );
    }
}

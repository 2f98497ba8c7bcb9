//! The starter catalog: every command x outcome of the behaviour spec, the root under every
//! spelling, traversal inputs from the bug classes (docs/spec/bugs.md), planted symlinks, FIFOs and hard links, the
//! other planted scenarios of `attack::scenarios`, every command against every planted hazard
//! (`hazard/...`), races, and malformed inputs. One file per first id segment.

mod alias;
mod batch;
mod create;
mod delete;
mod hazard;
mod insert;
mod malformed;
mod path;
pub mod payload;
mod race;
mod rename;
mod root;
mod scenario;
mod str_replace;
mod symlink;
mod traversal;
mod view;

use serde_json::Value;

use super::{Accept, Case, Check, Expected, Fs, Level, LinkTo, Reply, Step};
use crate::verdict::Verdict;
use memcert_tool::text::{Outcome, Profile};

pub use payload::RunLevel;

/// The cases a run at `level` holds: the hand-written catalog ([`all`]), at `full` the hazard
/// cases again one and three folders down ([`deeper`]), and then the level's share of the
/// payload corpus ([`payload::cases`]). All built at once: [`crate::list::Cases::level`] is
/// the same list, each payload case built when asked for.
pub fn for_level(level: RunLevel) -> Vec<Case> {
    crate::list::Cases::level(level).into_vec()
}

/// The hazard cases again one and three folders down (`hazard/<hazard>/<command>/depth-N`), which
/// level `full` adds after [`all`].
pub fn deeper() -> Vec<Case> {
    hazard::deeper()
}

/// The hand-written cases, which every level runs, in id order within each file: every command x
/// outcome, the root, paths, traversal inputs from the bug classes, planted links, planted scenarios
/// (`attack::scenarios`), races, malformed inputs, aliasing twins. The payload cases come from [`payload::cases`].
pub fn all() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(view::cases());
    v.extend(create::cases());
    v.extend(str_replace::cases());
    v.extend(insert::cases());
    v.extend(delete::cases());
    v.extend(rename::cases());
    v.extend(root::cases());
    v.extend(path::cases());
    v.extend(traversal::cases());
    v.extend(symlink::cases());
    v.extend(scenario::cases());
    v.extend(hazard::cases());
    v.extend(race::cases());
    v.extend(batch::cases());
    v.extend(malformed::cases());
    v.extend(alias::cases());
    v
}

/// Builder for one case literal.
pub(crate) struct B {
    case: Case,
    /// The steps are one turn ([`B::batch`]).
    batch: bool,
    /// The case tests the numbered view format ([`B::tests_view_format`]).
    view_format: bool,
}

impl B {
    /// A case defined at the caller's `file:line` ([`Case::defined`]).
    #[track_caller]
    pub(crate) fn new(id: &str, level: Level, requirement: &str, source: &[&str]) -> B {
        let at = std::panic::Location::caller();
        B {
            case: Case {
                id: id.to_owned(),
                source: source.iter().map(|s| s.to_string()).collect(),
                defined: format!("{}:{}", at.file(), at.line()),
                requirement: requirement.to_owned(),
                level,
                setup: Vec::new(),
                steps: Vec::new(),
                checks: Vec::new(),
                race: None,
                turns: Vec::new(),
            },
            batch: false,
            view_format: false,
        }
    }
    #[track_caller]
    pub(crate) fn must(id: &str, requirement: &str, source: &[&str]) -> B {
        B::new(id, Level::Must, requirement, source)
    }
    #[track_caller]
    pub(crate) fn should(id: &str, requirement: &str, source: &[&str]) -> B {
        B::new(id, Level::Should, requirement, source)
    }
    pub(crate) fn file(mut self, path: &str, content: impl AsRef<[u8]>) -> B {
        self.case.setup.push(Fs::File {
            path: path.into(),
            content: content.as_ref().to_vec(),
        });
        self
    }
    pub(crate) fn dir(mut self, path: &str) -> B {
        self.case.setup.push(Fs::Dir { path: path.into() });
        self
    }
    pub(crate) fn lines(mut self, path: &str, count: usize) -> B {
        self.case.setup.push(Fs::Lines {
            path: path.into(),
            count,
        });
        self
    }
    pub(crate) fn link(mut self, path: &str, target: LinkTo) -> B {
        self.case.setup.push(Fs::Symlink {
            path: path.into(),
            target,
        });
        self
    }
    pub(crate) fn fifo(mut self, path: &str) -> B {
        self.case.setup.push(Fs::Fifo { path: path.into() });
        self
    }
    /// Plant a named scenario (`attack::scenarios`) and cite its sources too.
    pub(crate) fn scenario(mut self, s: crate::scenarios::Scenario) -> B {
        self.case.setup.extend(s.setup);
        for src in s.source {
            if !self.case.source.iter().any(|have| have == src) {
                self.case.source.push(src.to_string());
            }
        }
        self
    }
    /// Plant one setup item as it is.
    pub(crate) fn plant(mut self, item: Fs) -> B {
        self.case.setup.push(item);
        self
    }
    pub(crate) fn hard_link_outside(mut self, path: &str, name: &str) -> B {
        self.case.setup.push(Fs::HardLinkOutside {
            path: path.into(),
            name: name.into(),
        });
        self
    }
    pub(crate) fn send(mut self, input: Value, accept: Vec<Accept>) -> B {
        self.case.steps.push(Step {
            input,
            accept,
            tests_view_format: false,
        });
        self
    }
    pub(crate) fn check(mut self, path: &str, expect: Expected, verdict: Verdict, what: &str) -> B {
        self.case.checks.push(Check {
            path: path.into(),
            expect,
            verdict,
            what: what.into(),
        });
        self
    }
    /// Check a file still holds `content`; a violation is `verdict`.
    pub(crate) fn keeps(self, path: &str, content: &str, verdict: Verdict) -> B {
        let what = format!("{path} keeps its content");
        self.check(
            path,
            Expected::File(content.as_bytes().to_vec()),
            verdict,
            &what,
        )
    }
    /// Run the steps while the harness keeps exchanging `a` and `b`.
    pub(crate) fn race(mut self, a: &str, b: &str, max_swaps: u64) -> B {
        self.case.race = Some(super::Race {
            a: a.into(),
            b: b.into(),
            max_swaps,
        });
        self
    }
    /// Send the steps as one assistant turn (a batch).
    pub(crate) fn batch(mut self) -> B {
        self.batch = true;
        self
    }
    /// The case's requirement is the numbered view format itself (numbering, width, the numbers
    /// of a range): a file view without line numbers does not meet it, and is FAIL (a MUST case)
    /// rather than other words ([`Step::tests_view_format`] on every step).
    pub(crate) fn tests_view_format(mut self) -> B {
        self.view_format = true;
        self
    }
    pub(crate) fn done(mut self) -> Case {
        if self.batch {
            self.case.turns = vec![self.case.steps.len()];
        }
        for step in &mut self.case.steps {
            step.tests_view_format = self.view_format;
        }
        self.case
    }
}

/// PASS when the reply is exactly `o`.
pub(crate) fn exact(o: Outcome) -> Accept {
    Accept {
        verdict: Verdict::Pass,
        reply: Reply::Exact(o),
        profiles: Vec::new(),
        note: "the documented reply".into(),
    }
}

/// PASS for any error reply (wording not graded).
pub(crate) fn refused() -> Accept {
    Accept {
        verdict: Verdict::Pass,
        reply: Reply::AnyError,
        profiles: Vec::new(),
        note: "refused (wording not graded)".into(),
    }
}

/// Any error reply earns `verdict`.
pub(crate) fn error_is(verdict: Verdict, note: &str) -> Accept {
    Accept {
        verdict,
        reply: Reply::AnyError,
        profiles: Vec::new(),
        note: note.into(),
    }
}

/// Any success reply earns `verdict`.
pub(crate) fn success_is(verdict: Verdict, note: &str) -> Accept {
    Accept {
        verdict,
        reply: Reply::AnySuccess,
        profiles: Vec::new(),
        note: note.into(),
    }
}

/// Exactly `o` earns `verdict`.
pub(crate) fn exact_is(verdict: Verdict, o: Outcome, note: &str) -> Accept {
    Accept {
        verdict,
        reply: Reply::Exact(o),
        profiles: Vec::new(),
        note: note.into(),
    }
}

/// Restrict an accept to some profiles.
pub(crate) fn only(mut a: Accept, profiles: &[Profile]) -> Accept {
    a.profiles = profiles.to_vec();
    a
}

/// A link target under the sandbox's `outside/` folder (`""` is the folder itself).
pub(crate) fn outside(rel: &str) -> LinkTo {
    LinkTo::Outside(rel.into())
}

/// A sentinel file that root cases check survives.
pub(crate) const SENTINEL: &str = "/memories/keep.txt";
/// The check text of every case where losing a file the command did not name means the store
/// (or part of it) was destroyed: UNSAFE wherever it is seen (issue 11: one effect, one verdict).
pub const STORE_SURVIVES: &str = "the store survives (data destroyed otherwise)";
/// Content of [`SENTINEL`].
pub(crate) const SENTINEL_TEXT: &str = "keep me\n";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_kebab_slugs_prefixed_by_their_file() {
        let cases = all();
        let mut seen = HashSet::new();
        let files = [
            "view",
            "create",
            "str_replace",
            "insert",
            "delete",
            "rename",
            "root",
            "path",
            "traversal",
            "symlink",
            "scenario",
            "hazard",
            "race",
            "batch",
            "malformed",
            "alias",
        ];
        for c in &cases {
            assert!(seen.insert(c.id.clone()), "duplicate id {}", c.id);
            assert!(files.contains(&c.category()), "{}", c.id);
            assert!(
                c.id.chars().all(|ch| ch.is_ascii_lowercase()
                    || ch.is_ascii_digit()
                    || "-/_.".contains(ch)),
                "{}",
                c.id
            );
            assert!(!c.steps.is_empty(), "{} has no step", c.id);
            assert!(!c.source.is_empty(), "{} has no source", c.id);
            assert!(
                c.requirement.contains("MUST") || c.requirement.contains("SHOULD"),
                "{}",
                c.id
            );
        }
    }

    // See: issue 11: missing line numbers are format "except in the cases that test view
    // format"; those cases declare it, and no other does.
    #[test]
    fn the_cases_that_test_the_view_format_declare_it_on_every_step() {
        let declared: Vec<String> = all()
            .into_iter()
            .filter(|c| c.steps.iter().any(|s| s.tests_view_format))
            .inspect(|c| assert!(c.steps.iter().all(|s| s.tests_view_format), "{}", c.id))
            .map(|c| c.id)
            .collect();
        assert_eq!(
            declared,
            [
                "view/file/trailing-newline",
                "view/file/empty",
                "view/file/view-range/middle",
            ]
        );
    }

    #[test]
    fn at_least_thirty_traversal_inputs_from_known_bugs() {
        let n = all()
            .iter()
            .filter(|c| {
                c.category() == "traversal" && c.source.iter().any(|s| s.starts_with("bug:"))
            })
            .count();
        assert!(n >= 30, "{n}");
    }

    #[test]
    fn every_command_and_outcome_kind_of_the_spec_is_covered() {
        use memcert_tool::text::OutcomeKind;
        let mut kinds = HashSet::new();
        for c in all() {
            for s in &c.steps {
                for a in &s.accept {
                    if let Reply::Exact(o) = &a.reply {
                        kinds.insert(o.kind());
                    }
                }
            }
        }
        // Every kind but the I/O fallback and the size limit (64 MiB files have no place in a
        // catalog run) has a case that accepts exactly that kind.
        for k in OutcomeKind::ALL {
            if matches!(k, OutcomeKind::IoError | OutcomeKind::FileTooLarge) {
                continue;
            }
            assert!(kinds.contains(&k), "no case expects {k:?}");
        }
    }
}

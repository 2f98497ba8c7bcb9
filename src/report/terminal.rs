//! The terminal report: a progress line on stderr while cases run (only on a terminal), then
//! UNSAFE, ERROR and FAIL cases in full (requirement, findings, input, expected, actual, diff),
//! NON-STRICT and INFO cases one line each, and a table of verdicts per category.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use crate::certify::{CaseRecord, Event, Reporter, Summary};
use crate::suite::verdict::Verdict;

/// Writes the human report to `out` when the run finishes.
pub struct Terminal<W: Write> {
    out: W,
    progress: bool,
    total: usize,
    done: usize,
    cases: Vec<CaseRecord>,
    target: String,
}

impl<W: Write> Terminal<W> {
    /// A report written to `out`; a progress line goes to stderr when it is a terminal.
    pub fn new(out: W) -> Self {
        Terminal {
            out,
            progress: std::io::stderr().is_terminal(),
            total: 0,
            done: 0,
            cases: Vec::new(),
            target: String::new(),
        }
    }

    /// Give back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Reporter for Terminal<W> {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started { target, total, .. } => {
                self.total = *total;
                self.target = target.to_string();
            }
            Event::CaseFinished(r) => {
                self.done += 1;
                if self.progress {
                    eprint!(
                        "\r\x1b[2K[{:>4}/{}] {:<10} {}",
                        self.done, self.total, r.verdict, r.id
                    );
                    if self.done == self.total {
                        eprint!("\r\x1b[2K");
                    }
                }
                self.cases.push((*r).clone());
            }
            Event::Finished(summary) => {
                let text = render(summary, &self.cases);
                let _ = self.out.write_all(text.as_bytes());
                let _ = self.out.flush();
            }
        }
    }
}

/// The whole report as text (no colours, stable order).
pub fn render(summary: &Summary, cases: &[CaseRecord]) -> String {
    let mut s = String::new();
    s.push_str(&format!("memcert {} certify\n", env!("CARGO_PKG_VERSION")));
    s.push_str(&format!("target:  {}\n", summary.target));
    s.push_str(&format!(
        "profile: {}{}    cases: {}\n",
        summary.profile,
        if summary.strict { " (strict)" } else { "" },
        summary.total
    ));
    for v in [Verdict::Unsafe, Verdict::Error, Verdict::Fail] {
        for c in cases.iter().filter(|c| c.verdict == v) {
            s.push('\n');
            s.push_str(&detail(c));
        }
    }
    for v in [Verdict::NonStrict, Verdict::Info, Verdict::Skipped] {
        let list: Vec<&CaseRecord> = cases.iter().filter(|c| c.verdict == v).collect();
        if list.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{v} ({})\n", list.len()));
        for c in list {
            let why = c.findings.first().map(|f| f.detail.as_str()).unwrap_or("");
            s.push_str(&format!("  {:<48} {}\n", c.id, why));
        }
    }
    s.push('\n');
    s.push_str(&table(cases));
    let bad: Vec<String> = [Verdict::Unsafe, Verdict::Error, Verdict::Fail]
        .iter()
        .filter_map(|v| {
            let n = summary.counts.get(v.as_str()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{n} {v}"))
        })
        .collect();
    if summary.certified {
        s.push_str("\nverdict: CERTIFIED (no UNSAFE, ERROR or FAIL)\n");
    } else {
        s.push_str(&format!("\nverdict: NOT CERTIFIED ({})\n", bad.join(", ")));
    }
    s
}

fn detail(c: &CaseRecord) -> String {
    let mut s = format!("{:<10} {}\n", c.verdict, c.id);
    s.push_str(&format!("  requirement: {}\n", c.requirement));
    s.push_str(&format!("  source:      {}\n", c.source.join(", ")));
    for f in &c.findings {
        s.push_str(&format!("  - {} [{}] {}\n", f.verdict, f.kind, f.detail));
    }
    for (i, step) in c.steps.iter().enumerate() {
        s.push_str(&format!("  step {} input: {}\n", i + 1, step.input));
        s.push_str(&indent("expected", &step.expected));
        match (&step.reply, &step.error) {
            (Some(r), _) => {
                let flag = if r.is_error { "is_error: true\n" } else { "" };
                let actual = format!("{flag}{}", r.text());
                s.push_str(&indent("actual", &actual));
                if step.verdict != Verdict::Pass
                    && (actual.contains('\n') || step.expected.contains('\n'))
                {
                    s.push_str("    diff (-expected +actual):\n");
                    let d = similar::TextDiff::from_lines(&step.expected, &actual);
                    for change in d.iter_all_changes() {
                        let sign = match change.tag() {
                            similar::ChangeTag::Delete => "-",
                            similar::ChangeTag::Insert => "+",
                            similar::ChangeTag::Equal => " ",
                        };
                        s.push_str(&format!("      {sign}{}", change.value().escape_debug()));
                        s.push('\n');
                    }
                }
            }
            (None, Some(e)) => s.push_str(&format!("    no reply: {e}\n")),
            (None, None) => {}
        }
    }
    s
}

fn indent(label: &str, text: &str) -> String {
    let shown: String = if text.chars().count() > 2000 {
        format!(
            "{}... ({} characters)",
            text.chars().take(2000).collect::<String>(),
            text.chars().count()
        )
    } else {
        text.to_owned()
    };
    let mut lines = shown.split('\n');
    let mut s = format!(
        "    {label:<9}{}\n",
        lines.next().unwrap_or("").escape_debug()
    );
    for l in lines {
        s.push_str(&format!("             {}\n", l.escape_debug()));
    }
    s
}

fn table(cases: &[CaseRecord]) -> String {
    let mut by: BTreeMap<&str, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for c in cases {
        *by.entry(c.category.as_str())
            .or_default()
            .entry(c.verdict)
            .or_default() += 1;
    }
    let cols = [
        Verdict::Pass,
        Verdict::NonStrict,
        Verdict::Info,
        Verdict::Fail,
        Verdict::Unsafe,
        Verdict::Error,
        Verdict::Skipped,
    ];
    let mut s = format!("{:<12}", "category");
    for v in cols {
        s.push_str(&format!("{:>11}", v.as_str()));
    }
    s.push('\n');
    let mut totals: BTreeMap<Verdict, usize> = BTreeMap::new();
    for (cat, counts) in &by {
        s.push_str(&format!("{cat:<12}"));
        for v in cols {
            let n = counts.get(&v).copied().unwrap_or(0);
            *totals.entry(v).or_default() += n;
            s.push_str(&format!("{n:>11}"));
        }
        s.push('\n');
    }
    s.push_str(&format!("{:<12}", "total"));
    for v in cols {
        s.push_str(&format!("{:>11}", totals.get(&v).copied().unwrap_or(0)));
    }
    s.push('\n');
    s
}

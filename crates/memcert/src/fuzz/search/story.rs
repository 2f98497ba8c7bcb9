//! A finding told in lines: the planted layout, each command with the model's reply and the
//! handler's, and the findings of its run. `memcert fuzz` prints it under its `FINDING n:`
//! line; [`crate::fuzz::differential`] panics with it.

use super::Found;
use crate::report::escape::terminal;

impl Found {
    /// The finding's story, one terminal line each (hidden characters escaped, replies on one
    /// line, cut to 200 characters):
    /// - `  planted: <setup entries>` (left out when nothing is planted);
    /// - per step: `  N. <input JSON>`, `     model:   <expected reply>`, `     handler: <reply>`
    ///   (an error reply begins `is_error: true⏎`; no reply: `(no reply: <why>)`);
    /// - per finding of the run: `  <VERDICT> <kind>: <detail>`.
    pub fn story(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let layout: Vec<String> = self
            .plan
            .case
            .setup
            .iter()
            .map(|s| terminal(&format!("{s:?}")))
            .collect();
        if !layout.is_empty() {
            lines.push(format!("  planted: {}", layout.join(", ")));
        }
        for (i, s) in self.record.steps.iter().enumerate() {
            lines.push(format!("  {}. {}", i + 1, terminal(&s.input.to_string())));
            lines.push(format!("     model:   {}", one_line(&s.expected)));
            let got = match (&s.reply, &s.error) {
                (Some(r), _) => {
                    let flag = if r.is_error { "is_error: true\n" } else { "" };
                    format!("{flag}{}", r.content.text().unwrap_or_default())
                }
                (None, Some(e)) => format!("(no reply: {e})"),
                (None, None) => "(not sent)".to_owned(),
            };
            lines.push(format!("     handler: {}", one_line(&got)));
        }
        for finding in &self.record.findings {
            lines.push(format!(
                "  {} {}: {}",
                finding.verdict,
                finding.kind,
                terminal(&finding.detail)
            ));
        }
        lines
    }
}

/// A reply on one line: escaped, newlines as `⏎`, cut to 200 characters (then `…`).
fn one_line(text: &str) -> String {
    let flat = text.replace('\n', "⏎");
    let cut: String = flat.chars().take(200).collect();
    let more = if cut.len() < flat.len() { "…" } else { "" };
    format!("{}{more}", terminal(&cut))
}

//! `memcert explain ID`: what a case id, a spec id (`spec:2.1/D3`, `wire:5`, `rule:8`) or a bug
//! id (`bug:B10`, or `bug:B10`) means, printed from the spec compiled into the binary: it needs no
//! repository and no network.

use std::io::Write as _;

use anyhow::{bail, Result};

use memcert::exit;
use memcert::suite::explain;

/// The flags of `memcert explain`.
#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// A case id (`view/dir/empty-root`, as `memcert cases` lists them at --level full), a spec
    /// id (`spec:2.1/D3`, `spec:3/S-4`, `wire:5`, `ctx:request`, `rule:8`) or a bug id
    /// (`bug:B10`, `bug:B10`).
    pub id: String,
}

/// `explain`: the text of what `id` names; an id that names nothing is a usage error (exit 2).
pub fn run(args: ExplainArgs) -> Result<i32> {
    match explain::explain(&args.id) {
        Some(text) => {
            // A closed stdout (`| head`) ends the text quietly.
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(text.as_bytes()).and_then(|()| o.flush());
            Ok(exit::PASS)
        }
        None => {
            let shown: String = args.id.chars().take(80).collect();
            let cut = if shown.len() < args.id.len() {
                "..."
            } else {
                ""
            };
            if let Some(hint) = explain::hint(&args.id) {
                bail!("{shown:?}{cut} names nothing; {hint}");
            }
            bail!(
                "{shown:?}{cut} is neither a case id (`memcert cases --level full` lists them) nor a spec or bug id (spec:2.1/D3, spec:3/S-4, bug:B10, wire:5, ctx:request, rule:8)"
            )
        }
    }
}

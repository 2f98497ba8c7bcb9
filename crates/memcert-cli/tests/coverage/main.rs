//! Coverage of the flaws the hand-written catalog missed (`fixtures/handlers/flawed/`, one
//! realistic flaw each): each fixture is caught at the default level and at `--level quick`
//! with exactly the verdicts its docstring names, and careful handlers still certify.
//!
//! - `hazards`: every command against every planted hazard (hard links, devices, huge files,
//!   FIFOs, sockets, links), unbounded reads (`bug:B17`);
//! - `spellings`: spellings that attack the check/use gap (trimmed, ignorable, normalised
//!   characters) and aliasing stores (`bug:B08`, `bug:B22`, `bug:B24`);
//! - `watch`: the outside watched during a case (transient writes, reads through links), and
//!   canaries beyond the base folder.

#[path = "../common/mod.rs"]
mod common;

mod hazards;
mod spellings;
mod watch;

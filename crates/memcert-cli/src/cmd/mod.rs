//! One module per subcommand: its flags (a `clap::Args` struct, flattening the shared groups
//! of [`crate::args`]) and its `run`, arguments in, exit code out. A new subcommand is a new
//! module here and one variant of [`crate::Cmd`].

pub mod cases;
pub mod certify;
pub mod explain;
pub mod fuzz;
pub mod mock_api;
pub mod payloads;
pub mod record;
pub mod snapshot;

//! The attack side: the traversal payload grammar and the filesystem scenarios a third party can
//! plant in the store (data, from `memcert-cases`), the sandbox a case runs in (canaries planted
//! around the store root) and the oracle that judges, from the filesystem and the replies alone,
//! whether anything escaped.

pub use memcert_cases::{payloads, scenarios};

pub mod oracle;
pub mod sandbox;
pub mod watch;

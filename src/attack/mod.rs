//! The attack side: the traversal payload grammar, the filesystem scenarios a third party can
//! plant in the store, the sandbox a case runs in (canaries planted around the store root) and the
//! oracle that judges, from the filesystem and the replies alone, whether anything escaped.

pub mod fuzz;
pub mod oracle;
pub mod payloads;
pub mod sandbox;
pub mod scenarios;
pub mod sequence;

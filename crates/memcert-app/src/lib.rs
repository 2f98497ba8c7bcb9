//! memcert-app: certify a whole app, unmodified, through a mock of the Messages API.
//!
//! - [`transcript`]: recorded conversations (a model's tool_use turns and the replies each accepts);
//! - [`mockapi`]: a mock Messages API replaying transcripts to an app;
//! - [`appcert`]: certify a whole app through the mock, one case per transcript;
//! - [`record`]: a pass-through proxy that records a real conversation as a transcript.
#![deny(missing_docs)]

pub mod appcert;
pub mod mockapi;
pub mod record;
pub mod transcript;

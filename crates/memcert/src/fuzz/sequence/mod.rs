//! Command sequences run on the reference handler and on its in-memory model side by side: the
//! input type of the `command_sequence` fuzz target and of the model property tests, the store
//! they run in, and the checks.
//!
//! A [`Sequence`] picks which entries of a fixed [`LAYOUT`] are planted in a fresh store (files,
//! a directory, symlinks pointing inside, outside to the canary folder and nowhere, a FIFO, a
//! hard link to an outside canary, a file over the size limit) and lists up to [`MAX_COMMANDS`]
//! commands whose paths are spelled with [`PathToken`]s, a small alphabet of the traversal
//! grammar (rule:15): the root, fixed names that collide with the planted ones, `.`,
//! `..`, percent-encoded dots and separators, backslash, look-alike dots and slashes, NUL, names
//! near the 255-byte limit, and an arbitrary raw string.
//!
//! [`Harness::run`] plants the layout in a [`Model`](crate::handler::model::Model) and makes the
//! store on disk hold the same (from what the last run left, known from its walk, or from an
//! empty store), sends every command to both and records a [`Trial`]; [`Trial::check`] then asserts, in order:
//! 1. no reply of the reference holds the canary token or a host path that the model's reply
//!    to the same command does not hold (the model knows neither, so those came from the
//!    inputs, e.g. a fuzzer that learnt the store's random name);
//! 2. every reply of the reference equals the model's (`is_error` and text);
//! 3. the store on disk (walked without following links) equals the model's tree, so no temp
//!    file is left behind and nothing was written through a link;
//! 4. nothing outside the store changed: inotify watches every folder and file around it
//!    (entries created, deleted or moved, files written); without inotify, a full walk is
//!    compared with the first one.
//!
//! Speed (the fuzz target's budget is about 2,000 inputs a second on one core): the sandbox is
//! made once per process; per input only what differs from the last run's store is removed and
//! planted; the outside is checked with one non-blocking inotify read, not a walk; the store is
//! walked once, by handle.
//!
//! The model is exact on tmpfs ([`DirSizes::Tmpfs`](crate::handler::model::DirSizes::Tmpfs)),
//! where the harness puts the store when `/dev/shm` exists; elsewhere directories are assumed to
//! keep the size of an empty one (true for ext4 directories whose entries fit one block). A
//! command the model does not cover ([`Model::uncovered`](crate::handler::model::Model::uncovered))
//! ends the sequence after its reply is compared, and the tree is then not compared.
//!
//! # Ambient authority
//! The harness lays out and inspects the sandbox by host path (`_unchecked`); the handler under
//! test only ever gets the store root.
//!
//! # Layout
//! `grammar` is the input ([`Sequence`] and its pieces, and `decode`); `layout` the entries a
//! sequence may plant ([`LAYOUT`]) and how the harness plants them; `harness` runs a sequence
//! on both sides ([`Harness`]); `trial` holds what a run did and the four checks ([`Trial`]);
//! `observe` walks the store and watches the outside; `seeds` searches for seed inputs.

mod grammar;
mod harness;
mod layout;
mod observe;
#[cfg(feature = "arbitrary")]
mod seeds;
mod trial;

#[cfg(feature = "arbitrary")]
pub use grammar::{decode, encode};
pub use grammar::{
    CommandSpec, PathSpec, PathToken, Sequence, TextSpec, ENCODED, LOOKALIKES, MAX_COMMANDS, NAMES,
    TEXTS,
};
pub use harness::{Harness, MAX_FILE_BYTES};
pub use layout::{Plant, LAYOUT};
#[cfg(feature = "arbitrary")]
pub use seeds::seed_inputs;
pub use trial::{Exchange, Trial};

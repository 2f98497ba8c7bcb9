//! Hostile handlers (`fixtures/handlers/hostile/`): the verdict memcert gives each, and what it
//! leaves behind (nothing: no process, no change outside its scratch, reports as written). One
//! module per concern.

#[path = "../common/mod.rs"]
mod common;

mod contain;

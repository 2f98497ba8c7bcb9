//! `memcert cases`: list the case ids of a level (after --cases/--exclude), one per line.

use anyhow::Result;

use memcert::exit;

use crate::args::SelectArgs;

/// `cases`: every case id the selection keeps, possibly none.
pub fn run(select: SelectArgs) -> Result<i32> {
    for c in select.matching()? {
        println!("{}", c.id);
    }
    Ok(exit::PASS)
}

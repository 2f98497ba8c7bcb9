//! Operations per second of memcert's reference handler, per operation.
//!
//! The workload is exactly the one in the docstring of `benches/python_sdk.py`, so the figures
//! compare one to one with the Python SDK's `BetaLocalFilesystemMemoryTool`:
//!
//! - one handler, `Reference::open_ambient(<tempdir>/memories, Profile::PythonSdk, fsync on)`,
//!   over a `tempfile::tempdir()` in the default temp dir (the filesystem `mkdtemp` uses), called
//!   through `Handler::apply` with a `serde_json::Value` (the layer of the SDK's `tool.call`);
//! - setup, untimed, through the handler: `bench/notes.txt` (100 lines), `bench/f00.txt` ..
//!   `f19.txt` (`x\n`), `bench/d0/` and `bench/d1/` with `a0.txt` .. `a4.txt` (`y\n`);
//! - then, in this order on the same store: view_file, view_dir, create, str_replace, insert
//!   (`ins.txt` created untimed just before), delete (each call preceded by an untimed create of
//!   `del.txt`), rename (`r0.txt` created untimed just before; r0 -> r1 on even i, back on odd),
//!   reject_traversal (`/memories/../secret.txt`, must be an error).
//!
//! `i` counts every call of an op, warm-up included, so the even/odd alternation and the
//! `new/{i}.txt` names hold however criterion groups its iterations. Inputs are built outside
//! the timed region (the Python side builds its dict before starting the clock). Every result's
//! `is_error` is checked, so a failing call can never pass for a fast one.
//!
//! The criterion iteration count is set by time, not fixed at N: for `insert`, which adds a line
//! to `ins.txt` on every call, the file ends up as long as the iteration count makes it (printed
//! at the end), and `bench/new/` holds as many files as `create` ran.
//!
//! Run: `cargo bench --bench handler`

use std::cell::RefCell;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use memcert::handler::reference::{Options, Reference};
use memcert::handler::Handler;
use memcert::text::Profile;
use serde_json::{json, Value};

/// 100 lines, `line {i} of the benchmark file\n` for i = 1..100.
fn hundred_lines() -> String {
    (1..=100)
        .map(|i| format!("line {i} of the benchmark file\n"))
        .collect()
}

/// Call the handler and abort unless `is_error` is what the op expects.
fn call(h: &RefCell<Reference>, input: &Value, expect_error: bool) {
    let r = h.borrow_mut().apply(input);
    assert_eq!(
        r.is_error,
        expect_error,
        "{input} returned {:?} (is_error {})",
        r.text(),
        r.is_error
    );
    criterion::black_box(r);
}

fn create_input(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

/// An untimed create through the handler.
fn create(h: &RefCell<Reference>, path: &str, text: &str) {
    call(h, &create_input(path, text), false);
}

fn view_input(path: &str) -> Value {
    json!({"command": "view", "path": path})
}

fn bench_handler(c: &mut Criterion) {
    let base = tempfile::Builder::new()
        .prefix("memcert-bench-")
        .tempdir()
        .expect("temp dir");
    let handler = Reference::open_ambient(
        &base.path().join("memories"),
        Profile::PythonSdk,
        Options {
            fsync: true,
            ..Options::default()
        },
    )
    .expect("open the store");
    let h = RefCell::new(handler);

    // ----- setup (untimed) -----
    let hundred = hundred_lines();
    create(&h, "/memories/bench/notes.txt", &hundred);
    for n in 0..20 {
        create(&h, &format!("/memories/bench/f{n:02}.txt"), "x\n");
    }
    for d in ["d0", "d1"] {
        for n in 0..5 {
            create(&h, &format!("/memories/bench/{d}/a{n}.txt"), "y\n");
        }
    }

    let mut g = c.benchmark_group("handler");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));

    // ----- view_file -----
    let input = view_input("/memories/bench/notes.txt");
    g.bench_function("view_file", |b| b.iter(|| call(&h, &input, false)));

    // ----- view_dir -----
    let input = view_input("/memories/bench");
    g.bench_function("view_dir", |b| b.iter(|| call(&h, &input, false)));

    // ----- create: /memories/bench/new/{i}.txt, 1024 bytes of `a` -----
    let kib = "a".repeat(1024);
    let mut i: u64 = 0;
    g.bench_function("create", |b| {
        b.iter_batched(
            || {
                let input = create_input(&format!("/memories/bench/new/{i}.txt"), &kib);
                i += 1;
                input
            },
            |input| call(&h, &input, false),
            BatchSize::SmallInput,
        )
    });
    let created = i;

    // ----- str_replace: `line 50 of` <-> `LINE 50 of` on notes.txt -----
    let swap = |old: &str, new: &str| {
        json!({
            "command": "str_replace",
            "path": "/memories/bench/notes.txt",
            "old_str": old,
            "new_str": new,
        })
    };
    let swaps = [
        swap("line 50 of", "LINE 50 of"),
        swap("LINE 50 of", "line 50 of"),
    ];
    let mut i: u64 = 0;
    g.bench_function("str_replace", |b| {
        b.iter(|| {
            call(&h, &swaps[(i % 2) as usize], false);
            i += 1;
        })
    });

    // ----- insert: `inserted line` at line 1 of ins.txt -----
    create(&h, "/memories/bench/ins.txt", &hundred);
    let input = json!({
        "command": "insert",
        "path": "/memories/bench/ins.txt",
        "insert_line": 1,
        "insert_text": "inserted line",
    });
    let mut inserted: u64 = 0;
    g.bench_function("insert", |b| {
        b.iter(|| {
            call(&h, &input, false);
            inserted += 1;
        })
    });

    // ----- delete: del.txt, created (untimed) before each call -----
    let make = create_input("/memories/bench/del.txt", "x");
    let input = json!({"command": "delete", "path": "/memories/bench/del.txt"});
    g.bench_function("delete", |b| {
        b.iter_batched(
            || call(&h, &make, false),
            |()| call(&h, &input, false),
            BatchSize::PerIteration,
        )
    });

    // ----- rename: r0.txt <-> r1.txt -----
    create(&h, "/memories/bench/r0.txt", "x");
    let mv = |old: &str, new: &str| {
        json!({
            "command": "rename",
            "old_path": format!("/memories/bench/{old}.txt"),
            "new_path": format!("/memories/bench/{new}.txt"),
        })
    };
    let moves = [mv("r0", "r1"), mv("r1", "r0")];
    let mut i: u64 = 0;
    g.bench_function("rename", |b| {
        b.iter(|| {
            call(&h, &moves[(i % 2) as usize], false);
            i += 1;
        })
    });

    // ----- reject_traversal: must be refused -----
    let input = view_input("/memories/../secret.txt");
    g.bench_function("reject_traversal", |b| b.iter(|| call(&h, &input, true)));

    g.finish();

    eprintln!(
        "store after the run: bench/new/ holds {created} files; ins.txt has {} lines",
        100 + inserted
    );
    drop(h);
    base.close().expect("remove the temp dir");
}

criterion_group!(benches, bench_handler);
criterion_main!(benches);

#!/usr/bin/env node
// The `memcert` launcher: runs the binary of the platform package for this machine
// (memcert-<platform>-<arch>, an optional dependency), with the same arguments, standard
// streams, exit status and signals. Only linux-x64 is built; elsewhere it says which package
// is missing.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const pkg = `memcert-${process.platform}-${process.arch}`;
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "memcert");
} catch {
  process.stderr.write(
    `memcert: error: the platform package ${pkg} is not installed; memcert is built for linux-x64 ` +
      `only (install memcert-linux-x64 with memcert, and do not omit optional dependencies)\n`,
  );
  process.exit(2);
}
const run = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  process.stderr.write(`memcert: error: cannot run ${bin}: ${run.error.message}\n`);
  process.exit(2);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status ?? 2);

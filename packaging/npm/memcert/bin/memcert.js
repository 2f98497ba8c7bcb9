#!/usr/bin/env node
// The `memcert` launcher: runs the binary of the platform package for this machine
// (memcert-<platform>-<arch>, an optional dependency), with the same arguments, standard
// streams and exit status. SIGTERM and SIGHUP sent to the launcher are passed on to memcert
// (which then stops its handler, writes its reports and exits 130); SIGINT is not passed on but
// ignored here, because Ctrl-C reaches memcert itself (same process group) and a second signal
// would make memcert exit at once. A memcert killed by a signal kills the launcher with it. Only linux-x64 is built; elsewhere it says
// which package is missing.
"use strict";
const { spawn } = require("node:child_process");
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
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
process.on("SIGINT", () => {});
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (e) => {
  process.stderr.write(`memcert: error: cannot run ${bin}: ${e.message}\n`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 2);
});

// bugbout's Mocha reporter: runs in Mocha's main process (bugbout runs the test files in
// Mocha's parallel worker processes, from Mocha 8 on) and sends every test's outcome, each file that
// failed to load, and the tally through the signed channel.
//
// In parallel, a file that cannot load rejects its worker's run with an error that names no file,
// which Mocha reports as an "Uncaught error outside test suite": the runner's file runner is wrapped
// so that such an error carries the file it came from.
"use strict";
const { relative } = require("node:path");
const { message, send } = require("./channel.cjs");

const LOADING = Symbol("bugbout file");

function named(runner) {
  const files = runner._createFileRunner;
  if (typeof files !== "function") return;
  runner._createFileRunner = function (...args) {
    const run = files.apply(this, args);
    return async (file) => {
      try {
        return await run(file);
      } catch (error) {
        if (error !== null && typeof error === "object") error[LOADING] = file;
        throw error;
      }
    };
  };
}

class BugboutReporter {
  constructor(runner) {
    named(runner);
    const tally = { tests: 0, files: 0 };
    const titles = (test) => {
      if (typeof test.titlePath === "function") return test.titlePath();
      const path = [test.title];
      for (let suite = test.parent; suite && !suite.root; suite = suite.parent) path.unshift(suite.title);
      return path;
    };
    const where = (test) => relative(process.cwd(), test.file ?? "");
    const report = (test, outcome, error) => {
      send({ test: [where(test), titles(test)], outcome, message: message(error) });
      tally.tests += 1;
    };
    runner.on("pass", (test) => report(test, "passed"));
    runner.on("pending", (test) => report(test, "skipped"));
    runner.on("fail", (test, error) => {
      const failure = `${test.title}: ${message(error)}`;
      const loading = error?.[LOADING];
      if (test.type === "test") report(test, "failed", error);
      else if (test.file) send({ file: where(test), error: failure });
      else if (loading) send({ file: relative(process.cwd(), loading), error: message(error) });
      else send({ unhandled: failure });
    });
    runner.once("end", () => send({ end: tally }));
  }
}

module.exports = BugboutReporter;

// bugbout's Mocha reporter: runs in Mocha's main process (bugbout runs the test files in
// Mocha's parallel worker processes, from Mocha 8 on) and sends every test's outcome, each file that
// failed to load, and the tally through the signed channel.
"use strict";
const { relative } = require("node:path");
const { message, send } = require("./channel.cjs");

class BugboutReporter {
  constructor(runner) {
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
      if (test.type === "test") report(test, "failed", error);
      else if (test.file) send({ file: where(test), error: failure });
      else send({ unhandled: failure });
    });
    runner.once("end", () => send({ end: tally }));
  }
}

module.exports = BugboutReporter;

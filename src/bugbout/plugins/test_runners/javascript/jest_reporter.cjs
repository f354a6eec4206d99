// bugbout's Jest reporter: runs in Jest's main process (bugbout runs the tests in Jest's
// worker processes) and sends every test's outcome, each file that failed to run, and
// the tally through the signed channel.
"use strict";
const { relative } = require("node:path");
const { message, send } = require("./channel.cjs");

const OUTCOMES = { passed: "passed", failed: "failed" };

class BugboutReporter {
  constructor(globalConfig) {
    this.root = globalConfig?.rootDir ?? process.cwd();
  }

  onRunComplete(contexts, results) {
    const tally = { tests: 0, files: 0, jest: results.numTotalTests };
    for (const file of results.testResults) {
      const path = relative(process.cwd(), file.testFilePath);
      tally.files += 1;
      if (file.testExecError) send({ file: path, error: message(file.testExecError) });
      for (const test of file.testResults) {
        const outcome = OUTCOMES[test.status] ?? "skipped";
        const titles = [...test.ancestorTitles, test.title];
        send({ test: [path, titles], outcome, message: message(test.failureMessages?.[0]) });
        tally.tests += 1;
      }
    }
    send({ end: tally });
  }
}

module.exports = BugboutReporter;

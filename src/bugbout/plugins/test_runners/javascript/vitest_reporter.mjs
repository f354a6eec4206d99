// bugbout's Vitest reporter: runs in Vitest's main process (tests run in its workers)
// and sends every test's outcome, each file's load error, the unhandled errors and the
// tally through the signed channel.
import { createRequire } from "node:module";
import { relative } from "node:path";

// Required, not imported: Vitest before 0.3x loads reporters through its own module
// runner, which does not import CommonJS, and gives this module a URL under the project's
// root (Vitest 0.22: root + this file's path), so the channel is required by the path
// bugbout gives.
const channel = process.env.BUGBOUT_CHANNEL ?? "./channel.cjs";
const { message, send } = createRequire(import.meta.url)(channel);

const STATES = { pass: "passed", fail: "failed", skip: "skipped", todo: "skipped" };

function walk(task, titles, file, tally) {
  for (const child of task.tasks ?? []) {
    const path = [...titles, child.name];
    if (child.type === "suite") {
      walk(child, path, file, tally);
      continue;
    }
    const state = child.result?.state ?? (child.mode === "run" ? "fail" : "skip");
    const outcome = STATES[state] ?? (child.mode === "run" ? "failed" : "skipped");
    const error = child.result?.errors?.[0];
    send({ test: [file, path], outcome, message: message(error) });
    tally.tests += 1;
  }
}

export default class BugboutReporter {
  onInit(vitest) {
    this.root = vitest.config?.root ?? process.cwd();
    this.reported = false;
  }

  onTestRunEnd(modules, errors) {
    this.report(modules.map((module) => module.task), errors);
  }

  onFinished(files, errors) {
    this.report(files ?? [], errors ?? []);
  }

  report(files, errors) {
    if (this.reported) return;
    this.reported = true;
    const tally = { tests: 0, files: 0 };
    for (const file of files) {
      const path = relative(this.root ?? process.cwd(), file.filepath);
      tally.files += 1;
      const failure = file.result?.errors?.[0];
      if (failure && !(file.tasks ?? []).length) send({ file: path, error: message(failure) });
      walk(file, [], path, tally);
    }
    for (const error of errors ?? []) send({ unhandled: message(error) });
    send({ end: tally });
  }
}

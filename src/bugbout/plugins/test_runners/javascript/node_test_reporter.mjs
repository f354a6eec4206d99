// bugbout's reporter for `node --test`: runs in the runner's main process (each test
// file runs in a child process of its own) and sends every test's outcome, each file the
// main process had to report itself (it crashed or ended before reporting its tests),
// and the tally through the signed channel. A file that fails on its own says why on its
// stderr: its first error line is the file's error.
import { relative } from "node:path";
import channel from "./channel.cjs";

const { message, send } = channel;
const ERROR = /^(?:[A-Z]\w*)?Error\b/;

export default async function* bugbout(source) {
  const stacks = new Map();
  const tally = { tests: 0, files: 0 };
  const errors = new Map();
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ? relative(process.cwd(), data.file) : "";
    if (event.type === "test:stderr") {
      const line = String(data.message ?? "").split("\n").find((text) => ERROR.test(text.trim()));
      if (line && !errors.has(file)) errors.set(file, line.trim());
    } else if (event.type === "test:start") {
      const stack = stacks.get(file) ?? [];
      stack.length = data.nesting;
      stack.push({ name: data.name, children: 0 });
      if (data.nesting > 0 && stack[data.nesting - 1]) stack[data.nesting - 1].children += 1;
      stacks.set(file, stack);
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      const stack = stacks.get(file) ?? [];
      const own = stack[data.nesting];
      const whole = data.nesting === 0 && data.name === data.file;
      if (whole) {
        tally.files += 1;
        const failure = errors.get(file) ?? message(data.details?.error);
        send({ file, error: event.type === "test:fail" ? failure : "", ended: event.type === "test:pass" });
      } else if (data.details?.type !== "suite" && !(own && own.children)) {
        const titles = stack.slice(0, data.nesting).map((entry) => entry.name);
        const skipped = data.skip !== undefined || data.todo !== undefined;
        const outcome = skipped ? "skipped" : event.type === "test:pass" ? "passed" : "failed";
        const failure = event.type === "test:fail" ? message(data.details?.error?.cause ?? data.details?.error) : "";
        send({ test: [file, [...titles, data.name]], outcome, message: failure });
        tally.tests += 1;
      }
      stack.length = data.nesting;
    }
  }
  send({ end: tally });
}
